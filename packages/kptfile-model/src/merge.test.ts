/** Seed 000 ("Pipeline Merge") examples and the Kptfile merge's handling of the rest. */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KptfileError } from './errors.js';
import { mergeKptfile } from './merge.js';

const head = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n';
const kf = (pipeline: string): string => head + pipeline;
const pipelineOf = (text: string): unknown => (parse(text) as { pipeline?: unknown }).pipeline;

function merge(o: string, u: string, l: string) {
  return mergeKptfile({ origin: kf(o), upstream: kf(u), local: kf(l) });
}

describe('seed 000 examples', () => {
  it('new upstream setter is pulled, the local setter value kept', () => {
    const r = merge(
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configMap:\n        image: nginx\n        tag: 1.0.1\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configMap:\n        image: nginx\n        tag: 1.0.1\n        new-setter: new-setter-value\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configMap:\n        image: nginx\n        tag: 1.2.0 # value of tag is updated\n',
    );
    expect(r.pipelineKey).toBe('derived');
    expect(r.text).toBe(
      kf(
        'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configMap:\n        image: nginx\n        tag: 1.2.0 # value of tag is updated\n        new-setter: new-setter-value\n',
      ),
    );
    expect(r.conflicts).toEqual([]);
  });

  it('both changed configPath: upstream wins, and the conflict is reported', () => {
    const r = merge(
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.1\n      configPath: labels.yaml\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.1\n      configPath: labels-updated.yaml\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.1\n      configPath: labels-local.yaml\n',
    );
    expect(r.kptfile.pipeline?.mutators).toEqual([{ image: 'gcr.io/kpt-fn/set-labels:v0.1', configPath: 'labels-updated.yaml' }]);
    expect(r.conflicts.map((c) => [c.path, c.values.local, c.values.upstream])).toEqual([
      ['.pipeline.mutators[key="gcr.io/kpt-fn/set-labels"].configPath', 'labels-local.yaml', 'labels-updated.yaml'],
    ]);
    // merge-core's one conflict shape: where, the rule that decided, and why
    expect(r.conflicts[0]).toMatchObject({
      resource: 'kpt.dev/Kptfile pkg',
      file: 'Kptfile',
      winner: 'upstream',
      values: { origin: 'labels.yaml' },
    });
    expect(r.conflicts[0]?.rule).toMatch(/upstream/);
    expect(r.conflicts[0]?.message).toContain('configPath');
    expect(r.conflicts[0]?.message).not.toContain('_kpt-merge_');
  });

  it('both changed the version: the function is matched without its tag and upstream wins', () => {
    const r = merge(
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-annotations:v0.1\n      configPath: annotations.yaml\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-annotations:v0.2.0\n      configPath: annotations.yaml\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-annotations:v0.1.1\n      configPath: annotations.yaml\n',
    );
    expect(r.kptfile.pipeline?.mutators).toEqual([{ image: 'gcr.io/kpt-fn/set-annotations:v0.2.0', configPath: 'annotations.yaml' }]);
  });

  it('registry ports are not tags: two functions from one local registry stay two', () => {
    const r = merge(
      'pipeline:\n  mutators:\n    - image: localhost:5000/set-labels:v1\n',
      'pipeline:\n  mutators:\n    - image: localhost:5000/set-labels:v2\n',
      'pipeline:\n  mutators:\n    - image: localhost:5000/set-labels:v1\n    - image: localhost:5000/set-namespace:v1\n',
    );
    expect(r.pipelineKey).toBe('derived');
    expect(r.kptfile.pipeline?.mutators).toEqual([{ image: 'localhost:5000/set-labels:v2' }, { image: 'localhost:5000/set-namespace:v1' }]);
  });

  it('a new upstream function is appended after local ones; a function deleted upstream goes', () => {
    const r = merge(
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configPath: setters.yaml\n    - image: gcr.io/kpt-fn/set-labels:v0.1\n',
      'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configPath: setters.yaml\n    - image: gcr.io/kpt-fn/generate-folders:v0.1\n',
      '# local pipeline\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1 # first\n      configPath: setters.yaml\n    - image: gcr.io/kpt-fn/set-labels:v0.1\n    - image: gcr.io/kpt-fn/set-namespace:v0.1\n      configMap:\n        namespace: foo\n',
    );
    expect(r.text).toBe(
      kf(
        '# local pipeline\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/apply-setters:v0.1 # first\n      configPath: setters.yaml\n    - image: gcr.io/kpt-fn/set-namespace:v0.1\n      configMap:\n        namespace: foo\n    - image: gcr.io/kpt-fn/generate-folders:v0.1\n',
      ),
    );
  });

  it("the same image twice without names: upstream's changed list replaces local's", () => {
    const sr = (v: string) => `    - image: gcr.io/kpt-fn/search-replace:v0.1\n      configMap:\n        by-value: ${v}\n`;
    const r = merge(
      `pipeline:\n  mutators:\n${sr('foo')}${sr('abc')}`,
      `pipeline:\n  mutators:\n${sr('foo-new')}${sr('abc')}`,
      `pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/generate-folders:v0.1\n${sr('foo')}${sr('abc')}`,
    );
    expect(r.pipelineKey).toBe('none');
    expect(pipelineOf(r.text)).toEqual(pipelineOf(kf(`pipeline:\n  mutators:\n${sr('foo-new')}${sr('abc')}`)));
  });

  it("the same image twice, upstream unchanged: local's list is kept", () => {
    const sr = (v: string) => `    - image: gcr.io/kpt-fn/search-replace:v0.1\n      configMap:\n        by-value: ${v}\n`;
    const local = kf(`pipeline:\n  mutators:\n${sr('mine')}${sr('foo')}${sr('abc')}`);
    const r = mergeKptfile({
      origin: kf(`pipeline:\n  mutators:\n${sr('foo')}${sr('abc')}`),
      upstream: kf(`pipeline:\n  mutators:\n${sr('foo')}${sr('abc')}`),
      local,
    });
    expect(r.text).toBe(local);
  });

  it('names in every source: merged by name, local order kept, new upstream functions appended', () => {
    const fn = (name: string, v: string) =>
      `    - image: gcr.io/kpt-fn/search-replace:v0.1\n      name: ${name}\n      configMap:\n        put-value: ${v}\n`;
    const r = merge(
      `pipeline:\n  mutators:\n${fn('sr1', 'bar')}${fn('sr2', 'x')}`,
      `pipeline:\n  mutators:\n${fn('sr1', 'bar-new')}${fn('sr2', 'x')}${fn('sr3', 'new')}`,
      `pipeline:\n  mutators:\n${fn('mine', 'team')}${fn('sr2', 'x')}${fn('sr1', 'bar')}`,
    );
    expect(r.pipelineKey).toBe('name');
    expect(r.kptfile.pipeline?.mutators?.map((f) => [f.name, f.configMap?.['put-value']])).toEqual([
      ['mine', 'team'],
      ['sr2', 'x'],
      ['sr1', 'bar-new'],
      ['sr3', 'new'],
    ]);
  });

  it("the functions' order: merge-core's positional rule, not kpt's append", () => {
    const fns = (...names: string[]) => `pipeline:\n  mutators:\n${names.map((n) => `    - image: gcr.io/kpt-fn/${n}:v0.1\n`).join('')}`;
    const images = (text: string) =>
      (pipelineOf(text) as { mutators: { image: string }[] }).mutators.map((f) => f.image.replace(/^gcr.io\/kpt-fn\/(.*):v0.1$/, '$1'));
    // upstream inserted x and y, local inserted l after a: kpt gives a, l, b, x, y
    expect(images(merge(fns('a', 'b'), fns('x', 'a', 'y', 'b'), fns('a', 'l', 'b')).text)).toEqual(['x', 'a', 'l', 'y', 'b']);
    // with no local edit, upstream's order
    expect(images(merge(fns('a', 'b', 'c'), fns('c', 'a', 'b'), fns('a', 'b', 'c')).text)).toEqual(['c', 'a', 'b']);
  });

  it("selectors changed on both sides are replaced whole by upstream's (the prose of seed 000)", () => {
    const fn = (sel: string) => `pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/ensure-name-substring:v0.1\n      selectors:\n${sel}`;
    const origin = fn('        - kind: Deployment\n          name: wordpress\n        - kind: Service\n          name: wordpress\n');
    const upstream = fn(
      '        - kind: Deployment\n          name: wordpress\n        - kind: Service\n          name: wordpress\n        - kind: Foo\n          name: wordpress\n',
    );
    const local = fn(
      '        - kind: Deployment\n          name: my-wordpress\n        - kind: Service\n          name: my-wordpress\n        - namespace: my-space\n',
    );
    const r = merge(origin, upstream, local);
    expect(r.kptfile.pipeline?.mutators?.[0]?.selectors).toEqual([
      { kind: 'Deployment', name: 'wordpress' },
      { kind: 'Service', name: 'wordpress' },
      { kind: 'Foo', name: 'wordpress' },
    ]);
    expect(r.conflicts.map((c) => c.path)).toEqual(['.pipeline.mutators[key="gcr.io/kpt-fn/ensure-name-substring"].selectors']);
    // Only local changed them: local's stay.
    expect(merge(origin, origin, local).kptfile.pipeline?.mutators?.[0]?.selectors).toEqual([
      { kind: 'Deployment', name: 'my-wordpress' },
      { kind: 'Service', name: 'my-wordpress' },
      { namespace: 'my-space' },
    ]);
    // Only upstream changed them: upstream's come in.
    expect(merge(origin, upstream, origin).kptfile.pipeline?.mutators?.[0]?.selectors).toHaveLength(3);
  });
});

