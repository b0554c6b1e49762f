import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { getPackageFiles, type Materialize, run, type RunOptions } from '@kdelta/run';

/** The fleet dashboard on GitHub: an issue of the control repository, against a fake GitHub. */

const copyMaterialize: Materialize = async (input) => {
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};

const NO_ISSUES = 'ghs_no_issues';
let gh: FakeGitHub;
const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-ghdash-cache-'));
beforeAll(async () => {
  gh = await startFakeGitHub({
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      [NO_ISSUES]: { login: 'no-issues', permissions: { contents: 'write', pull_requests: 'write', statuses: 'write', metadata: 'read' } },
    },
  });
});
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(async () => {
  expect(gh.violations).toEqual([]);
  await gh.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

let org = 0;

async function fleet(downstreams: string[]): Promise<Fleet & { control: string; controlRepo: string; owner: string }> {
  const f = createFleet([]);
  fleets.push(f);
  const owner = `dash-${++org}`;
  for (const d of downstreams) await gh.createRepo(`${owner}/${d}`, { defaultBranch: 'main', files: { 'README.md': `# ${d}\n` } });
  await gh.createRepo(`${owner}/control`, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      ...downstreams.map((d) => repository(d, `${gh.serverUrl}/${owner}/${d}.git`)),
    ].join('---\n'),
  });
  return Object.assign(f, { controlRepo: `${owner}/control`, owner });
}

function opts(f: { control: string; controlRepo: string }, extra: Partial<RunOptions> = {}): RunOptions {
  const env: Record<string, string | undefined> = { ...process.env, KDELTA_CACHE_DIR: cacheDir };
  for (const k of ['GITHUB_TOKEN', 'GH_TOKEN', 'KDELTA_GIT_TOKEN', 'GITHUB_API_URL', 'GITHUB_SERVER_URL', 'GITHUB_REPOSITORY'])
    delete env[k];
  return {
    cwd: f.control,
    cacheDir,
    env,
    forge: 'github',
    materialize: copyMaterialize,
    github: { token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, pacing: { writeSpacing: false, retryAfterUnitMs: 20 } },
    dashboard: { repository: f.controlRepo },
    ...extra,
  };
}

const dashboards = (f: { controlRepo: string }) => gh.issues(f.controlRepo).filter((i) => i.title === 'kdelta dashboard');

describe('the fleet dashboard (github)', () => {
  it('is one issue of the control repository, created once and rewritten only when it changed: a run with nothing new makes no write', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01'), 'bad.yaml': packageVariant('bad', 'cluster-01', '', 'v9') });
    const first = await run(opts(f));
    expect(first.dashboard).toMatchObject({ outcome: 'created' });
    expect(dashboards(f)).toHaveLength(1);
    const issue = dashboards(f)[0]!;
    expect(first.dashboard?.url).toBe(`${gh.serverUrl}/${f.controlRepo}/issues/${issue.number}`);
    expect(issue.body).toContain('### Failed (1)\n\n- [ ] <!-- kdelta-retry:bad%20cluster-01%2Fbad --> retry `bad` → `cluster-01/bad`');
    const pr = gh.pulls(`${f.owner}/cluster-01`)[0]!;
    expect(issue.body).toContain(
      `### Open proposals (1)\n\n- \`web\` → \`cluster-01/web\` · [proposal](${gh.serverUrl}/${f.owner}/cluster-01/pull/${pr.number})\n`,
    );

    gh.clearRequests();
    const again = await run(opts(f));
    expect(again.dashboard).toMatchObject({ outcome: 'unchanged' });
    expect(gh.writes()).toBe(0);

    // something changed: the same issue is rewritten, no other is opened
    f.writeControl({ 'bad.yaml': null });
    gh.clearRequests();
    const changed = await run(opts(f));
    expect(changed.dashboard).toMatchObject({ outcome: 'updated', url: first.dashboard?.url });
    expect(gh.requests.filter((r) => r.operationId === 'issues/update')).toHaveLength(1);
    expect(gh.requests.filter((r) => r.operationId === 'issues/create')).toHaveLength(0);
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
    gh.editIssue(f.controlRepo, issue.number, issue.body!.replace('- [ ] <!-- kdelta-retry:', '- [x] <!-- kdelta-retry:'));
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
            const body = gh.issues(f.controlRepo).find((i) => i.number === number)!.body!;
            gh.editIssue(f.controlRepo, number, body.replace('- [ ] <!-- kdelta-retry:', '- [x] <!-- kdelta-retry:'));
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
    execFileSync('git', ['remote', 'add', 'origin', `${gh.serverUrl}/${f.controlRepo}.git`], { cwd: f.control });
    const report = await run(opts(f, { dashboard: undefined }));
    expect(report.dashboard).toMatchObject({ outcome: 'created' });
    expect(dashboards(f)).toHaveLength(1);
    // a control repository elsewhere: no dashboard, and the report says why
    execFileSync('git', ['remote', 'set-url', 'origin', 'https://git.example/x/y.git'], { cwd: f.control });
    const elsewhere = await run(opts(f, { dashboard: undefined }));
    expect(elsewhere.dashboard).toMatchObject({ outcome: 'skipped', reason: expect.stringContaining('--dashboard-repo') });
  });
});
