import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, git, packageVariant, readTree, repository, tempDir, type Fleet } from '@kdelta/test-support';
import { run, type PreviewReport, type RunOptions, type VariantResult } from '@kdelta/run';
import { main } from '../../src/main.js';
import { captureIo } from './__fixtures__/cli-fleet.js';

// `kdelta preview` on local git: a change of the upstream (a branch, not a release yet) that
// conflicts in two downstreams and renders wrongly in the third, previewed, then released and run
// for real: the preview said exactly what the run then proposes, and wrote nothing.

const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-preview-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

const env = () => ({ ...process.env, KDELTA_CACHE_DIR: cacheDir });
const io = (cwd: string) => captureIo(cwd, env());

const namespace = (tier: string) =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: ${tier}\n`;

/**
 * Variants a, b, c (→ cluster-01, -02, -03) at base-ns/v2, merged into each downstream; a and b
 * then edited downstream (label tier), c with a pipeline function that refuses "gold". Upstream
 * branch `next` changes the tier to gold: a and b conflict, c's render fails.
 */
function fleetWithCandidate(): { f: Fleet; opts: (extra?: Partial<RunOptions>) => RunOptions; next: string } {
  const f = createFleet(['cluster-01', 'cluster-02', 'cluster-03']);
  fleets.push(f);
  const fn = join(tempDir('kdelta-preview-fn-'), 'tier-check.sh');
  writeFileSync(
    fn,
    '#!/bin/sh\ninput=$(cat)\ncase "$input" in *"tier: gold"*) echo "gold is not a tier of this cluster" >&2; exit 1;; esac\nprintf "%s\\n" "$input"\n',
    { mode: 0o755 },
  );
  f.publish({ 'base-ns/namespace.yaml': namespace('bronze') }, 'base-ns/v2');
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      ...['cluster-01', 'cluster-02', 'cluster-03'].map((d) => repository(d, f.downstream(d))),
    ].join('---\n'),
    'a.yaml': packageVariant('a', 'cluster-01', '', 'v2'),
    'b.yaml': packageVariant('b', 'cluster-02', '', 'v2'),
    'c.yaml': packageVariant('c', 'cluster-03', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`, 'v2'),
  });
  const opts = (extra: Partial<RunOptions> = {}): RunOptions => ({ cwd: f.control, cacheDir, env: env(), allowExec: true, ...extra });
  return { f, opts, next: '' };
}

async function mergeEverything(f: Fleet, opts: RunOptions): Promise<void> {
  const first = await run(opts);
  expect(first.results.map((r) => [r.variant, r.action, r.renderFailure])).toEqual([
    ['a', 'proposed', undefined],
    ['b', 'proposed', undefined],
    ['c', 'proposed', undefined],
  ]);
  for (const [d, v] of [
    ['cluster-01', 'a'],
    ['cluster-02', 'b'],
    ['cluster-03', 'c'],
  ] as const)
    git(f.downstream(d), 'update-ref', 'refs/heads/main', `refs/heads/kdelta/${v}`);
}

function localEdit(f: Fleet, downstream: string, variant: string, tier: string): void {
  const text = f.files(downstream, 'main', variant)['namespace.yaml']!;
  expect(text).toContain('tier: bronze');
  f.commitAs(downstream, 'main', { [`${variant}/namespace.yaml`]: text.replace('tier: bronze', `tier: ${tier}`) });
}

/** Every ref of every repository and every file of the control repository: what "nothing written" compares. */
function snapshot(f: Fleet): unknown {
  return {
    downstreams: ['cluster-01', 'cluster-02', 'cluster-03'].map((d) => f.refs(d)),
    upstream: git(f.upstream, 'for-each-ref', '--format=%(refname) %(objectname)'),
    control: readTree(f.control),
  };
}

/** What a reviewer compares: each variant's conflicts and render failure. */
function outcome(results: readonly Pick<VariantResult, 'variant' | 'conflicts' | 'renderFailure'>[]) {
  return results.map((r) => ({
    variant: r.variant,
    conflicts: r.conflicts.map((c) => ({ resource: c.resource, path: c.path, values: c.values, rule: c.rule, winner: c.winner })),
    render: r.renderFailure
      ? { function: r.renderFailure.function, field: r.renderFailure.field, message: r.renderFailure.message }
      : undefined,
  }));
}

