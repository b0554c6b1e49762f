import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { MergeInputError } from '../errors.js';
import { yamlParseOptions } from '../yaml/parse.js';
import { mergeFiles, mergeFilesTraced, type SourceFile } from './merge-files.js';
import { identifyScanned } from './identity.js';
import { scanEachDocument } from '../yaml/scan.js';

const casesDir = fileURLToPath(new URL('../__fixtures__/cases/', import.meta.url));

function readTree(dir: string): SourceFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((path) => ({ path, text: readFileSync(join(dir, path), 'utf8') }));
}

// Table-driven: each folder holds origin/, upstream/, local/, expected/ and a case.yaml naming
// the rule (and the conflicts the merge must report).
describe('mergeFiles cases', () => {
  for (const name of readdirSync(casesDir).sort()) {
    const dir = join(casesDir, name);
    const spec = parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as { rule: string; conflicts?: { path: string; rule: string }[] };
    test(`${name}: ${spec.rule}`, () => {
      const result = mergeFiles({
        origin: readTree(join(dir, 'origin')),
        upstream: readTree(join(dir, 'upstream')),
        local: readTree(join(dir, 'local')),
      });
      const expected = readTree(join(dir, 'expected'));
      expect(Object.fromEntries(result.files.map((f) => [f.path, f.text]))).toEqual(
        Object.fromEntries(expected.map((f) => [f.path, f.text])),
      );
      expect(result.conflicts.map((c) => ({ path: c.path, rule: c.rule }))).toEqual(spec.conflicts ?? []);
    });
  }
});

