import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { mergeFiles } from '../resource/merge-files.js';
import { MergeInputError } from '../errors.js';
import { parseStream, parseYamlDocument, parseYamlStream, stringifyYaml, yamlDocumentValue } from './parse.js';

const configMap = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n${data}`;

function errorOf(fn: () => unknown): MergeInputError {
  try {
    fn();
  } catch (error) {
    if (error instanceof MergeInputError) return error;
    throw error;
  }
  throw new Error('expected a MergeInputError');
}

describe('duplicate map keys', () => {
  it('are reported with the file, the document and the line of both occurrences', () => {
    const text = `kind: A\n---\n${configMap('  a: "1"\n  b: "2"\n  a: "3"\n')}`;
    const error = errorOf(() => parseStream(text, 'pkg/cm.yaml', 'local'));
    expect(error.code).toBe('invalid-yaml');
    expect(error.message).toBe('pkg/cm.yaml (local): document 1: invalid YAML (line 10): map key "a" appears twice (first on line 8)');
    expect(error.side).toBe('local');
  });

  it('are found in nested and flow maps, and in maps inside lists', () => {
    expect(errorOf(() => parseStream('spec:\n  x: {p: 1, q: 2, p: 3}\n', 'f.yaml')).message).toMatch(/line 2\): map key "p" appears twice/);
    expect(errorOf(() => parseStream('items:\n- name: a\n  v: 1\n  v: 2\n', 'f.yaml')).message).toMatch(
      /line 4\): map key "v" appears twice \(first on line 3\)/,
    );
  });

  it('are keys with equal values, as YAML 1.1 reads them (yes and true are one key)', () => {
    expect(errorOf(() => parseStream('yes: 1\ntrue: 2\n', 'f.yaml')).message).toMatch(/line 2\): map key "true" appears twice/);
  });

  it('in one map only: the same key in sibling maps is fine', () => {
    expect(parseStream('a: {k: 1}\nb: {k: 2}\n', 'f.yaml').documents).toHaveLength(1);
  });

  it('stop a merge before anything is merged, naming the side', () => {
    const good = configMap('  a: "1"\n');
    const bad = configMap('  a: "1"\n  a: "2"\n');
    const error = errorOf(() =>
      mergeFiles({
        origin: [{ path: 'cm.yaml', text: good }],
        upstream: [{ path: 'cm.yaml', text: bad }],
        local: [{ path: 'cm.yaml', text: good }],
      }),
    );
    expect([error.file, error.side, error.message]).toEqual([
      'cm.yaml',
      'upstream',
      'cm.yaml (upstream): document 0: invalid YAML (line 7): map key "a" appears twice (first on line 6)',
    ]);
  });
});

describe('a ConfigMap of many keys', () => {
  it('merges local and upstream edits, additions and deletions throughout', () => {
    const keys = 5000;
    const text = (value: (i: number) => string | undefined, extra: (i: number) => boolean) => {
      const lines: string[] = [];
      for (let i = 0; i < keys; i++) {
        const v = value(i);
        if (v !== undefined) lines.push(`  k${i}: "${v}"`);
        if (extra(i)) lines.push(`  k${i}-new: "n${i}"`);
      }
      return configMap(`${lines.join('\n')}\n`);
    };
    const origin = text(
      (i) => `v${i}`,
      () => false,
    );
    const upstream = text(
      (i) => (i % 97 === 0 ? undefined : i % 10 === 0 ? `up${i}` : `v${i}`),
      (i) => i % 20 === 5,
    );
    const local = text(
      (i) => (i % 89 === 0 ? undefined : i % 15 === 0 ? `loc${i}` : `v${i}`),
      (i) => i % 50 === 7,
    );
    const result = mergeFiles({
      origin: [{ path: 'cm.yaml', text: origin }],
      upstream: [{ path: 'cm.yaml', text: upstream }],
      local: [{ path: 'cm.yaml', text: local }],
    });
    const expected: string[] = [];
    for (let i = 0; i < keys; i++) {
      // local's deletion of a value upstream changed does not stick (upstream wins, as in kpt)
      const deleted = i % 97 === 0 || (i % 89 === 0 && i % 10 !== 0);
      if (!deleted) expected.push(`  k${i}: "${i % 10 === 0 ? `up${i}` : i % 15 === 0 ? `loc${i}` : `v${i}`}"`);
      // both added after k${i}: local's own addition first, then upstream's after its predecessor
      if (i % 50 === 7) expected.push(`  k${i}-new: "n${i}"`);
      if (i % 20 === 5) expected.push(`  k${i}-new: "n${i}"`);
    }
    expect(result.files[0]!.text).toBe(configMap(`${expected.join('\n')}\n`));
    // both changed k30 (and every 30th value): upstream won, and the conflict says so
    expect(result.conflicts.find((c) => c.path === '.data.k30')).toMatchObject({
      winner: 'upstream',
      values: { origin: 'v30', upstream: 'up30', local: 'loc30' },
    });
    expect(result.conflicts.filter((c) => c.path.startsWith('.data.k')).length).toBeGreaterThan(100);
  });
});

describe('the one parse of kdelta (parseYamlStream, parseYamlDocument)', () => {
  it('reports a key written twice as an error of its document, with both lines, without throwing', () => {
    const docs = parseYamlStream('a: 1\n---\nb: 1\nc: 2\nb: 3\n');
    expect(docs.map((d) => d.errors.length)).toEqual([0, 1]);
    expect(docs[1]!.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY', message: 'map key "b" appears twice (first on line 3)' });
    expect(parseYamlDocument('x: {k: 1, k: 2}\n').errors[0]?.message).toBe('map key "k" appears twice (first on line 1)');
  });

  it('reads scalars as Kubernetes does (YAML 1.1), and "." or "e5" as strings', () => {
    const v = parseYamlDocument('a: yes\nb: "yes"\nc: 0644\nd: .\ne: e5\nf: 1.5\ng: 2001-01-01\nh: y\n').toJS();
    expect(v).toEqual({ a: true, b: 'yes', c: 420, d: '.', e: 'e5', f: 1.5, g: '2001-01-01', h: true });
  });

  it('creates plain maps for a missing path (never !!omap) and prints strings so they read back the same', () => {
    const doc = parseYamlDocument('kind: Kptfile\n');
    doc.setIn(['status', 'conditions'], doc.createNode([{ type: 'x' }]));
    expect(doc.toString()).toBe('kind: Kptfile\nstatus:\n  conditions:\n    - type: x\n');
    const values = { a: 'yes', b: 'y', c: '0644', d: 'on', e: '.' };
    expect(parseYamlDocument(stringifyYaml(values)).toJS()).toEqual(values);
  });

  it('refuses an alias bomb when the value is read, naming the file and the document', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [i, n] of [...'bcdefghi'].entries()) lines.push(`${n}: &${n} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`);
    const doc = parseYamlStream(`kind: A\n---\n${lines.join('\n')}\n`)[1]!;
    expect(doc.errors).toEqual([]);
    const error = errorOf(() => yamlDocumentValue(doc, 'pkg/bomb.yaml', 1));
    expect(error.message).toMatch(/^pkg\/bomb\.yaml: document 1: refused: its aliases expand too far/);
  });
});

describe('the memory a parsed document holds', () => {
  // a full collection, so that what the heap holds after it is what the documents keep alive
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heldBy = (parse: () => unknown): { held: number; kept: unknown } => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept = parse();
    gc();
    return { held: process.memoryUsage().heapUsed - before, kept };
  };
  const filler = 'x'.repeat(170);
  const values = (open: string, close: string) =>
    configMap(Array.from({ length: 4000 }, (_, i) => `  key-${i}: ${open}value ${i} ${filler}${close}\n`).join(''));

  it.each([
    ['double-quoted', '"', '"'],
    ['single-quoted', "'", "'"],
    ['plain', '', ''],
    ['block', '|-\n    ', ''],
  ])('is a small multiple of its text, whatever the quoting of its values (%s)', (_, open, close) => {
    const text = values(open, close);
    const { held, kept } = heldBy(() => parseYamlStream(text));
    // each value is a node of a few hundred bytes beside its text; a string kept as the chain of
    // pieces yaml built it from (a double-quoted one, a character at a time) held 30 times the text
    expect(held / text.length).toBeLessThan(8);
    expect((kept as ReturnType<typeof parseYamlStream>)[0]!.toJS().data['key-7']).toBe(`value 7 ${filler}`);
  });
});