describe('the rest of the Kptfile', () => {
  const up = (ref: string, commit: string) =>
    `upstream:\n  type: git\n  git:\n    repo: https://example.com/b.git\n    directory: /pkg\n    ref: ${ref}\nupstreamLock:\n  type: git\n  git:\n    repo: https://example.com/b.git\n    directory: /pkg\n    ref: ${ref}\n    commit: ${commit}\n`;

  it('keeps local name and upstream sections unless updateUpstream; merges labels, annotations, info', () => {
    const origin = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base\n  labels: {tier: web}\n${up('v1', 'aaa')}info:\n  description: old\n`;
    const upstream = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base\n  labels: {tier: web, team: a}\n${up('v2', 'bbb')}info:\n  description: new\n`;
    const local = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: mine # renamed\n  labels: {tier: web, env: prod}\n${up('v1', 'aaa')}info:\n  description: old\n`;
    const kept = mergeKptfile({ origin, upstream, local });
    expect(kept.kptfile.metadata).toEqual({ name: 'mine', labels: { tier: 'web', env: 'prod', team: 'a' } });
    expect(kept.kptfile.upstreamLock?.git?.commit).toBe('aaa');
    expect(kept.kptfile.info?.description).toBe('new');
    const updated = mergeKptfile({ origin, upstream, local }, { updateUpstream: true });
    expect(updated.kptfile.upstream?.git?.ref).toBe('v2');
    expect(updated.kptfile.upstreamLock?.git?.commit).toBe('bbb');
    expect(updated.text).toContain('  name: mine # renamed\n');
    expect(updated.text).toContain('    commit: bbb\n');
  });

  it('with nothing new upstream the local text comes back byte for byte', () => {
    const local = `# my package\n${head}upstream:\n  type: git\n  git: {repo: r, directory: /, ref: v1}\npipeline:\n  mutators:\n  - image: x/a:v1 # pinned\n    configMap: {k: "1"}\n`;
    const origin = kf('pipeline:\n  mutators:\n  - image: x/a:v1\n');
    expect(mergeKptfile({ origin, upstream: origin, local }).text).toBe(local);
  });

  it('bad input names the file and field; nothing is merged', () => {
    const bad = kf('pipeline:\n  mutators:\n  - image: x/a:v1\n    confgMap: {}\n');
    expect(() => mergeKptfile({ origin: kf(''), upstream: bad, local: kf('') }, { files: { upstream: 'upstream@v2/Kptfile' } })).toThrow(
      'upstream@v2/Kptfile: pipeline.mutators[0].confgMap: unknown field',
    );
    const err = (() => {
      try {
        mergeKptfile({ origin: 'a: [', local: kf('x: 1\n') });
      } catch (e) {
        return e as KptfileError;
      }
      throw new Error('expected an error');
    })();
    expect(err.issues.map((i) => [i.file, i.code])).toEqual([
      ['origin/Kptfile', 'yaml-syntax'],
      ['Kptfile', 'unknown-field'],
    ]);
  });

  it("a package with no origin (added on both sides) takes upstream's additions", () => {
    const r = mergeKptfile({
      upstream: kf('pipeline:\n  mutators:\n  - image: x/up:v1\n'),
      local: kf('pipeline:\n  mutators:\n  - image: x/local:v1\n'),
    });
    expect(r.kptfile.pipeline?.mutators).toEqual([{ image: 'x/local:v1' }, { image: 'x/up:v1' }]);
  });
});

