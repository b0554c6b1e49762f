import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runMain } from './__fixtures__/fleet.js';
import { type GitHubFleet, githubFleet, githubInputs } from './__fixtures__/fleets.js';

// The Action (its sources, in this process, with the runner's environment) against a fake GitHub
// on 127.0.0.1 (REST, GraphQL, git over HTTP): what a workflow run would do to real repositories
// and pull requests, with every request counted. The bundle's own start is dist.test.ts.

function branchSha(s: GitHubFleet, repo: string, branch: string): string {
  return execFileSync('git', ['rev-parse', `refs/heads/${branch}`], { cwd: s.gh.gitDir(repo), encoding: 'utf8' }).trim();
}

describe('the Action against a fake GitHub', () => {
  it('a moved tag updates the open pull requests (no new ones)', async () => {
    const s = await githubFleet();
    expect((await runMain(s.f.control, githubInputs(s), s.env)).status).toBe(0);
    const before = branchSha(s, 'org/cluster-01', 'kdelta/web');
    s.f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # v1.1\n' }, 'base-ns/v1');
    const r = await runMain(s.f.control, githubInputs(s), s.env);
    expect(r.status).toBe(0);
    expect(r.outputs).toMatchObject({ created: '0', updated: '2' });
    expect(branchSha(s, 'org/cluster-01', 'kdelta/web')).not.toBe(before);
    expect(s.gh.pulls('org/cluster-01')).toHaveLength(1);
    expect(s.gh.pulls('org/cluster-01')[0]!.head.sha).toBe(branchSha(s, 'org/cluster-01', 'kdelta/web'));
  });

  it('as a GitHub App (app-id, private-key): pull requests opened with installation tokens, each masked before use', async () => {
    const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const s = await githubFleet(undefined, { apps: [{ id: 77, privateKey, installations: { org: { id: 7 } } }] });
    const r = await runMain(s.f.control, githubInputs(s, { token: '', 'app-id': '77', 'private-key': privateKey }), s.env);
    expect(r.status).toBe(0);
    expect(r.outputs).toMatchObject({ created: '2', failed: '0' });
    const minted = s.gh.installationTokens.get(7) ?? [];
    expect(minted.length).toBeGreaterThan(0);
    for (const token of minted) {
      expect(r.stdout).toContain(`::add-mask::${token}`);
      // masked before anything else could show it
      expect(r.stdout.indexOf(`::add-mask::${token}`)).toBe(r.stdout.indexOf(token) - '::add-mask::'.length);
    }
    const body = privateKey.split('\n').find((l) => l !== '' && !l.startsWith('-----'))!;
    expect(r.stdout).toContain(`::add-mask::${body}`);
    expect(
      new Set(s.gh.requests.filter((q) => q.path.startsWith('/repos/org/') && !q.operationId?.startsWith('apps/')).map((q) => q.actor)),
    ).toEqual(new Set(['installation:7']));
  });

  it('a suspended App installation fails with "unsuspend it", not with advice to pass another token', async () => {
    const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const s = await githubFleet(undefined, { apps: [{ id: 77, privateKey, installations: { org: { id: 7, suspended: true } } }] });
    const r = await runMain(s.f.control, githubInputs(s, { token: '', 'app-id': '77', 'private-key': privateKey }), s.env);
    expect(r.status).toBe(1);
    const error = r.stdout.split('\n').find((l) => l.startsWith('::error::'))!;
    expect(error).toMatch(/installation on org is suspended/);
    expect(error).toMatch(/unsuspend/);
    expect(r.stdout).not.toMatch(/pass a GitHub App installation token|fine-grained token/);
  });

  it('a secondary rate limit is waited out and the run completes', async () => {
    const s = await githubFleet();
    s.gh.rateLimitNext(2, 1);
    const r = await runMain(s.f.control, githubInputs(s), s.env);
    expect(r.status).toBe(0);
    expect(r.outputs).toMatchObject({ created: '2', failed: '0' });
    expect(s.gh.requests.filter((q) => q.status === 403)).toHaveLength(2);
  });

  it('an exhausted budget defers the rest without failing; the next run finishes them', async () => {
    const s = await githubFleet();
    // a new pull request with labels costs 3 content-creating requests (open, label, status):
    // room for one of the two
    const first = await runMain(s.f.control, githubInputs(s, { budget: '3', concurrency: '1' }), s.env);
    expect(first.status).toBe(0);
    expect(first.outputs).toMatchObject({ created: '1', deferred: '1', failed: '0' });
    expect(first.summary).toContain('API budget: 3 of 3 used — exhausted: the deferred variants run next time.');
    expect(first.summary).toMatch(/\| \*\*deferred\*\* \|/);
    expect(s.gh.pulls('org/cluster-01').length + s.gh.pulls('org/cluster-02').length).toBe(1);
    const second = await runMain(s.f.control, githubInputs(s), s.env);
    expect(second.status).toBe(0);
    expect(second.outputs).toMatchObject({ created: '1', unchanged: '1', deferred: '0', failed: '0' });
    expect(s.gh.pulls('org/cluster-01')).toHaveLength(1);
    expect(s.gh.pulls('org/cluster-02')).toHaveLength(1);
  });

  it('a token without pull-requests write fails with what to give it', async () => {
    const s = await githubFleet({
      ghs_readonly: { login: 'reader', permissions: { contents: 'write', pull_requests: 'read', metadata: 'read' } },
    });
    const r = await runMain(s.f.control, { ...githubInputs(s), token: 'ghs_readonly' }, s.env);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/pull_requests=write/);
    expect(r.stdout).toMatch(
      /::error::every variant failed \(2\)\. api → cluster-02\/api: .*give the workflow `permissions: pull-requests: write`/,
    );
    expect(r.stdout.split('\n').slice(1).join('\n')).not.toContain('ghs_readonly');
  });

  it("keeps the fleet dashboard as an issue of the workflow's repository, written only when it changed; dashboard false keeps none", async () => {
    const s = await githubFleet();
    await s.gh.createRepo('org/control', { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
    const env = { ...s.env, GITHUB_REPOSITORY: 'org/control' };
    const first = await runMain(s.f.control, githubInputs(s), env);
    expect(first.status).toBe(0);
    const issues = s.gh.issues('org/control');
    const url = `${s.gh.serverUrl}/org/control/issues/${issues[0]?.number}`;
    expect(first.summary).toContain(`Fleet dashboard: [${url}](${url}).`);
    expect(first.stdout).toContain(`kdelta: dashboard ${url} (created)`);
    // a run of one mode sees only its part of the fleet: its dashboard is its own
    expect(issues.map((i) => i.title)).toEqual(['kdelta dashboard (variants)']);
    expect(issues[0]!.body).toContain('2 variant(s): 0 need attention, 2 open proposal(s), 0 up to date.');
    s.gh.clearRequests();
    expect((await runMain(s.f.control, githubInputs(s), env)).status).toBe(0);
    expect(s.gh.writes()).toBe(0);
    const off = await s.gh.createRepo('org/other', { defaultBranch: 'main' }).then(() => ({ ...s.env, GITHUB_REPOSITORY: 'org/other' }));
    expect((await runMain(s.f.control, githubInputs(s, { dashboard: 'false' }), off)).status).toBe(0);
    expect(s.gh.issues('org/other')).toEqual([]);
  });

  it('a human commit on a pull request branch is left alone while nothing moves, and carried forward when the tag moves', async () => {
    const s = await githubFleet();
    expect((await runMain(s.f.control, githubInputs(s), s.env)).status).toBe(0);
    await s.gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web/notes.md': 'mine\n' });
    const human = branchSha(s, 'org/cluster-01', 'kdelta/web');
    const still = await runMain(s.f.control, githubInputs(s), s.env);
    expect(still.status).toBe(0);
    expect(branchSha(s, 'org/cluster-01', 'kdelta/web')).toBe(human);
    expect(still.stdout).toMatch(/::warning title=kdelta%3A web → cluster-01\/web::branch kdelta\/web has 1 commit/);
    expect(still.summary).toMatch(/\| web \| cluster-01\/web \| \*\*blocked\*\* \|/);

    s.f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # v1.1\n' }, 'base-ns/v1');
    const r = await runMain(s.f.control, githubInputs(s), s.env);
    expect(r.status).toBe(0);
    expect(r.outputs).toMatchObject({ updated: '2' });
    const after = branchSha(s, 'org/cluster-01', 'kdelta/web');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: s.gh.gitDir('org/cluster-01'), encoding: 'utf8' }).trim();
    expect(git('rev-parse', `${after}^`)).toBe(human);
    expect(git('show', `${after}:web/notes.md`)).toBe('mine');
    expect(git('show', `${after}:web/namespace.yaml`)).toContain('# v1.1');
  });
});