describe('kdelta preview', () => {
  it('previews an upstream branch: the conflicts and the render failure a real run then proposes, and nothing written', async () => {
    const { f, opts } = fleetWithCandidate();
    await mergeEverything(f, opts());
    localEdit(f, 'cluster-01', 'a', 'silver');
    localEdit(f, 'cluster-02', 'b', 'iron');
    git(f.upstream, 'checkout', '--quiet', '-b', 'next');
    const next = f.publish({ 'base-ns/namespace.yaml': namespace('gold') });
    git(f.upstream, 'checkout', '--quiet', 'main');

    const before = snapshot(f);
    const json = io(f.control);
    expect(await main(['preview', '--upstream', 'catalog', '--upstream-ref', 'next', '--allow-exec', '--json'], json.io)).toBe(0);
    const report = JSON.parse(json.out.stdout) as PreviewReport;
    expect(snapshot(f)).toEqual(before);

    expect(report.candidate).toEqual({ kind: 'upstream-ref', repository: 'catalog', url: f.upstream, ref: 'next', commit: next });
    expect(report.summary).toMatchObject({
      total: 3,
      conflicted: 2,
      fields: [{ path: expect.stringContaining('tier'), count: 2 }],
      renderFailed: 1,
      created: 0,
      removed: 0,
      changed: 3,
      failed: 0,
    });
    expect(report.variants.map((v) => [v.variant, v.impact, v.conflicts.length, v.renderFailure?.function])).toEqual([
      ['a', 'changed', 1, undefined],
      ['b', 'changed', 1, undefined],
      ['c', 'changed', 0, expect.stringContaining('tier-check.sh')],
    ]);
    expect(report.variants[0]!.conflicts[0]!.values).toEqual({ origin: 'bronze', upstream: 'gold', local: 'silver' });
    expect(report.variants[2]!.renderFailure!.message).toContain('gold is not a tier');
    expect(report.variants[0]!.changes).toEqual(expect.arrayContaining([{ status: 'modified', path: 'a/Kptfile' }]));

    // the terminal table and the Markdown say the same, aggregates first
    const text = io(f.control);
    expect(await main(['preview', '--upstream-ref', 'next', '--allow-exec'], text.io)).toBe(0);
    expect(text.out.stdout.split('\n')[1]).toMatch(
      /^conflicts in 2 of 3 downstreams; the most common fields: \S*tier \(2\); render fails in 1 \(function \S*tier-check\.sh: gold is not a tier of this cluster\); 3 changed; 0 unchanged$/,
    );
    expect(text.out.stdout).toMatch(/\bc +cluster-03\/c +changed +\d+ +0 +failed: function \S*tier-check\.sh/);
    const md = io(f.control);
    expect(await main(['preview', '--upstream-ref', 'next', '--allow-exec', '--format', 'markdown'], md.io)).toBe(0);
    expect(md.out.stdout).toMatch(/^## kdelta preview: upstream `catalog` at `next`/);
    expect(md.out.stdout.match(/<details><summary><b>[abc]<\/b>/g)).toHaveLength(3);
    expect(md.out.stdout).toContain('| resource | field | origin | upstream | local | rule | kept |');
    expect(md.out.stdout).toContain('| `"bronze"` | `"gold"` | `"silver"` |'.replace(/"/g, ''));
    expect(snapshot(f)).toEqual(before);

    // the change is released and the control resources follow it: the run proposes what the preview said
    git(f.upstream, 'tag', 'base-ns/v3', next);
    for (const [name, d] of [
      ['a', 'cluster-01'],
      ['b', 'cluster-02'],
    ])
      f.writeControl({ [`${name}.yaml`]: packageVariant(name!, d!, '', 'v3') });
    f.writeControl({ 'c.yaml': readTree(join(f.control, '.kdelta'))['c.yaml']!.replace('revision: v2', 'revision: v3') });
    const real = await run(opts());
    expect(real.results.map((r) => r.action)).toEqual(['proposed', 'proposed', 'proposed']);
    expect(outcome(real.results)).toEqual(outcome(report.variants));
  });

  it('previews the control work tree: a new variant and a removal; an unknown Repository or ref is an error', async () => {
    const { f, opts } = fleetWithCandidate();
    await mergeEverything(f, opts());
    const before = snapshot(f);
    f.writeControl({ 'b.yaml': null, 'd.yaml': packageVariant('d', 'cluster-02', '', 'v2') });
    const edited = snapshot(f);
    const json = io(f.control);
    expect(await main(['preview', '--allow-exec', '--json'], json.io)).toBe(0);
    expect(snapshot(f)).toEqual(edited);
    expect(before).not.toEqual(edited);
    const report = JSON.parse(json.out.stdout) as PreviewReport;
    expect(report.candidate).toEqual({ kind: 'control', config: '.kdelta' });
    expect(report.variants.map((v) => [v.variant, v.impact])).toEqual([
      ['a', 'unchanged'],
      ['b', 'removed'],
      ['c', 'unchanged'],
      ['d', 'created'],
    ]);
    expect(report.summary).toMatchObject({ total: 4, created: 1, removed: 1, unchanged: 2, conflicted: 0 });
    const text = io(f.control);
    expect(await main(['preview', '--allow-exec'], text.io)).toBe(0);
    expect(text.out.stdout).toContain('no conflicts in 4 downstreams; 1 new variant; 1 removal; 2 unchanged');

    const unknown = io(f.control);
    expect(await main(['preview', '--upstream', 'nope', '--upstream-ref', 'next'], unknown.io)).toBe(1);
    expect(unknown.out.stderr).toContain('upstream Repository "nope" is the upstream of no variant (upstreams: "catalog")');
    const badRef = io(f.control);
    expect(await main(['preview', '--upstream-ref', 'no-such-branch'], badRef.io)).toBe(1);
    expect(badRef.out.stderr).toContain('upstream ref "no-such-branch" is not a ref, a branch, a tag or a full commit of');
    expect(snapshot(f)).toEqual(edited);
  });

  it('--help describes the command', async () => {
    const h = io(tmpdir());
    expect(await main(['preview', '--help'], h.io)).toBe(0);
    expect(h.out.stdout).toContain('Usage: kdelta preview [--upstream <Repository>] [--upstream-ref <ref>]');
  });
});