describe('functions upstream deleted', () => {
  it('a function upstream deleted and local left alone goes whole, configMap included (no stub)', () => {
    const setNs = '    - image: gcr.io/kpt-fn/set-namespace:v0.1\n      configMap:\n        namespace: foo\n';
    const labels = '    - image: gcr.io/kpt-fn/set-labels:v0.1\n      configMap:\n        app: web\n';
    for (const names of [false, true]) {
      const named = (fn: string, name: string) => (names ? fn.replace('    - image:', `    - name: ${name}\n      image:`) : fn);
      const r = merge(
        `pipeline:\n  mutators:\n${named(setNs, 'ns')}${named(labels, 'labels')}`,
        `pipeline:\n  mutators:\n${named(labels, 'labels')}`,
        `pipeline:\n  mutators:\n${named(setNs, 'ns')}${named(labels, 'labels')}`,
      );
      expect(r.kptfile.pipeline?.mutators?.map((f) => f.image)).toEqual(['gcr.io/kpt-fn/set-labels:v0.1']);
      expect(r.text).toBe(kf(`pipeline:\n  mutators:\n${named(labels, 'labels')}`));
      expect(r.conflicts).toEqual([]);
    }
  });
});

describe('# kdelta:local in the Kptfile', () => {
  it('keeps a pinned scalar, map and list as local has them, comments and all, as decisions', () => {
    const fn = (tag: string, selectors: string, extra = '') =>
      `    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configMap:\n        tag: ${tag}\n${extra}      selectors:${selectors}\n`;
    const r = mergeKptfile({
      origin: `${head.replace('  name: pkg\n', '  name: pkg\n  labels:\n    a: b\n')}info:\n  description: old\npipeline:\n  mutators:\n${fn('1', '\n        - kind: A')}`,
      upstream: `${head.replace('  name: pkg\n', '  name: pkg\n  labels:\n    a: c\n')}info:\n  description: new\npipeline:\n  mutators:\n${fn('2', '\n        - kind: B', '        more: x\n')}`,
      local: `${head.replace('  name: pkg\n', '  name: pkg\n  labels: # kdelta:local\n    a: b\n')}info:\n  description: mine # kdelta:local\npipeline:\n  mutators:\n${fn('1 # kdelta:local', ' # kdelta:local\n        - kind: A')}`,
    });
    expect(r.text).toBe(
      `${head.replace('  name: pkg\n', '  name: pkg\n  labels: # kdelta:local\n    a: b\n')}info:\n  description: mine # kdelta:local\npipeline:\n  mutators:\n${fn('1 # kdelta:local', ' # kdelta:local\n        - kind: A', '        more: x\n')}`,
    );
    expect(r.conflicts).toEqual([]);
    expect(r.decisions.map((d) => [d.path, d.rule])).toEqual([
      ['.metadata.labels', 'pinned-local'],
      ['.info.description', 'pinned-local'],
      ['.pipeline.mutators[key="gcr.io/kpt-fn/apply-setters"].configMap.tag', 'pinned-local'],
      ['.pipeline.mutators[key="gcr.io/kpt-fn/apply-setters"].selectors', 'pinned-local'],
    ]);
  });
});