describe('mergeFiles bad input', () => {
  const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
  const run =
    (local: SourceFile[], upstream: SourceFile[] = [], origin: SourceFile[] = []) =>
    () =>
      mergeFiles({ origin, upstream, local });

  function expectError(fn: () => unknown, fields: Partial<MergeInputError>, reason: RegExp) {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(MergeInputError);
      expect(error).toMatchObject(fields);
      expect((error as MergeInputError).reason).toMatch(reason);
      return;
    }
    throw new Error('expected a MergeInputError');
  }

  test('invalid YAML names the file, the document and the line', () => {
    expectError(
      run([{ path: 'a.yaml', text: `${cm('a')}---\nkind: [unclosed\n` }]),
      { file: 'a.yaml', document: 1, code: 'invalid-yaml' },
      /line 7/,
    );
  });

  test('a document that is not a mapping', () => {
    expectError(
      run([], [{ path: 'u.yaml', text: `${cm('a')}---\n- just\n- a list\n` }]),
      { file: 'u.yaml', document: 1, code: 'not-a-mapping', side: 'upstream' },
      /not a mapping/,
    );
  });

  test('two resources with the same identity in one file', () => {
    expectError(
      run([
        { path: 'a.yaml', text: cm('x') },
        { path: 'b.yaml', text: `${cm('x')}---\n${cm('y')}---\n${cm('x')}` },
      ]),
      { file: 'b.yaml', document: 2, code: 'duplicate-resource', side: 'local' },
      /local has ConfigMap x twice in this file: here and in document 0/,
    );
  });

  test('a keyed list item without its key', () => {
    const deploy = (image: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - image: ${image}\n`;
    expectError(
      run([{ path: 'd.yaml', text: deploy('a') }], [{ path: 'd.yaml', text: deploy('b') }], [{ path: 'd.yaml', text: deploy('a') }]),
      { file: 'd.yaml', document: 0, code: 'missing-list-key', side: 'local', path: '.spec.template.spec.containers[0]' },
      /\.spec\.template\.spec\.containers\[0\]: list item has no "name"/,
    );
  });
});

describe('mergeFiles behaviour', () => {
  const cm = (data: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${extra}\ndata:\n${data}`;

  test('with nothing new upstream, every file is byte-identical to local', () => {
    const origin = [{ path: 'c.yaml', text: cm('  a: "1"\n') }];
    const local = [{ path: 'c.yaml', text: `# mine\n${cm('  a:   "2"   # edited\n  b: x\n')}` }];
    const result = mergeFiles({ origin, upstream: origin, local });
    expect(result.files).toEqual(local);
    expect(result.report.map((r) => [r.action, r.changed])).toEqual([['merged', false]]);
  });

  test('local-wins keeps every local change and reports the conflict', () => {
    const origin = [{ path: 'c.yaml', text: cm('  a: "1"\n  b: "1"\n') }];
    const upstream = [{ path: 'c.yaml', text: cm('  a: "2"\n  b: "2"\n') }];
    const local = [{ path: 'c.yaml', text: cm('  a: "3"\n  b: "1"\n') }];
    const result = mergeFiles({ origin, upstream, local }, { strategy: 'local-wins' });
    expect(result.files[0]!.text).toBe(cm('  a: "3"\n  b: "2"\n'));
    expect(result.conflicts).toMatchObject([{ path: '.data.a', winner: 'local' }]);
  });

  // A container local deleted and upstream changed (a volumeMount added): never rebuilt as
  // `{name: mailer, volumeMounts: [...]}` with no image; reported like a resource local deleted.
  test.each([
    ['upstream-wins', 'upstream changed .spec.template.spec.containers[name="mailer"] and local deleted it; it stays deleted'],
    ['local-wins', 'upstream changed .spec.template.spec.containers[name="mailer"] and local deleted it; it stays deleted'],
    ['fail', 'upstream changed .spec.template.spec.containers[name="mailer"] and local deleted it'],
  ] as const)('an item local deleted that upstream changed stays deleted and is reported (%s)', (strategy, message) => {
    const deployment = (mailer: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n${mailer}`;
    const origin = [{ path: 'web.yaml', text: deployment('      - name: mailer\n        image: mailer:1\n') }];
    const upstream = [
      {
        path: 'web.yaml',
        text: deployment(
          '      - name: mailer\n        image: mailer:1\n        volumeMounts:\n        - name: spool\n          mountPath: /var/spool\n',
        ),
      },
    ];
    const local = [{ path: 'web.yaml', text: deployment('') }];
    const result = mergeFiles({ origin, upstream, local }, { strategy });
    expect(result.files).toEqual(local);
    expect(result.conflicts).toEqual([
      {
        resource: 'apps/Deployment web',
        file: 'web.yaml',
        path: '.spec.template.spec.containers[name="mailer"]',
        rule: 'modified-upstream-deleted-locally',
        winner: 'local',
        values: {
          origin: { name: 'mailer', image: 'mailer:1' },
          upstream: { name: 'mailer', image: 'mailer:1', volumeMounts: [{ name: 'spool', mountPath: '/var/spool' }] },
          local: undefined,
        },
        message,
      },
    ]);
  });

  test("a package's CRD of any shape never stops the merge: with no local edit it gives upstream (merge(o, u, o) = u)", () => {
    // Real packages ship partial CRDs (kpt-functions-catalog's set-namespace example: only
    // spec.conversion); a CRD the merge cannot read as a schema is a resource like any other.
    // no nulls: a null upstream sets is a deletion (seed 001), which this law is not about
    const anything = fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.integer(),
      fc.boolean(),
      fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
      fc.constant(undefined),
    );
    const crdSpec = fc.record({
      group: fc.oneof(fc.constantFrom('example.com', ''), anything),
      names: fc.oneof(fc.record({ kind: fc.oneof(fc.constant('Shelf'), anything) }), anything),
      versions: fc.oneof(fc.array(fc.record({ name: fc.oneof(fc.constant('v1'), anything), schema: anything })), anything),
      conversion: anything,
    });
    const file = (spec: unknown, value: string) => ({
      path: 'all.yaml',
      text: `${stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'the-crd' }, spec })}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: ${value}\n`,
    });
    // as kdelta and Kubernetes read YAML (1.1: `n` is false, as origin's `false` is)
    const data = (files: readonly SourceFile[]) =>
      Object.fromEntries(files.map((f) => [f.path, parseAllDocuments(f.text, yamlParseOptions).map((d) => d.toJS())]));
    fc.assert(
      fc.property(crdSpec, crdSpec, (o, u) => {
        const origin = [file(o, 'v1')];
        const upstream = [file(u, 'v2')];
        expect(data(mergeFiles({ origin, upstream, local: origin }).files)).toEqual(data(upstream));
      }),
      { numRuns: Number(process.env.KDELTA_PROPERTY_RUNS ?? 200) },
    );
  });

  test('CRDs among the inputs teach their list keys', () => {
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shelves.example.com
spec:
  group: example.com
  names: {kind: Shelf, plural: shelves}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              books:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [isbn]
                items:
                  type: object
                  properties:
                    isbn: {type: string}
                    copies: {type: integer}
`;
    const shelf = (books: string) => `apiVersion: example.com/v1\nkind: Shelf\nmetadata:\n  name: s\nspec:\n  books:\n${books}`;
    const origin = [
      { path: 'crd.yaml', text: crd },
      { path: 's.yaml', text: shelf('  - isbn: "1"\n    copies: 1\n') },
    ];
    const upstream = [
      { path: 'crd.yaml', text: crd },
      { path: 's.yaml', text: shelf('  - isbn: "1"\n    copies: 1\n  - isbn: "2"\n    copies: 1\n') },
    ];
    const local = [
      { path: 'crd.yaml', text: crd },
      { path: 's.yaml', text: shelf('  - isbn: "1"\n    copies: 7\n') },
    ];
    const result = mergeFiles({ origin, upstream, local }, { inferKeys: false });
    expect(result.files.find((f) => f.path === 's.yaml')!.text).toBe(shelf('  - isbn: "1"\n    copies: 7\n  - isbn: "2"\n    copies: 1\n'));
  });
});

