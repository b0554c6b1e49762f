import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import { copyMaterialize, githubFleets } from './__fixtures__/github-fleet.js';

/** The fleet dashboard on GitHub: an issue of the control repository, against a fake GitHub. */

const NO_ISSUES = 'ghs_no_issues';
const hub = githubFleets({
  fake: {
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      [NO_ISSUES]: { login: 'no-issues', permissions: { contents: 'write', pull_requests: 'write', statuses: 'write', metadata: 'read' } },
    },
  },
  owner: 'dash',
});

/** The downstreams and the control repository on the fake GitHub (the control repository on disk too). */
async function fleet(downstreams: string[]): Promise<Fleet & { controlRepo: string; owner: string }> {
  const f = await hub.fleet(downstreams);
  await hub.gh.createRepo(`${f.owner}/control`, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
  return Object.assign(f, { controlRepo: `${f.owner}/control` });
}

function opts(f: Fleet & { controlRepo: string }, extra: Partial<RunOptions> = {}): RunOptions {
  return hub.runOptions(f, {}, { materialize: copyMaterialize, dashboard: { repository: f.controlRepo }, ...extra });
}

const dashboards = (f: { controlRepo: string }) => hub.gh.issues(f.controlRepo).filter((i) => i.title === 'kdelta dashboard');

describe('the fleet dashboard (github)', () => {
  it('is one issue of the control repository, created once and rewritten only when it changed: a run with nothing new makes no write', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01'), 'bad.yaml': packageVariant('bad', 'cluster-01', '', 'v9') });
    const first = await run(opts(f));
    expect(first.dashboard).toMatchObject({ outcome: 'created' });
    expect(dashboards(f)).toHaveLength(1);
    const issue = dashboards(f)[0]!;
    expect(first.dashboard?.url).toBe(`${hub.gh.serverUrl}/${f.controlRepo}/issues/${issue.number}`);
    expect(issue.body).toContain('### Failed (1)\n\n- [ ] <!-- kdelta-retry:bad%20cluster-01%2Fbad --> retry `bad` → `cluster-01/bad`');
    const pr = hub.gh.pulls(`${f.owner}/cluster-01`)[0]!;
    expect(issue.body).toContain(
      `### Open proposals (1)\n\n- \`web\` → \`cluster-01/web\` · [proposal](${hub.gh.serverUrl}/${f.owner}/cluster-01/pull/${pr.number})\n`,
    );

    hub.gh.clearRequests();
    const again = await run(opts(f));
    expect(again.dashboard).toMatchObject({ outcome: 'unchanged' });
    expect(hub.gh.writes()).toBe(0);

    // something changed: the same issue is rewritten, no other is opened
    f.writeControl({ 'bad.yaml': null });
    hub.gh.clearRequests();
    const changed = await run(opts(f));
    expect(changed.dashboard).toMatchObject({ outcome: 'updated', url: first.dashboard?.url });
    expect(hub.gh.requests.filter((r) => r.operationId === 'issues/update')).toHaveLength(1);
    expect(hub.gh.requests.filter((r) => r.operationId === 'issues/create')).toHaveLength(0);
    expect(dashboards(f)).toHaveLength(1);
    expect(dashboards(f)[0]!.body).not.toContain('kdelta-retry');
  });

  it('"retry": the ticked failed variant runs first, before the write budget is spent on others; the box is cleared', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') });
    expect((await run(opts(f))).results.map((r) => r.action)).toEqual(['failed']);
    execFileSync('git', ['tag', 'v9', 'base-ns/v1'], { cwd: f.upstream });
    f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01') });
    const issue = dashboards(f)[0]!;
    hub.gh.editIssue(f.controlRepo, issue.number, issue.body!.replace('- [ ] <!-- kdelta-retry:', '- [x] <!-- kdelta-retry:'));
    // a budget for the dashboard's write and one new pull request (open it, post its status)
    const report = await run(opts(f, { budget: 3, concurrency: 1 }));
    expect(report.results.map((r) => [r.variant, r.action])).toEqual([
      ['aa', 'deferred'],
      ['zz', 'proposed'],
    ]);
    expect(report.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['zz cluster-01/zz'] } });
    const after = dashboards(f)[0]!.body!;
    expect(after).not.toContain('- [x]');
    expect(after).toContain("### Deferred: the run's write budget was spent (1)\n\n- `aa` → `cluster-01/aa`\n");
  });

  it('without the tick, the same run goes in its own order', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') });
    await run(opts(f));
    execFileSync('git', ['tag', 'v9', 'base-ns/v1'], { cwd: f.upstream });
    f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01') });
    const report = await run(opts(f, { budget: 3, concurrency: 1 }));
    expect(report.results.map((r) => [r.variant, r.action])).toEqual([
      ['aa', 'proposed'],
      ['zz', 'deferred'],
    ]);
  });

  it('a tick made while the run went on is left for the next run, which acts on it', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') });
    await run(opts(f));
    const number = dashboards(f)[0]!.number;
    f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01') });
    // the person ticks the box while the run is busy with its jobs
    const ticked = run(
      opts(f, {
        onProgress: (e) => {
          if (e.type === 'done' && e.result.variant === 'aa') {
            const body = hub.gh.issues(f.controlRepo).find((i) => i.number === number)!.body!;
            hub.gh.editIssue(f.controlRepo, number, body.replace('- [ ] <!-- kdelta-retry:', '- [x] <!-- kdelta-retry:'));
          }
        },
        concurrency: 1,
      }),
    );
    const raced = await ticked;
    expect(raced.dashboard).toMatchObject({ outcome: 'raced' });
    expect(raced.warnings.join('\n')).toContain('the dashboard changed while the run went on');
    expect(dashboards(f)[0]!.body).toContain('- [x] <!-- kdelta-retry:zz%20cluster-01%2Fzz -->');
    const next = await run(opts(f));
    expect(next.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['zz cluster-01/zz'] } });
    expect(dashboards(f)[0]!.body).not.toContain('- [x]');
  });

  it('a token that may not read issues: the run goes on without the dashboard and says why', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const report = await run(opts(f, { github: { ...opts(f).github, token: NO_ISSUES } }));
    expect(report.results.map((r) => r.action)).toEqual(['proposed']);
    expect(report.dashboard).toMatchObject({ outcome: 'skipped' });
    expect(report.warnings.join('\n')).toMatch(/cannot read the dashboard: .*issues/);
    expect(dashboards(f)).toHaveLength(0);
  });

  it("the control repository is found from the work tree's origin remote when it is on the forge's server", async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    execFileSync('git', ['init', '--quiet', '-b', 'main'], { cwd: f.control });
    execFileSync('git', ['remote', 'add', 'origin', `${hub.gh.serverUrl}/${f.controlRepo}.git`], { cwd: f.control });
    const report = await run(opts(f, { dashboard: undefined }));
    expect(report.dashboard).toMatchObject({ outcome: 'created' });
    expect(dashboards(f)).toHaveLength(1);
    // a control repository elsewhere: no dashboard, and the report says why
    execFileSync('git', ['remote', 'set-url', 'origin', 'https://git.example/x/y.git'], { cwd: f.control });
    const elsewhere = await run(opts(f, { dashboard: undefined }));
    expect(elsewhere.dashboard).toMatchObject({ outcome: 'skipped', reason: expect.stringContaining('--dashboard-repo') });
  });
});
