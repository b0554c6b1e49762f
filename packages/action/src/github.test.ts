import { execFileSync } from 'node:child_process';
import { type FakeGitHub, startFakeGitHub } from '@kdelta/fake-github';
import { afterEach, describe, expect, it } from 'vitest';
import { createFleet, type Fleet, packageVariant, repository, runAction } from './__fixtures__/fleet.js';

// The committed bundle against a fake GitHub on 127.0.0.1 (REST, GraphQL, git over HTTP): what a
// workflow run would do to real repositories and pull requests, with every request counted.

interface Setup {
  readonly f: Fleet;
  readonly gh: FakeGitHub;
  readonly env: Record<string, string>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const CLUSTERS = ['org/cluster-01', 'org/cluster-02'];

async function setup(
  tokens?: Parameters<typeof startFakeGitHub>[0] extends infer O ? (O extends { tokens?: infer T } ? T : never) : never,
): Promise<Setup> {
  const gh = await startFakeGitHub(tokens ? { tokens } : {});
  cleanups.push(() => gh.close());
  const f = createFleet([]);
  cleanups.push(() => f.cleanup());
  const urls: string[] = [];
  for (const name of CLUSTERS)
    urls.push((await gh.createRepo(name, { defaultBranch: 'main', files: { 'README.md': `# ${name}\n` } })).cloneUrl);
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', urls[0]!), repository('cluster-02', urls[1]!)].join(
      '---\n',
    ),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'api.yaml': packageVariant('api', 'cluster-02'),
  });
  return { f, gh, env: { GITHUB_API_URL: gh.apiUrl, GITHUB_SERVER_URL: gh.serverUrl, GITHUB_GRAPHQL_URL: gh.graphqlUrl } };
}

function inputs(s: Setup, extra: Record<string, string> = {}): Record<string, string> {
  return { forge: 'github', mode: 'variants', token: s.gh.token, labels: 'kdelta, fleet', ...extra };
}

function branchSha(s: Setup, repo: string, branch: string): string {
  return execFileSync('git', ['rev-parse', `refs/heads/${branch}`], { cwd: s.gh.gitDir(repo), encoding: 'utf8' }).trim();
}

describe('the bundled Action against a fake GitHub', () => {
  it('the first run opens the pull requests; the second makes no write request', async () => {
    const s = await setup();
    const first = await runAction(s.f.control, inputs(s), s.env);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.outputs).toMatchObject({ created: '2', updated: '0', failed: '0' });
    const prs = JSON.parse(first.outputs['pull-requests']!) as { variant: string; number: number; url: string; state: string }[];
    expect(prs.map((p) => [p.variant, p.number, p.state])).toEqual([
      ['api', 1, 'open'],
      ['web', 1, 'open'],
    ]);
    expect(prs[1]!.url).toBe(`${s.gh.serverUrl}/org/cluster-01/pull/1`);
    const [pull] = s.gh.pulls('org/cluster-01');
    expect(pull).toMatchObject({ state: 'open', head: { ref: 'kdelta/web' }, base: { ref: 'main' }, labels: ['kdelta', 'fleet'] });
    expect(first.summary).toContain(`[#1](${s.gh.serverUrl}/org/cluster-01/pull/1)`);
    expect(s.gh.violations).toEqual([]);

    s.gh.clearRequests();
    const second = await runAction(s.f.control, inputs(s), s.env);
    expect(second.status).toBe(0);
    expect(second.outputs).toMatchObject({ created: '0', updated: '0', unchanged: '2' });
    expect(s.gh.writes()).toBe(0);
    expect(s.gh.pulls('org/cluster-01')).toHaveLength(1);
  });

  it('a moved tag updates the open pull requests (no new ones)', async () => {
    const s = await setup();
    expect((await runAction(s.f.control, inputs(s), s.env)).status).toBe(0);
    const before = branchSha(s, 'org/cluster-01', 'kdelta/web');
    s.f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # v1.1\n' }, 'base-ns/v1');
    const r = await runAction(s.f.control, inputs(s), s.env);
    expect(r.status).toBe(0);
    expect(r.outputs).toMatchObject({ created: '0', updated: '2' });
    expect(branchSha(s, 'org/cluster-01', 'kdelta/web')).not.toBe(before);
    expect(s.gh.pulls('org/cluster-01')).toHaveLength(1);
    expect(s.gh.pulls('org/cluster-01')[0]!.head.sha).toBe(branchSha(s, 'org/cluster-01', 'kdelta/web'));
  });

  it('a secondary rate limit is waited out and the run completes', async () => {
    const s = await setup();
    s.gh.rateLimitNext(2, 1);
    const r = await runAction(s.f.control, inputs(s), s.env);
    expect(r.status).toBe(0);
    expect(r.outputs).toMatchObject({ created: '2', failed: '0' });
    expect(s.gh.requests.filter((q) => q.status === 403)).toHaveLength(2);
  });

  it('an exhausted budget defers the rest without failing; the next run finishes them', async () => {
    const s = await setup();
    // a new pull request with labels costs 3 content-creating requests (open, label, status):
    // room for one of the two
    const first = await runAction(s.f.control, inputs(s, { budget: '3', concurrency: '1' }), s.env);
    expect(first.status).toBe(0);
    expect(first.outputs).toMatchObject({ created: '1', deferred: '1', failed: '0' });
    expect(first.summary).toContain('API budget: 3 of 3 used — exhausted: the deferred variants run next time.');
    expect(first.summary).toMatch(/\| \*\*deferred\*\* \|/);
    expect(s.gh.pulls('org/cluster-01').length + s.gh.pulls('org/cluster-02').length).toBe(1);
    const second = await runAction(s.f.control, inputs(s), s.env);
    expect(second.status).toBe(0);
    expect(second.outputs).toMatchObject({ created: '1', unchanged: '1', deferred: '0', failed: '0' });
    expect(s.gh.pulls('org/cluster-01')).toHaveLength(1);
    expect(s.gh.pulls('org/cluster-02')).toHaveLength(1);
  });

  it('a token without pull-requests write fails with what to give it', async () => {
    const s = await setup({
      ghs_readonly: { login: 'reader', permissions: { contents: 'write', pull_requests: 'read', metadata: 'read' } },
    });
    const r = await runAction(s.f.control, { ...inputs(s), token: 'ghs_readonly' }, s.env);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/pull_requests=write/);
    expect(r.stdout).toMatch(
      /::error::every variant failed \(2\)\. api → cluster-02\/api: .*give the workflow `permissions: pull-requests: write`/,
    );
    expect(r.stdout.split('\n').slice(1).join('\n')).not.toContain('ghs_readonly');
  });

  it('a human commit on a pull request branch is left alone', async () => {
    const s = await setup();
    expect((await runAction(s.f.control, inputs(s), s.env)).status).toBe(0);
    await s.gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web/notes.md': 'mine\n' });
    const human = branchSha(s, 'org/cluster-01', 'kdelta/web');
    s.f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # v1.1\n' }, 'base-ns/v1');
    const r = await runAction(s.f.control, inputs(s), s.env);
    expect(r.status).toBe(0);
    expect(branchSha(s, 'org/cluster-01', 'kdelta/web')).toBe(human);
    expect(r.stdout).toMatch(/::warning title=kdelta%3A web → cluster-01\/web::branch kdelta\/web has 1 commit/);
    expect(r.summary).toMatch(/\| web \| cluster-01\/web \| \*\*blocked\*\* \|/);
    expect(r.outputs).toMatchObject({ updated: '1', unchanged: '1' });
  });
});
