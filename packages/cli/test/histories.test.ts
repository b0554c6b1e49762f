// The release-history differential (`bench/histories/`) on a small history built here: it must find
// the release pairs of each tag convention, replay them with both tools and classify each case as a
// user would judge it. Runs the built CLI (`pnpm build` first); the cases that run kpt are skipped,
// saying so, when `kpt` is not on PATH (kpt is compared against, never depended on).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { git, scratch, writeTree } from '@kdelta/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const histories = join(import.meta.dirname, '..', 'bench', 'histories');
const script = join(histories, 'histories.mjs');
const kptAvailable = spawnSync('kpt', ['version'], { encoding: 'utf8' }).status === 0;

interface Pair {
  key: string;
  dir: string;
  old: string;
  new: string;
}
interface CaseResult {
  old: string;
  new: string;
  mode: 'unedited' | 'edited';
  class: string;
  causes: string[];
  edits: string[];
  differences: { where: string; path?: string; cause: string }[];
  kpt: { ok: boolean; stage: string; error?: string };
  kept?: string;
}

const kptfile = (name: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n`;
const settings = (localConfig: string, mode: string) =>
  `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  annotations:
    config.kubernetes.io/local-config: ${localConfig}
data:
  mode: ${mode}
`;
const deployment = (image: string) =>
  `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: web
          image: ${image}
`;

let root: string;
let upstream: string;
/** The commit of each step of the synthetic history, by its message. */
const commits: Record<string, string> = {};

beforeAll(() => {
  if (!existsSync(join(import.meta.dirname, '..', 'dist', 'main.js')))
    throw new Error('build the CLI first (pnpm build): the differential runs packages/cli/bin/kdelta.js');
  root = scratch();
  upstream = join(root, 'upstream');
  git(root, 'init', '--quiet', '--initial-branch=main', upstream);
  const release = (files: Record<string, string | null>, ...tags: string[]) => {
    writeTree(upstream, files);
    git(upstream, 'add', '-A');
    git(upstream, 'commit', '--quiet', '--allow-empty', '-m', tags.join(' '));
    for (const t of tags) git(upstream, 'tag', t);
    commits[tags.join(' ')] = git(upstream, 'rev-parse', 'HEAD');
  };
  // shop: kpt's <dir>/vX convention. v2 changes values both tools merge alike; v3 only turns a
  // boolean annotation into the string kpt's own docs write, which kpt 1.0.0-beta.56 does not take
  // (it compares the two as text and keeps local's `true`): a known, stable disagreement.
  // catalog/cart: blueprints' <name>-blueprint-vX. tools: a repository release vX for the
  // directories without tags of their own, and a pre-release that is left out.
  release(
    {
      'shop/Kptfile': kptfile('shop'),
      'shop/settings.yaml': settings('true', 'v1'),
      'shop/web.yaml': deployment('nginx:1'),
      'catalog/cart/Kptfile': kptfile('cart'),
      'catalog/cart/cm.yaml': settings('"true"', 'cart-1'),
      'tools/Kptfile': kptfile('tools'),
    },
    'shop/v1',
    'cart-blueprint-v0.1.0',
    'v1.0.0',
  );
  release({ 'shop/settings.yaml': settings('true', 'v2'), 'shop/web.yaml': deployment('nginx:2') }, 'shop/v2');
  release({ 'catalog/cart/cm.yaml': settings('"true"', 'cart-2') }, 'cart-blueprint-v0.2.0', 'v1.0.1');
  release({ 'tools/README.md': 'tools\n' }, 'v1.1.0-rc.1');
  release({ 'shop/settings.yaml': settings('"true"', 'v2'), 'tools/README.md': 'tools 1.1\n' }, 'shop/v3', 'v1.1.0');
  // examples/greet-*: kpt-functions-catalog's <fn>/vX, where no directory is named greet: the
  // packages are the examples/greet-* directories; a version tagged in two families is one release,
  // and a package its release left unchanged has no pair (greet-advanced at v0.2.0)
  release(
    {
      'examples/greet-simple/Kptfile': kptfile('greet-simple'),
      'examples/greet-simple/cm.yaml': settings('true', 'simple-1'),
      'examples/greet-advanced/Kptfile': kptfile('greet-advanced'),
      'examples/greet-advanced/cm.yaml': settings('true', 'advanced-1'),
      'examples/greeting-simple/Kptfile': kptfile('greeting-simple'),
    },
    'greet/v0.1.0',
    'functions/go/greet/v0.1.0',
  );
  release(
    { 'examples/greet-simple/cm.yaml': settings('true', 'simple-2'), 'examples/greeting-simple/README.md': 'another function\n' },
    'greet/v0.2.0',
    'functions/go/greet/v0.2.0',
  );
  release({ 'examples/greet-advanced/cm.yaml': settings('true', 'advanced-2') }, 'functions/go/greet/v0.3.0');
  // after the last release, tools changes twice on a side branch merged into main: the branch tip
  // had the merge's tree, never the side branch's first commit
  git(upstream, 'checkout', '--quiet', '-b', 'side');
  writeTree(upstream, { 'tools/README.md': 'tools 1.2-dev\n' });
  git(upstream, 'commit', '--quiet', '-am', 'side 1');
  commits['side 1'] = git(upstream, 'rev-parse', 'HEAD');
  writeTree(upstream, { 'tools/README.md': 'tools 1.2\n' });
  git(upstream, 'commit', '--quiet', '-am', 'side 2');
  git(upstream, 'checkout', '--quiet', 'main');
  git(upstream, 'merge', '--quiet', '--no-ff', '-m', 'merge side', 'side');
  commits['merge side'] = git(upstream, 'rev-parse', 'HEAD');
});
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function runHistories(...args: string[]): { results: CaseResult[]; summary: string } {
  const out = join(root, `out-${Math.random().toString(36).slice(2)}`);
  execFileSync(process.execPath, [script, '--out', out, ...args, upstream], { encoding: 'utf8', stdio: 'pipe' });
  const report = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { results: CaseResult[] };
  return { results: report.results, summary: readFileSync(join(out, 'summary.md'), 'utf8') };
}

describe('histories: release pairs from tags', () => {
  it('pairs consecutive releases of each tag convention (function examples too), and leaves out pre-releases and unchanged packages', async () => {
    const { discoverPairs } = (await import(pathToFileURL(join(histories, 'discover.mjs')).href)) as {
      discoverPairs: (dir: string) => { pairs: Pair[] };
    };
    const pairs = discoverPairs(upstream).pairs.map((p) => `${p.dir}: ${p.old} → ${p.new}`);
    expect(pairs.sort()).toEqual([
      'catalog/cart: cart-blueprint-v0.1.0 → cart-blueprint-v0.2.0',
      'examples/greet-advanced: greet/v0.2.0 → functions/go/greet/v0.3.0',
      'examples/greet-simple: greet/v0.1.0 → greet/v0.2.0',
      'shop: shop/v1 → shop/v2',
      'shop: shop/v2 → shop/v3',
      // v1.0.0 → v1.0.1 left tools unchanged; catalog/cart and shop have releases of their own
      'tools: v1.0.1 → v1.1.0',
    ]);
  });
});

describe('histories: commit pairs (--commits N)', () => {
  it('pairs the last N changes of each package on the default branch, each with the change before it', async () => {
    const { discoverCommitPairs } = (await import(pathToFileURL(join(histories, 'commits.mjs')).href)) as {
      discoverCommitPairs: (dir: string, o: { count: number }) => { pairs: Pair[] };
    };
    const name = Object.fromEntries(Object.entries(commits).map(([message, sha]) => [sha, message]));
    const pairs = (count: number) =>
      discoverCommitPairs(upstream, { count })
        .pairs.map((p) => `${p.dir}: ${name[p.old] ?? p.old} → ${name[p.new] ?? p.new}`)
        .sort();
    expect(pairs(1)).toEqual([
      'catalog/cart: shop/v1 cart-blueprint-v0.1.0 v1.0.0 → cart-blueprint-v0.2.0 v1.0.1',
      // packages below a directory that is none (the function examples): each its own
      'examples/greet-advanced: greet/v0.1.0 functions/go/greet/v0.1.0 → functions/go/greet/v0.3.0',
      'examples/greet-simple: greet/v0.1.0 functions/go/greet/v0.1.0 → greet/v0.2.0 functions/go/greet/v0.2.0',
      'examples/greeting-simple: greet/v0.1.0 functions/go/greet/v0.1.0 → greet/v0.2.0 functions/go/greet/v0.2.0',
      'shop: shop/v2 → shop/v3 v1.1.0',
      // the merge is tools' last change on main, and the commit before it on main its previous one
      'tools: shop/v3 v1.1.0 → merge side',
    ]);
    expect(pairs(3)).toEqual([
      'catalog/cart: shop/v1 cart-blueprint-v0.1.0 v1.0.0 → cart-blueprint-v0.2.0 v1.0.1',
      'examples/greet-advanced: greet/v0.1.0 functions/go/greet/v0.1.0 → functions/go/greet/v0.3.0',
      'examples/greet-simple: greet/v0.1.0 functions/go/greet/v0.1.0 → greet/v0.2.0 functions/go/greet/v0.2.0',
      'examples/greeting-simple: greet/v0.1.0 functions/go/greet/v0.1.0 → greet/v0.2.0 functions/go/greet/v0.2.0',
      'shop: shop/v1 cart-blueprint-v0.1.0 v1.0.0 → shop/v2',
      'shop: shop/v2 → shop/v3 v1.1.0',
      'tools: shop/v1 cart-blueprint-v0.1.0 v1.0.0 → v1.1.0-rc.1',
      'tools: shop/v3 v1.1.0 → merge side',
      'tools: v1.1.0-rc.1 → shop/v3 v1.1.0',
    ]);
    expect(pairs(3).join('\n')).not.toContain('side 1');
  });

  it.skipIf(!kptAvailable)('(needs kpt on PATH) replays a commit pair by its commit ids, with both tools, as a release pair', () => {
    const { results } = runHistories('--commits', '1', '--filter', '^\\S+ shop ');
    expect(results.map((r) => [r.old, r.new, r.mode, r.class, r.causes.join()])).toEqual([
      [commits['shop/v2'], commits['shop/v3 v1.1.0'], 'edited', 'differ', 'scalar type'],
      [commits['shop/v2'], commits['shop/v3 v1.1.0'], 'unedited', 'differ', 'scalar type'],
    ]);
    // each tool updated to the newer commit, fetched by its id
    for (const r of results)
      for (const tool of ['kpt', 'kdelta'])
        expect(readFileSync(join(r.kept!, tool, 'ws', 'pkg', 'Kptfile'), 'utf8')).toContain(`commit: ${commits['shop/v3 v1.1.0']}`);
  });
});

describe('histories: packages compared as data', () => {
  it('names each difference with its cause, and lists apart what is not data', async () => {
    const { comparePackages } = (await import(pathToFileURL(join(histories, 'compare.mjs')).href)) as {
      comparePackages: (a: string, b: string) => { differences: { where: string; path?: string; cause: string }[]; [k: string]: unknown[] };
    };
    const steps = (names: string) =>
      `apiVersion: example.com/v1\nkind: Build\nmetadata:\n  name: b\nspec:\n  steps:\n${names
        .split(',')
        .map((n) => `    - name: ${n}\n`)
        .join('')}`;
    const cm = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
    const kpt = join(root, 'compare', 'kpt');
    const kdelta = join(root, 'compare', 'kdelta');
    writeTree(kpt, {
      'build.yaml': steps('a,b2,c'),
      'a.yaml': cm('a', 'data:\n  k: v # {"$kpt-set":"k"}\n'),
      'b.yaml': cm('b', 'data:\n  k: "true"\n'),
      'moved.yaml': cm('moved'),
      'conf.yaml': cm('conf', 'data:\n  conf: |-\n    a = {\n    }\n'),
      'README.md': 'one\n',
    });
    writeTree(kdelta, {
      'build.yaml': steps('a,c,b2'),
      'a.yaml': cm('a', '  creationTimestamp: null\ndata:\n  k: v\n'),
      'b.yaml': cm('b', 'data:\n  k: true\n'),
      'old-place.yaml': cm('moved'),
      // upstream's file as upstream wrote it, with no line break after the block: the same value
      // for Kubernetes as kpt's `|-` (yaml alone reads a line break into it)
      'conf.yaml': cm('conf', 'data:\n  conf: |\n    a = {\n    }'),
      'README.md': 'two\n',
    });
    const result = comparePackages(kpt, kdelta);
    expect(result.differences.map((d) => [d.where, d.path, d.cause].filter(Boolean).join(' '))).toEqual([
      'ConfigMap b .data.k scalar type',
      'Build.example.com b .spec.steps list order',
      'README.md file text',
    ]);
    expect(result['equivalent']).toHaveLength(1); // creationTimestamp: null is absent for Kubernetes
    expect(result['comments']).toEqual([{ where: 'ConfigMap a', kpt: ['.data.k: {"$kpt-set":"k"}'], kdelta: [] }]);
    expect(result['layout']).toEqual([{ where: 'ConfigMap moved', kpt: 'moved.yaml', kdelta: 'old-place.yaml' }]);
  });
});

describe('histories: classification', () => {
  it('reports kpt-failed, grouped by kpt’s message, when kpt refuses what kdelta does', () => {
    const fakeKpt = join(root, 'failing-kpt');
    writeFileSync(fakeKpt, '#!/bin/sh\necho "Error: this kpt refuses every package" >&2\nexit 1\n');
    chmodSync(fakeKpt, 0o755);
    const { results, summary } = runHistories('--kpt', fakeKpt, '--modes', 'unedited', '--filter', 'shop/v1 ');
    expect(results.map((r) => [r.old, r.class, r.kpt.stage])).toEqual([['shop/v1', 'kpt-failed', 'get']]);
    expect(summary).toContain('### kpt-failed at get: Error: this kpt refuses every package (1)');
  });

  it.skipIf(!kptAvailable)(
    '(needs kpt on PATH) classifies cases where both tools give the same package as agree, the others as differ with the cause',
    () => {
      const { results, summary } = runHistories('--filter', '^\\S+ shop ');
      const byCase = Object.fromEntries(results.map((r) => [`${r.old} ${r.mode}`, r]));
      expect(Object.keys(byCase).sort()).toEqual(['shop/v1 edited', 'shop/v1 unedited', 'shop/v2 edited', 'shop/v2 unedited']);
      expect(byCase['shop/v1 unedited']!.class).toBe('agree');
      // the local edits were made, one of them on the value upstream changed, and both tools still agree
      expect(byCase['shop/v1 edited']!.edits).toEqual([
        'value settings.yaml .data.mode="v1-local"',
        'label settings.yaml',
        'namespace shop→shop-local on 2',
        'file local-only.yaml',
      ]);
      expect(byCase['shop/v1 edited']!.class).toBe('agree');
      for (const mode of ['unedited', 'edited']) {
        const r = byCase[`shop/v2 ${mode}`]!;
        expect(r.class).toBe('differ');
        expect(r.causes).toEqual(['scalar type']);
        expect(r.differences.map((d) => d.path)).toEqual(['.metadata.annotations.config.kubernetes.io/local-config']);
      }
      expect(summary).toMatch(/\| agree \| 1 \| 1 \| 2 \|/);
      expect(summary).toContain('### differ: scalar type (2)');
    },
  );
});
