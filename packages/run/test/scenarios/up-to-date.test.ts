import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import type { RunOptions, RunReport } from '../../src/index.js';
import { copyMaterialize, describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * The most common state of a fleet: every proposal merged, nothing open, nothing new. A run then
 * asks each downstream for its branches and checks nothing out: what the last run found up to date
 * at this base commit, from these inputs and with these settings, is up to date again. Anything
 * that could change the answer (the base, the variant, the upstream, the settings, a decline, a
 * re-propose tick) takes the run through the checkout again.
 */

const GOLD = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: gold\n';
/** The git commands that reach into a repository's content: none of them in a run that needs none. */
const CHECKOUT_COMMANDS = ['clone', 'fetch', 'worktree', 'checkout', 'read-tree'];
/** What a run with nothing to build runs: the control repository's place, and each repository's refs (read in-process from one on disk). */
const REFS_ONLY = ['rev-parse', 'config', 'ls-remote'];

/** One run with every git process tracing what it runs: the report and the git commands run. */
async function traced(f: ScenarioFleet, extra: Partial<RunOptions> = {}): Promise<{ report: RunReport; git: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'kdelta-trace-'));
  const trace = join(dir, 'trace');
  const before = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    const report = await f.run(extra);
    let text = '';
    try {
      text = readFileSync(trace, 'utf8');
    } catch {
      // no git process at all
    }
    return { report, git: [...text.matchAll(/built-in: git (\S+)/g)].map((m) => m[1]!) };
  } finally {
    if (before === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = before;
    rmSync(dir, { recursive: true, force: true });
  }
}

// an exec function in the variant's pipeline that fails while the file `broken` exists (a registry
// down, a runtime missing), and passes the package through otherwise
const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-scenario-fn-'));
afterAll(() => rmSync(fnDir, { recursive: true, force: true }));
const fn = join(fnDir, 'pass.sh');
const broken = join(fnDir, 'broken');
writeFileSync(fn, `#!/bin/sh\nif [ -f '${broken}' ]; then echo 'not now' >&2; exit 1; fi\ncat\n`, { mode: 0o755 });

const checkedOut = (git: readonly string[]) => git.some((c) => CHECKOUT_COMMANDS.includes(c));

