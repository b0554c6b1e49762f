import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FALLBACK_MERGE_KEYS, KYAML_INFERRED_KEYS, inferListKeys } from './fallback.js';

describe('FALLBACK_MERGE_KEYS', () => {
  it("are seed 001's associative keys, in kyaml's precedence order, frozen", () => {
    expect(FALLBACK_MERGE_KEYS).toEqual(['mountPath', 'devicePath', 'ip', 'type', 'topologyKey', 'name', 'containerPort']);
    expect(Object.isFrozen(FALLBACK_MERGE_KEYS)).toBe(true);
    expect(KYAML_INFERRED_KEYS).toEqual(['name']);
  });
});

describe('inferListKeys', () => {
  it('kyaml elementTestCases/16: containers in which every element has a name are keyed by name', () => {
    const fixture = parse(readFileSync(new URL('./__fixtures__/kyaml-element-schemas.yaml', import.meta.url), 'utf8')) as {
      cases: { id: string; original: string; updated: string; local: string }[];
    };
    const c = fixture.cases.find((x) => x.id === 'elementTestCases/16');
    if (!c) throw new Error('fixture case missing');
    type Doc = { spec: { template: { spec: { containers: unknown[] } } } };
    const lists = [c.original, c.updated, c.local].map((t) => (parse(t) as Doc).spec.template.spec.containers);
    expect(inferListKeys(lists)).toEqual(['name']);
    expect(inferListKeys(lists, KYAML_INFERRED_KEYS)).toEqual(['name']);
  });

  it('takes the first key, in precedence order, that every element has', () => {
    const mounts = [
      { name: 'data', mountPath: '/data' },
      { name: 'logs', mountPath: '/logs' },
    ];
    expect(inferListKeys([mounts])).toEqual(['mountPath']);
    expect(inferListKeys([mounts], KYAML_INFERRED_KEYS)).toEqual(['name']);
    expect(inferListKeys([[{ containerPort: 80 }, { containerPort: 443, name: 'https' }]])).toEqual(['containerPort']);
  });

  it('is associative when some source has a key, even if another source has elements without it', () => {
    expect(inferListKeys([[{ name: 'a' }], [{ name: 'a' }, { image: 'x' }]])).toEqual(['name']);
  });

  it('is not associative for scalar elements, elements without any key, or mixed elements', () => {
    expect(inferListKeys([['a', 'b']])).toBeUndefined();
    expect(inferListKeys([[{ image: 'x' }]])).toBeUndefined();
    expect(inferListKeys([[{ name: 'a' }, 'b']])).toBeUndefined();
    expect(inferListKeys([[{ name: 'a' }, ['name']]])).toBeUndefined();
    expect(inferListKeys([])).toBeUndefined();
  });

  it('skips empty and absent lists (kyaml would call [] associative and then find no key)', () => {
    expect(inferListKeys([[], []])).toBeUndefined();
    expect(inferListKeys([[], [{ name: 'a' }]])).toEqual(['name']);
    expect(inferListKeys([undefined as unknown as unknown[], [{ name: 'a' }]])).toEqual(['name']);
  });

  it('gives no key when sources disagree (kyaml: "conflicting merge keys")', () => {
    expect(inferListKeys([[{ name: 'a' }], [{ type: 'Ready', name: 'a' }]])).toBeUndefined();
  });

  it("keeps Kptfile status conditions atomic with kyaml's candidates, keyed by type with seed 001's", () => {
    const conditions = [{ type: 'Ready', status: 'True' }];
    expect(inferListKeys([conditions], KYAML_INFERRED_KEYS)).toBeUndefined();
    expect(inferListKeys([conditions])).toEqual(['type']);
  });

  it('counts a key present with a null value, and reads Map elements', () => {
    expect(inferListKeys([[{ name: null }]])).toEqual(['name']);
    expect(inferListKeys([[new Map([['ip', '10.0.0.1']])]])).toEqual(['ip']);
  });

  it('property: the answer does not depend on the order of sources, and the key is one every element of some source has', () => {
    const element = fc.oneof(
      fc.dictionary(fc.constantFrom('name', 'type', 'ip', 'image', 'mountPath'), fc.string({ maxLength: 2 }), { maxKeys: 3 }),
      fc.string({ maxLength: 2 }),
    );
    const lists = fc.array(fc.array(element, { maxLength: 4 }), { maxLength: 3 });
    fc.assert(
      fc.property(lists, (ls) => {
        const keys = inferListKeys(ls);
        expect(inferListKeys([...ls].reverse())).toEqual(keys);
        if (keys === undefined) return;
        const [key] = keys as [string];
        expect(FALLBACK_MERGE_KEYS).toContain(key);
        expect(ls.some((l) => l.length > 0 && l.every((e) => typeof e === 'object' && e !== null && key in e))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