// Upstreams ship one resource in two files (blueprints' anthos-cluster `acm`, Nephio's `o2ims`).
// kpt matches such copies file by file; so does the merge (compared with kpt 1.0.0-beta.56's
// `pkg update` on the same histories).
describe('the same resource in two files', () => {
  const ns = (extra = '') => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: o2ims\n${extra}`;
  const cm = (value: string, name = 'c') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: o2ims\ndata:\n  k: ${value}\n`;
  const labelled = (label: string) => ns(`  labels:\n    ${label}: "1"\n`);
  const origin = [
    { path: 'a.yaml', text: ns() },
    { path: 'b.yaml', text: `${ns()}---\n${cm('v1')}` },
  ];
  const texts = (files: readonly SourceFile[]) => Object.fromEntries(files.map((f) => [f.path, f.text]));

  test('with nothing new for them upstream, both copies stay as they are', () => {
    const upstream = [...origin, { path: 'c.yaml', text: cm('v2', 'c2') }];
    const result = mergeFiles({ origin, upstream, local: origin });
    expect(texts(result.files)).toEqual({ ...texts(origin), 'c.yaml': cm('v2', 'c2') });
    expect(result.deleted).toEqual([]);
  });

  test("a copy upstream edited is merged with the local copy of the same file; the other file's stays", () => {
    const upstream = [origin[0]!, { path: 'b.yaml', text: `${labelled('up')}---\n${cm('v1')}` }];
    const local = [{ path: 'a.yaml', text: labelled('mine') }, origin[1]!];
    const result = mergeFiles({ origin, upstream, local });
    expect(texts(result.files)).toEqual({ 'a.yaml': labelled('mine'), 'b.yaml': `${labelled('up')}---\n${cm('v1')}` });
    expect(result.report.filter((r) => r.resource === 'Namespace o2ims').map((r) => [r.file, r.action, r.changed])).toEqual([
      ['a.yaml', 'merged', false],
      ['b.yaml', 'merged', true],
    ]);
  });

  test('a file upstream deleted goes; the copy in the other file stays', () => {
    const upstream = [origin[1]!];
    const result = mergeFiles({ origin, upstream, local: origin });
    expect(texts(result.files)).toEqual({ 'b.yaml': origin[1]!.text });
    expect(result.deleted).toEqual(['a.yaml']);
  });

  test('a file both sides deleted: the copy in the file neither deleted stays', () => {
    const upstream = [origin[1]!];
    const local = [origin[1]!];
    const result = mergeFiles({ origin, upstream, local });
    expect(texts(result.files)).toEqual({ 'b.yaml': origin[1]!.text });
    expect(result.deleted).toEqual([]);
  });

  test('a copy both sides removed from one file: the copy in the other file stays', () => {
    const upstream = [origin[0]!, { path: 'b.yaml', text: cm('v1') }];
    const local = [origin[0]!, { path: 'b.yaml', text: cm('v1') }];
    const result = mergeFiles({ origin, upstream, local });
    expect(texts(result.files)).toEqual({ 'a.yaml': ns(), 'b.yaml': cm('v1') });
    expect(result.deleted).toEqual([]);
  });

  test('a copy upstream removed from one file goes from that file only, which starts without ---', () => {
    const upstream = [origin[0]!, { path: 'b.yaml', text: cm('v1') }];
    const result = mergeFiles({ origin, upstream, local: origin });
    expect(texts(result.files)).toEqual({ 'a.yaml': ns(), 'b.yaml': cm('v1') });
  });

  test('a second copy upstream added in a new file is added beside the first', () => {
    const upstream = [...origin, { path: 'c.yaml', text: cm('v2') }];
    const result = mergeFiles({ origin, upstream, local: origin });
    expect(texts(result.files)).toEqual({ ...texts(origin), 'c.yaml': cm('v2') });
  });

  test('a file neither side touched keeps its bytes, whatever both sides do to the copies in another file', () => {
    // Resources of a.yaml have copies in b.yaml; upstream and local each keep, edit, empty or
    // delete a.yaml; b.yaml is the same on every side.
    const doc = (name: string, v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: ${v}\n`;
    const names = ['x', 'y', 'z'];
    const b = { path: 'b.yaml', text: names.map((n) => doc(n, 'b')).join('---\n') };
    const sideArb = fc.record({
      deleted: fc.boolean(),
      docs: fc.subarray(names, { minLength: 1 }),
      value: fc.constantFrom('b', 'o', 'u', 'l'),
    });
    const aFile = (s: { deleted: boolean; docs: string[]; value: string }) =>
      s.deleted ? [] : [{ path: 'a.yaml', text: s.docs.map((n) => doc(n, s.value)).join('---\n') }];
    fc.assert(
      fc.property(sideArb, sideArb, fc.subarray(names, { minLength: 1 }), (u, l, originDocs) => {
        const origin = [{ path: 'a.yaml', text: originDocs.map((n) => doc(n, 'o')).join('---\n') }, b];
        const result = mergeFiles({ origin, upstream: [...aFile(u), b], local: [...aFile(l), b] });
        expect(result.files.find((f) => f.path === 'b.yaml')?.text).toBe(b.text);
        expect(result.deleted).not.toContain('b.yaml');
      }),
      { numRuns: Number(process.env.KDELTA_PROPERTY_RUNS ?? 200) },
    );
  });

  test('a resource in one file on every side is still matched across a move, and goes where upstream moved it', () => {
    const one = [{ path: 'a.yaml', text: cm('v1') }];
    const moved = [{ path: 'b.yaml', text: cm('v2') }];
    const result = mergeFiles({ origin: one, upstream: moved, local: one });
    expect(texts(result.files)).toEqual({ 'b.yaml': cm('v2') });
    expect(result.deleted).toEqual(['a.yaml']);
  });
});

// The 3-way rule applied to a resource's file: where local left it in origin's file, it goes to
// upstream's (merge(o, u, o) = u, file layout included); where local moved it, local's file stays.
// kpt 1.0.0-beta.56 follows upstream's files the same way when local made no edit.
describe('resources upstream moved to other files', () => {
  const cm = (name: string, value = 'v1', extra = '') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: ${value}\n${extra}`;
  const texts = (files: readonly SourceFile[]) => Object.fromEntries(files.map((f) => [f.path, f.text]));
  const all = { path: 'all.yaml', text: `${cm('a')}---\n${cm('b')}` };

  test("a file upstream split in two: with no local edit, local gets upstream's files exactly and the old file goes", () => {
    const upstream = [
      { path: 'a.yaml', text: cm('a') },
      { path: 'b.yaml', text: `# b, alone\n${cm('b', 'v2')}` },
    ];
    const result = mergeFiles({ origin: [all], upstream, local: [all] });
    expect(texts(result.files)).toEqual(texts(upstream));
    expect(result.deleted).toEqual(['all.yaml']);
    expect(result.report.map((r) => [r.resource, r.file, r.changed])).toEqual([
      ['ConfigMap a', 'a.yaml', true],
      ['ConfigMap b', 'b.yaml', true],
    ]);
  });

  test("two files upstream joined into one: upstream's order and bytes", () => {
    const origin = [
      { path: 'a.yaml', text: cm('a') },
      { path: 'b.yaml', text: cm('b') },
    ];
    const upstream = [{ path: 'all.yaml', text: `---\n${cm('b')}---\n${cm('a', 'v2')}` }];
    const result = mergeFiles({ origin, upstream, local: origin });
    expect(texts(result.files)).toEqual(texts(upstream));
    expect([...result.deleted].sort()).toEqual(['a.yaml', 'b.yaml']);
  });

  test("a resource local moved itself stays in local's file, upstream's change merged", () => {
    const local = [
      { path: 'all.yaml', text: cm('a') },
      { path: 'mine.yaml', text: cm('b') },
    ];
    const upstream = [
      { path: 'a.yaml', text: cm('a') },
      { path: 'b.yaml', text: cm('b', 'v2') },
    ];
    const result = mergeFiles({ origin: [all], upstream, local });
    expect(texts(result.files)).toEqual({ 'a.yaml': cm('a'), 'mine.yaml': cm('b', 'v2') });
    expect(result.deleted).toEqual(['all.yaml']);
  });

  test("a resource local edited and upstream moved goes, merged, to upstream's file only", () => {
    const origin = [{ path: 'cm.yaml', text: cm('c', 'b') }];
    const local = [{ path: 'cm.yaml', text: cm('c', 'b', '  local: x\n') }];
    const upstream = [{ path: 'configmap.yaml', text: cm('c', 'c') }];
    const result = mergeFiles({ origin, upstream, local });
    expect(texts(result.files)).toEqual({ 'configmap.yaml': cm('c', 'c', '  local: x\n') });
    expect(result.deleted).toEqual(['cm.yaml']);
  });

  test('a local-only resource in the old file keeps the file', () => {
    const local = [{ path: 'all.yaml', text: `${all.text}---\n${cm('mine')}` }];
    const upstream = [
      { path: 'a.yaml', text: cm('a') },
      { path: 'b.yaml', text: cm('b') },
    ];
    const result = mergeFiles({ origin: [all], upstream, local });
    expect(texts(result.files)).toEqual({ 'all.yaml': cm('mine'), ...texts(upstream) });
    expect(result.deleted).toEqual([]);
  });

  test("a resource upstream moved into a file local has goes into local's copy where upstream's file orders it", () => {
    const origin = [all, { path: 'c.yaml', text: cm('c') }];
    const local = [all, { path: 'c.yaml', text: cm('c', 'local') }];
    const upstream = [
      { path: 'all.yaml', text: cm('a') },
      { path: 'c.yaml', text: `${cm('c')}---\n${cm('b')}` },
    ];
    const result = mergeFiles({ origin, upstream, local });
    expect(texts(result.files)).toEqual({ 'all.yaml': cm('a'), 'c.yaml': `${cm('c', 'local')}---\n${cm('b')}` });
  });

  test("with no local edit, any moves upstream makes give upstream's layout (merge(o, u, o) = u)", () => {
    const names = ['a', 'b', 'c'];
    const layout = fc.array(fc.constantFrom('x.yaml', 'y.yaml', 'z.yaml'), { minLength: 3, maxLength: 3 });
    const filesOf = (paths: string[], value: string) => {
      const byFile = new Map<string, string[]>();
      names.forEach((n, i) => byFile.set(paths[i]!, [...(byFile.get(paths[i]!) ?? []), cm(n, value)]));
      return [...byFile].sort(([a], [b]) => a.localeCompare(b)).map(([path, docs]) => ({ path, text: docs.join('---\n') }));
    };
    fc.assert(
      fc.property(layout, layout, fc.constantFrom('v1', 'v2'), (o, u, value) => {
        const origin = filesOf(o, 'v1');
        const upstream = filesOf(u, value);
        const result = mergeFiles({ origin, upstream, local: origin });
        expect(texts(result.files)).toEqual(texts(upstream));
        expect([...result.deleted].sort()).toEqual(origin.map((f) => f.path).filter((p) => !upstream.some((f) => f.path === p)));
      }),
      { numRuns: Number(process.env.KDELTA_PROPERTY_RUNS ?? 200) },
    );
  });
});

// What the merge parses: on a package of one stream as on one of many files, only the resources
// upstream changed (and the documents the scanner declines, each alone). Timing is the benchmark's
// business (bench/merge-bench.mjs); these tests see which documents were parsed.
describe('the merge parses only what it needs', () => {
  const cm = (i: number, value: string, extra = '') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: apps/cm-${i}\n  name: cm-${i}\n  namespace: apps\n${extra}data:\n  k: ${value}\n`;
  const stream = (n: number, value: (i: number) => string, extra: (i: number) => string = () => '') => [
    { path: 'all.yaml', text: Array.from({ length: n }, (_, i) => cm(i, value(i), extra(i))).join('---\n') },
  ];
  const traced = (input: Parameters<typeof mergeFiles>[0]) => {
    const trace: string[] = [];
    const result = mergeFilesTraced(input, {}, trace);
    const scans = trace.filter((t) => t.startsWith('scan '));
    return { result, parsed: [...new Set(trace.filter((t) => !t.startsWith('scan ')))].sort(), scans };
  };

  test('a one-file stream of block-style resources is split by the scanner: only the documents upstream changed are parsed', () => {
    const origin = stream(50, () => 'v1');
    const upstream = stream(50, (i) => (i === 7 || i === 30 ? 'v2' : 'v1'));
    const local = stream(50, (i) => (i === 30 ? 'local' : 'v1'));
    const { result, parsed } = traced({ origin, upstream, local });
    expect(parsed).toEqual(['all.yaml#30', 'all.yaml#7']);
    expect(result.files[0]!.text).toBe(stream(50, (i) => (i === 7 ? 'v2' : i === 30 ? 'v2' : 'v1'))[0]!.text);
    expect(result.conflicts.map((c) => c.path)).toEqual(['.data.k']);
  });

  test("a resource upstream did not change keeps local's text, odd spacing and comments included, without being parsed", () => {
    const origin = stream(3, () => 'v1');
    const upstream = stream(3, (i) => (i === 0 ? 'v2' : 'v1'));
    const mine =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: apps/cm-2\n  name: cm-2\n  namespace: apps\ndata:\n  k:     v1   # mine\n  extra: "yes"\n';
    const local = [{ path: 'all.yaml', text: [cm(0, 'v1'), cm(1, 'v1'), mine].join('---\n') }];
    const { result, parsed } = traced({ origin, upstream, local });
    expect(parsed).toEqual(['all.yaml#0']);
    expect(result.files[0]!.text).toBe([cm(0, 'v2'), cm(1, 'v1'), mine].join('---\n'));
  });

  test('each text is scanned once: a text the caller identified while scanning it is read from there', () => {
    const origin = stream(20, () => 'v1');
    const upstream = stream(20, (i) => (i === 4 ? 'v2' : 'v1'));
    const local = stream(20, (i) => (i === 4 || i === 9 ? 'local' : 'v1'));
    const alone = traced({ origin, upstream, local });
    expect(alone.scans).toEqual(['scan all.yaml', 'scan all.yaml', 'scan all.yaml']);
    // as the update hands over what marking origin and upstream read (kptfile-model's merge comments)
    const identified = new Map(
      [origin[0]!.text, upstream[0]!.text].map((text) => [text, scanEachDocument(text, (d) => identifyScanned(d, text))!]),
    );
    const handed = traced({ origin, upstream, local, identified });
    expect(handed.scans).toEqual(['scan all.yaml']);
    expect(handed.parsed).toEqual(alone.parsed);
    expect(handed.result).toEqual(alone.result);
  });

  test('a document the scanner declines is parsed alone, not with the rest of its file', () => {
    const anchored = (i: number) => (i === 3 ? '  annotations:\n    a: &x one\n    b: *x\n' : '');
    const origin = stream(10, () => 'v1', anchored);
    const upstream = stream(10, (i) => (i === 5 ? 'v2' : 'v1'), anchored);
    const { result, parsed } = traced({ origin, upstream, local: origin });
    expect(parsed).toEqual(['all.yaml#3', 'all.yaml#5']);
    expect(result.files[0]!.text).toBe(stream(10, (i) => (i === 5 ? 'v2' : 'v1'), anchored)[0]!.text);
  });

  test('a stream whose documents the scanner cannot delimit is parsed whole, and its errors are named as before', () => {
    const origin = [{ path: 'all.yaml', text: `%YAML 1.1\n---\n${stream(3, () => 'v1')[0]!.text}` }];
    const { parsed } = traced({ origin, upstream: origin, local: origin });
    expect(parsed).toEqual(['all.yaml#0', 'all.yaml#1', 'all.yaml#2']);
    const broken = [{ path: 'all.yaml', text: `${cm(0, 'v1')}---\n${cm(1, '[unclosed')}` }];
    expect(() => mergeFiles({ origin: broken, upstream: broken, local: broken })).toThrow(
      /^all\.yaml \(origin\): document 1: invalid YAML \(line 16\)/,
    );
  });
});