describeScenarios('a merged fleet with nothing new', {}, ({ forge, fleet }) => {
  /**
   * web proposed to cluster-01 and merged; then the merge is recorded (the local forge records it
   * itself, GitHub has) and the package found up to date with nothing open, which is remembered.
   */
  async function merged(options: { dashboard?: boolean } = {}): Promise<ScenarioFleet> {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, options);
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
    await f.merge('cluster-01', 'kdelta/web');
    expect((await f.run()).results[0]).toMatchObject({ action: 'up-to-date' });
    expect((await f.run()).results[0]).toMatchObject({ action: 'up-to-date' });
    return f;
  }

  it('checks nothing out: no clone, fetch, worktree or checkout, only refs read, nothing written', async () => {
    const f = await merged();
    f.mark();
    const { report, git } = await traced(f);
    expect(report.results.map((r) => [r.variant, r.action, r.writes])).toEqual([['web', 'up-to-date', false]]);
    expect(git.filter((c) => CHECKOUT_COMMANDS.includes(c))).toEqual([]);
    expect(git.filter((c) => !REFS_ONLY.includes(c))).toEqual([]);
    expect(f.wrote()).toBe(false);
  });

  // On GitHub a pull request closed unmerged is declined whatever the base holds; the local forge
  // reads a deleted branch whose inputs' fingerprint is in the base's history as merged.
  if (forge === 'github') {
    it('a decline of the same inputs still holds where the package was up to date before', async () => {
      const f = await merged();
      const base = f.tip('cluster-01', 'main')!;
      // a person removes the package: the variant proposes it again, with the same inputs; they say no
      await f.commitAs('cluster-01', 'main', { 'web/Kptfile': null, 'web/namespace.yaml': null, 'web/package-context.yaml': null });
      expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      // and then put the base back where it was up to date: the decline of these inputs still holds
      f.git('cluster-01', 'update-ref', 'refs/heads/main', base);
      const { report } = await traced(f);
      expect(report.results[0]).toMatchObject({ action: 'declined' });
    });

    it('a re-propose ticked on the dashboard: the package is built again', async () => {
      const f = await merged({ dashboard: true });
      const base = f.tip('cluster-01', 'main')!;
      await f.commitAs('cluster-01', 'main', { 'web/Kptfile': null, 'web/namespace.yaml': null, 'web/package-context.yaml': null });
      await f.run();
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      f.git('cluster-01', 'update-ref', 'refs/heads/main', base);
      f.editDashboard((body) => body.replaceAll('- [ ] <!-- kdelta-repropose:', '- [x] <!-- kdelta-repropose:'));
      expect(f.dashboard()).toContain('- [x] <!-- kdelta-repropose:');
      const { report, git } = await traced(f);
      // proposed as if never declined: the base already has the package, so there is nothing to propose
      expect(report.results[0]).toMatchObject({ action: 'up-to-date' });
      expect(checkedOut(git)).toBe(true);
    });
  }

  if (forge === 'local') {
    it.each<[string, (f: ScenarioFleet) => Promise<Partial<RunOptions>>, string]>([
      [
        'the base branch moved (a person removed the package)',
        async (f) => {
          await f.commitAs('cluster-01', 'main', { 'web/Kptfile': null, 'web/namespace.yaml': null, 'web/package-context.yaml': null });
          return {};
        },
        'proposed',
      ],
      [
        'the variant changed',
        async (f) => {
          f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: blue\n') });
          return {};
        },
        'proposed',
      ],
      [
        'the upstream moved',
        async (f) => {
          f.publish({ 'base-ns/namespace.yaml': GOLD }, 'base-ns/v1');
          return {};
        },
        'proposed',
      ],
      ['the render is off', async () => ({ render: false }), 'up-to-date'],
      ['exec functions are allowed', async () => ({ allowExec: true }), 'up-to-date'],
      ['other container images are allowed', async () => ({ allowedImages: ['*'] }), 'up-to-date'],
      // a dry run lists every resource of the package, which only a build knows
      ['a dry run', async () => ({ dryRun: true }), 'up-to-date'],
      // a caller's materialize: its output is not kdelta's, so what kdelta found says nothing of it
      ['a materialize given by the caller', async () => ({ materialize: copyMaterialize }), 'up-to-date'],
      [
        'the proposal branch moved',
        // (the merge was a fast-forward: the branch is where main is) to the commit before
        async (f) => {
          f.git('cluster-01', 'update-ref', 'refs/heads/kdelta/web', 'main~1');
          return {};
        },
        'up-to-date',
      ],
    ])('%s: the package is built again', async (_what, change, action) => {
      const f = await merged();
      const extra = await change(f);
      const { report, git } = await traced(f, extra);
      expect(report.results[0]).toMatchObject({ action });
      expect(checkedOut(git)).toBe(true);
    });

    it('a render that failed is tried again by every run: what failed may work now', async () => {
      const f = await fleet(['cluster-01'], {
        'web.yaml': packageVariant('web', 'cluster-01', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`),
      });
      const exec = { allowExec: true };
      writeFileSync(broken, '');
      expect((await f.run(exec)).results[0]).toMatchObject({ action: 'proposed', renderFailure: { function: fn } });
      await f.merge('cluster-01', 'kdelta/web');
      expect((await f.run(exec)).results[0]).toMatchObject({ action: 'up-to-date' });
      expect((await f.run(exec)).results[0]).toMatchObject({ action: 'up-to-date' });
      // the function works again: the package is rendered, which the unrendered base does not hold
      rmSync(broken);
      const again = await traced(f, exec);
      expect(again.report.results[0]).toMatchObject({ action: 'proposed' });
      expect(again.report.results[0]?.renderFailure).toBeUndefined();
    });

    it('a package the variant does not adopt is found so by every run, never remembered as up to date', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
      await f.commitAs('cluster-01', 'main', {
        'web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n',
        'web/package-context.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: web\n',
      });
      expect((await f.run()).results[0]).toMatchObject({ action: 'not-adopted' });
      const again = await traced(f);
      expect(again.report.results[0]).toMatchObject({ action: 'not-adopted' });
      expect(checkedOut(again.git)).toBe(true);
    });
  }
});
