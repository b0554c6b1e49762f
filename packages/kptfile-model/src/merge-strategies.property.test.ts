/**
 * More merge laws for Kptfiles (beside merge.property.test.ts): byte for byte, the strategies and
 * the pin, over generated pipelines — the laws
 * merge-core's resources obey (merge.property.test.ts there), since the Kptfile goes through the
 * same walker. Pipelines are generated both ways seed 000 identifies functions: every function
 * named, or none named (identity derived from the image without its tag, registry ports included).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parse, stringify } from 'yaml';
import { mergeKptfile } from './merge.js';

const numRuns = Number(process.env.KDELTA_PROPERTY_RUNS ?? 100);

const IMAGES = ['gcr.io/kpt-fn/set-labels', 'gcr.io/kpt-fn/set-namespace', 'localhost:5000/fns/apply-setters', 'ghcr.io/acme/fn'];

const fnArb = (named: boolean) =>
  fc
    .record({
      image: fc.constantFrom(...IMAGES),
      tag: fc.constantFrom('v0.1', 'v0.2', 'v1'),
      configMap: fc.option(fc.dictionary(fc.constantFrom('app', 'tier', 'ns'), fc.constantFrom('x', 'y', 'on')), {
        nil: undefined,
      }),
    })
    .map(({ image, tag, configMap }) => prune({ name: named ? image.split('/').pop() : undefined, image: `${image}:${tag}`, configMap }));

/** Functions with distinct images, so both identities are unique within a list. */
const pipelineArb = (named: boolean) =>
  fc.record({
    mutators: fc.uniqueArray(fnArb(named), { selector: (f) => f.image.split(':v')[0], maxLength: 3 }),
    validators: fc.uniqueArray(fnArb(named), { selector: (f) => f.image.split(':v')[0], maxLength: 2 }),
  });

const kptfileArb = (named: boolean) =>
  fc
    .record({ pipeline: pipelineArb(named), description: fc.option(fc.constantFrom('web', 'api'), { nil: undefined }) })
    .map(({ pipeline, description }) =>
      prune({
        apiVersion: 'kpt.dev/v1',
        kind: 'Kptfile',
        metadata: { name: 'app' },
        info: description ? { description } : undefined,
        pipeline: {
          mutators: pipeline.mutators.length > 0 ? pipeline.mutators : undefined,
          validators: pipeline.validators.length > 0 ? pipeline.validators : undefined,
        },
      }),
    );

/** Three Kptfiles whose functions are all named, or all unnamed. */
const triple = fc.boolean().chain((named) => fc.tuple(kptfileArb(named), kptfileArb(named), kptfileArb(named)));

/** Drops undefined fields and empty maps, as a written Kptfile would not have them. */
function prune<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0 ? undefined : v,
  ) as T;
}

const text = (value: unknown) => stringify(value, { version: '1.1' });
const read = (yaml: string) => parse(yaml, { version: '1.1' }) as unknown;

function merge(o: unknown, u: unknown, l: unknown | string, strategy: 'upstream-wins' | 'local-wins' | 'fail' = 'upstream-wins') {
  return mergeKptfile({ origin: text(o), upstream: text(u), local: typeof l === 'string' ? l : text(l) }, { strategy });
}

describe('Kptfile merge laws', () => {
  test('merge(o, u, o) = u: an untouched copy becomes upstream, pipeline order included', () => {
    fc.assert(
      fc.property(triple, ([o, u]) => {
        // as data, empty sections aside: a section upstream deleted stays as `{}` (kpt's TestUpdateKptfile)
        expect(prune(read(merge(o, u, o).text))).toEqual(u);
      }),
      { numRuns },
    );
  });

  test('merge(o, o, l) = l, byte for byte: nothing new upstream changes nothing', () => {
    fc.assert(
      fc.property(triple, ([o, , l]) => {
        expect(merge(o, o, l).text).toBe(text(l));
      }),
      { numRuns },
    );
  });

  test('with local-wins, a function field local changed keeps local’s value', () => {
    fc.assert(
      fc.property(triple, ([o, u, l]) => {
        const merged = read(merge(o, u, l, 'local-wins').text);
        const before = leaves(o);
        for (const [path, value] of leaves(l)) {
          if (before.get(path) === value) continue;
          expect(leaves(merged).get(path), path).toBe(value);
        }
      }),
      { numRuns },
    );
  });

  test("a pinned function field (# kdelta:local) always equals local's, under every strategy", () => {
    fc.assert(
      fc.property(triple, fc.constantFrom('upstream-wins' as const, 'local-wins' as const, 'fail' as const), ([o, u, l], strategy) => {
        const local = text(l);
        // Pin the first function's image, when local has a function.
        const line = /^( +(?:- )?image: .*)$/m;
        if (!line.test(local)) return;
        const pinned = local.replace(line, '$1 # kdelta:local');
        const result = merge(o, u, pinned, strategy);
        expect(result.text).toContain('# kdelta:local');
        const first = (l as { pipeline?: Record<string, { image: string }[]> }).pipeline;
        const list = first?.mutators ? 'mutators' : 'validators';
        const image = first?.[list]?.[0]?.image;
        const images = ((read(result.text) as { pipeline?: Record<string, { image: string }[]> }).pipeline?.[list] ?? []).map(
          (f) => f.image,
        );
        expect(images).toContain(image);
      }),
      { numRuns },
    );
  });
});

/**
 * Leaf values of a Kptfile's functions by a path that names each function by its identity
 * (name, else image without tag), so that a function moved in the list keeps its paths.
 */
function leaves(kptfile: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const pipeline = (kptfile as { pipeline?: Record<string, Record<string, unknown>[]> }).pipeline ?? {};
  for (const [list, fns] of Object.entries(pipeline)) {
    for (const fn of fns ?? []) {
      const id = (fn.name as string | undefined) ?? String(fn.image).split(':v')[0];
      for (const [k, v] of Object.entries(fn)) {
        if (v && typeof v === 'object') for (const [ck, cv] of Object.entries(v)) out.set(`${list}[${id}].${k}.${ck}`, cv);
        else out.set(`${list}[${id}].${k}`, v);
      }
    }
  }
  return out;
}
