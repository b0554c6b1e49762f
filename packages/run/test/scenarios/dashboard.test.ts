import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import type { RunProgress } from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * The fleet dashboard, on every forge (a file beside the local forge's records; an issue of the
 * control repository on GitHub): written once and again only when it changed, problems first;
 * its boxes — retry, allow these removals, re-propose — read once by the next run.
 */

const NO_ISSUES = 'ghs_no_issues';

/** A person ticks every box of one kind on the dashboard. */
function tick(f: ScenarioFleet, kind: 'retry' | 'allow-removals' | 'repropose'): void {
  const before = f.dashboard() ?? '';
  expect(before, `no "${kind}" box to tick:\n${before}`).toContain(`- [ ] <!-- kdelta-${kind}:`);
  f.editDashboard((body) => body.replaceAll(`- [ ] <!-- kdelta-${kind}:`, `- [x] <!-- kdelta-${kind}:`));
}

/** The variants in the order their jobs finished, and the options that record it (one job at a time). */
function order(): { done: string[]; onProgress: (e: RunProgress) => void; concurrency: number } {
  const done: string[] = [];
  return { done, onProgress: (e) => void (e.type === 'done' && done.push(e.result.variant)), concurrency: 1 };
}

describeScenarios(
  'the fleet dashboard',
  {
    fake: {
      tokens: {
        [NO_ISSUES]: {
          login: 'no-issues',
          permissions: { contents: 'write', pull_requests: 'write', statuses: 'write', metadata: 'read' },
        },
      },
    },
  },
  ({ forge, fleet }) => {
    /** How the dashboard links a variant's proposal on this forge. */
    const link = (f: ScenarioFleet, variant: string) =>
      forge === 'local'
        ? `\`.kdelta/proposals/cluster-01/${variant}.md\``
        : `[proposal](${f.proposal('cluster-01', `kdelta/${variant}`).url})`;

    it('is created once, lists every variant by its state with problems first, and is written again only when it changed', async () => {
      const f = await fleet(
        ['cluster-01'],
        { 'web.yaml': packageVariant('web', 'cluster-01'), 'bad.yaml': packageVariant('bad', 'cluster-01', '', 'v9') },
        { dashboard: true, copy: true },
      );
      const first = await f.run();
      expect(first.failed).toBe(1);
      expect(first.dashboard).toMatchObject({ outcome: 'created' });
      const text = f.dashboard()!;
      expect(text).toContain('## kdelta dashboard\n');
      expect(text).toContain('2 variant(s): 1 need attention, 1 open proposal(s), 0 up to date.');
      expect(text).toMatch(
        /### Failed \(1\)\n\n- \[ \] <!-- kdelta-retry:bad%20cluster-01%2Fbad --> retry `bad` → `cluster-01\/bad`: `[a-z-]+` `/,
      );
      expect(text).toContain(`### Open proposals (1)\n\n- \`web\` → \`cluster-01/web\` · ${link(f, 'web')}\n`);
      // problems come first
      expect(text.indexOf('### Failed')).toBeLessThan(text.indexOf('### Open proposals'));
      if (f.github) expect(first.dashboard?.url).toMatch(new RegExp(`^${f.github.gh.serverUrl}/${f.github.controlRepo}/issues/\\d+$`));

      // a run with nothing new writes nothing, the dashboard included
      f.mark();
      const again = await f.run();
      expect(again.failed).toBe(1);
      expect(again.dashboard).toMatchObject({ outcome: 'unchanged' });
      expect(f.wrote()).toBe(false);

      // the fleet changes: the same dashboard says so
      await f.merge('cluster-01', 'kdelta/web');
      f.writeControl({ 'bad.yaml': null });
      f.mark();
      const changed = await f.run();
      expect(changed.failed).toBe(0);
      expect(changed.dashboard).toMatchObject({ outcome: 'updated', url: first.dashboard?.url });
      if (f.github) {
        const ops = f.github.gh.requests.map((r) => r.operationId);
        expect(ops.filter((o) => o === 'issues/update')).toHaveLength(1);
        expect(ops.filter((o) => o === 'issues/create')).toHaveLength(0);
      }
      expect(f.dashboard()).toContain('1 variant(s): 0 need attention, 0 open proposal(s), 1 up to date.');
      expect(f.dashboard()).not.toContain('kdelta-retry');

      // a dry run and a run without the dashboard leave it alone
      f.writeControl({ 'api.yaml': packageVariant('api', 'cluster-01') });
      f.mark();
      expect((await f.run({ dryRun: true })).failed).toBe(0);
      expect(f.wrote()).toBe(false);
      const kept = f.dashboard();
      expect((await f.run({ dashboard: false })).results.find((r) => r.variant === 'api')).toMatchObject({ action: 'proposed' });
      expect(f.dashboard()).toBe(kept);
    });

    // on GitHub the order shows in what the write budget reaches (below)
    if (forge === 'local') {
      it('"retry": the next run runs the ticked failed variant before every other job, then clears the box; without a tick the run goes in its own order', async () => {
        const f = await fleet(['cluster-01'], { 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') }, { dashboard: true, copy: true });
        expect((await f.run()).results.map((r) => r.action)).toEqual(['failed']);
        // the upstream gets the release it waited for, and new variants sort before it
        execFileSync('git', ['tag', 'v9', 'base-ns/v1'], { cwd: f.upstream });
        f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01'), 'mm.yaml': packageVariant('mm', 'cluster-01') });
        tick(f, 'retry');
        const retried = order();
        const report = await f.run(retried);
        expect(report.failed).toBe(0);
        expect(retried.done[0]).toBe('zz');
        expect(report.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['zz cluster-01/zz'] } });
        expect(f.dashboard()).not.toContain('- [x]');
        expect(f.dashboard()).toContain('3 variant(s): 0 need attention, 3 open proposal(s)');

        const plain = order();
        await f.run(plain);
        expect(plain.done[0]).toBe('aa');
      });
    }

    it('"allow these removals": the removals the removal guard held back are proposed by the next run, that set only', async () => {
      const f = await fleet(
        ['cluster-01'],
        { 'web.yaml': packageVariant('web', 'cluster-01'), 'api.yaml': packageVariant('api', 'cluster-01') },
        { dashboard: true, copy: true },
      );
      expect((await f.run()).failed).toBe(0);
      await f.merge('cluster-01', 'kdelta/web');
      await f.merge('cluster-01', 'kdelta/api');
      f.writeControl({ 'web.yaml': null, 'api.yaml': null });
      expect((await f.run({ maxRemovals: 1 })).failed).toBe(2);
      expect(f.dashboard()).toContain('### Removals held by the removal guard (2)');
      expect(f.dashboard()).toMatch(
        /- \[ \] <!-- kdelta-allow-removals:[0-9a-f]{16} --> allow these 2 removals on the next run\n {2}- `api` → `cluster-01\/api`\n {2}- `web` → `cluster-01\/web`\n/,
      );

      // unticked, the guard holds them again (and the dashboard, unchanged, is not written)
      f.mark();
      expect((await f.run({ maxRemovals: 1 })).failed).toBe(2);
      expect(f.wrote()).toBe(false);

      tick(f, 'allow-removals');
      const allowed = await f.run({ maxRemovals: 1 });
      expect(allowed.failed).toBe(0);
      expect(allowed.results.map((r) => [r.variant, r.action])).toEqual([
        ['api', 'removal-proposed'],
        ['web', 'removal-proposed'],
      ]);
      expect(f.dashboard()).not.toContain('kdelta-allow-removals');
      expect(f.dashboard()).toContain('### Open proposals (2)');
    });

    // which set a tick allows is the run's, whatever the forge: on one forge
    if (forge === 'local') {
      it('a tick of "allow these removals" does not allow another set of removals', async () => {
        const f = await fleet(
          ['cluster-01'],
          {
            'web.yaml': packageVariant('web', 'cluster-01'),
            'api.yaml': packageVariant('api', 'cluster-01'),
            'db.yaml': packageVariant('db', 'cluster-01'),
          },
          { dashboard: true, copy: true },
        );
        expect((await f.run()).failed).toBe(0);
        for (const v of ['web', 'api', 'db']) await f.merge('cluster-01', `kdelta/${v}`);
        f.writeControl({ 'web.yaml': null, 'api.yaml': null });
        expect((await f.run({ maxRemovals: 1 })).failed).toBe(2);
        tick(f, 'allow-removals');
        // one more variant goes before the next run: the set ticked is not the set due
        f.writeControl({ 'db.yaml': null });
        const held = await f.run({ maxRemovals: 1 });
        expect(held.failed).toBe(3);
        expect(held.results[0]?.error).toContain('3 removals are due, more than max-removals (1): none was proposed');
        expect(f.dashboard()).toContain('allow these 3 removals on the next run');
      });
    }

    it('"re-propose": a declined proposal is proposed again by the next run', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, { dashboard: true, copy: true });
      expect((await f.run()).failed).toBe(0);
      const url = f.proposal('cluster-01', 'kdelta/web').url;
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      const key = forge === 'local' ? '.kdelta/proposals/cluster-01/web.md' : url;
      expect(f.dashboard()).toContain(
        `### Declined (1)\n\n- [ ] <!-- kdelta-repropose:${encodeURIComponent(key)} --> re-propose \`web\` → \`cluster-01/web\` · ${link(f, 'web')}\n`,
      );
      // unticked, the decline holds
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });

      tick(f, 'repropose');
      const again = await f.run();
      expect(again.failed).toBe(0);
      expect(again.results[0]).toMatchObject({ action: 'proposed' });
      expect(f.tip('cluster-01', 'kdelta/web')).toBeDefined();
      expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('open');
      expect(f.dashboard()).not.toContain('kdelta-repropose');
      expect(f.dashboard()).toContain('### Open proposals (1)');
      // the report names the tick it acted on; GitHub proposes again in a new pull request, whose
      // address is not the ticked one, and the report names none (the test below)
      if (forge === 'local') expect(again.dashboard?.ticks?.repropose).toEqual([key]);
    });

    if (forge === 'github') {
      // on GitHub the proposal made again is a new pull request, at another address than the tick's
      it('"re-propose": the report names the tick it acted on, though the proposal made again is a new pull request', async () => {
        const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, { dashboard: true, copy: true });
        await f.run();
        const url = f.proposal('cluster-01', 'kdelta/web').url;
        await f.decline('cluster-01', 'kdelta/web');
        await f.run();
        tick(f, 'repropose');
        const again = await f.run();
        expect(again.results[0]).toMatchObject({ action: 'proposed' });
        expect(again.dashboard?.ticks?.repropose).toEqual([url]);
      });
    }

    it('a tick made while the run went on is left for the next run, which acts on it', async () => {
      const f = await fleet(['cluster-01'], { 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') }, { dashboard: true, copy: true });
      await f.run();
      f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01') });
      // the person ticks the box while the run is busy with its jobs
      const raced = await f.run({
        onProgress: (e) => {
          if (e.type === 'done' && e.result.variant === 'aa') tick(f, 'retry');
        },
        concurrency: 1,
      });
      expect(raced.dashboard).toMatchObject({ outcome: 'raced' });
      expect(raced.warnings.join('\n')).toContain('the dashboard changed while the run went on');
      expect(f.dashboard()).toContain('- [x] <!-- kdelta-retry:zz%20cluster-01%2Fzz -->');
      const next = await f.run();
      expect(next.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['zz cluster-01/zz'] } });
      // the box is cleared (zz still fails: its box is back, unticked)
      expect(f.dashboard()).not.toMatch(/^- \[x\]/m);
      expect(f.dashboard()).toContain('- [ ] <!-- kdelta-retry:zz%20cluster-01%2Fzz -->');
    });

    if (forge === 'github') {
      it('the retried variant runs before the write budget is spent on others, which the dashboard lists as deferred', async () => {
        const f = await fleet(['cluster-01'], { 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') }, { dashboard: true, copy: true });
        await f.run();
        execFileSync('git', ['tag', 'v9', 'base-ns/v1'], { cwd: f.upstream });
        f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01') });
        tick(f, 'retry');
        // a budget for the dashboard's write and one new pull request (open it, post its status)
        const report = await f.run({ budget: 3, concurrency: 1 });
        expect(report.results.map((r) => [r.variant, r.action])).toEqual([
          ['aa', 'deferred'],
          ['zz', 'proposed'],
        ]);
        expect(report.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['zz cluster-01/zz'] } });
        expect(f.dashboard()).not.toMatch(/^- \[x\]/m);
        expect(f.dashboard()).toContain("### Deferred: the run's write budget was spent (1)\n\n- `aa` → `cluster-01/aa`\n");
        // without the tick, the next run goes in its own order: aa first, and the budget reaches it
        expect((await f.run({ budget: 3, concurrency: 1 })).results.map((r) => [r.variant, r.action])).toEqual([
          ['aa', 'proposed'],
          ['zz', 'unchanged'],
        ]);
      });

      it('a token that may not read issues: the run goes on without the dashboard and says why', async () => {
        const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, { dashboard: true, copy: true });
        const report = await f.run({ github: { token: NO_ISSUES } });
        expect(report.results.map((r) => r.action)).toEqual(['proposed']);
        expect(report.dashboard).toMatchObject({ outcome: 'skipped' });
        expect(report.warnings.join('\n')).toMatch(/cannot read the dashboard: .*issues/);
        expect(f.dashboard()).toBeUndefined();
      });

      it("the control repository is found from the work tree's origin remote when it is on the forge's server", async () => {
        const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, { dashboard: true, copy: true });
        const { gh, controlRepo } = f.github!;
        execFileSync('git', ['init', '--quiet', '-b', 'main'], { cwd: f.control });
        execFileSync('git', ['remote', 'add', 'origin', `${gh.serverUrl}/${controlRepo}.git`], { cwd: f.control });
        expect((await f.run({ dashboard: undefined })).dashboard).toMatchObject({ outcome: 'created' });
        expect(f.dashboard()).toBeDefined();
        // a control repository elsewhere: no dashboard, and the report says why
        execFileSync('git', ['remote', 'set-url', 'origin', 'https://git.example/x/y.git'], { cwd: f.control });
        const elsewhere = await f.run({ dashboard: undefined });
        expect(elsewhere.dashboard).toMatchObject({ outcome: 'skipped', reason: expect.stringContaining('--dashboard-repo') });
      });
    }
  },
);
