import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { listRemoteRefs } from '@kdelta/git-source';
import { run, type RunOptions } from '@kdelta/run';
import { copyMaterialize, type GitHubFleet, githubFleets } from './__fixtures__/github-fleet.js';

/**
 * `kdelta run --forge github` against GitHub as it really behaves (issue: GitHub at organisation
 * scale): private upstreams on the same server, auto-merge on a clean pull request, statuses on
 * the pushed commit, refused tokens, concurrent runs.
 */

const NO_STATUSES = 'ghs_no_statuses';
const NO_PULLS = 'ghs_no_pulls';
const REVOKED = 'ghs_soon_revoked';
const hub = githubFleets({
  fake: {
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      [NO_STATUSES]: { login: 'kdelta-bot', permissions: { contents: 'write', pull_requests: 'write', issues: 'write' } },
      [NO_PULLS]: { login: 'kdelta-bot', permissions: { contents: 'write', pull_requests: 'read', statuses: 'write' } },
      [REVOKED]: { login: 'kdelta-bot', permissions: 'all' },
    },
  },
});
const { cleanEnv } = hub;

type GhFleet = GitHubFleet & { pushUpstream(): Promise<void> };

/**
 * Downstream repositories on the fake GitHub; the upstream on disk, or (`privateUpstream`) on the
 * fake GitHub too, where every read needs a token.
 */
async function fleet(downstreams: string[], options: { privateUpstream?: boolean } = {}): Promise<GhFleet> {
  const labels = { env: 'prod' };
  const f = await hub.fleet(downstreams, { labels });
  let upstream = f.upstream;
  const pushUpstream = async () => {
    const header = `Authorization: Basic ${Buffer.from(`x-access-token:${hub.gh.token}`).toString('base64')}`;
    await promisify(execFile)(
      'git',
      ['-c', `http.extraHeader=${header}`, 'push', '--quiet', '--force', upstream, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'],
      { cwd: f.upstream },
    );
  };
  if (options.privateUpstream) {
    await hub.gh.createRepo(`${f.owner}/catalog`, { defaultBranch: 'side' });
    upstream = `${hub.gh.serverUrl}/${f.owner}/catalog.git`;
    await pushUpstream();
    // the repository list names the upstream on the fake GitHub instead of the one on disk
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', upstream),
        ...downstreams.map((d) => repository(d, `${hub.gh.serverUrl}/${f.slug(d)}.git`, labels)),
      ].join('---\n'),
    });
  }
  return Object.assign(f, { pushUpstream });
}

function opts(f: Fleet, github: RunOptions['github'] = {}, extra: Partial<RunOptions> = {}): RunOptions {
  return hub.runOptions(f, github, { materialize: copyMaterialize, ...extra });
}

describe('kdelta run --forge github, as GitHub behaves', () => {
  it('a private upstream on the same server is listed and fetched with the run token', async () => {
    const f = await fleet(['cluster-01'], { privateUpstream: true });
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    // the real 3-way update: the package is fetched from the upstream on the fake GitHub
    const report = await run(opts(f, {}, { materialize: undefined }));
    expect(report.results[0]?.error).toBeUndefined();
    expect(report.results[0]?.action).toBe('proposed');
    const [pull] = hub.gh.pulls(f.slug('cluster-01'));
    expect(pull?.state).toBe('open');
  });

  it('auto-merge on a clean pull request (no required check): merged with the chosen method, never reported failed', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const report = await run(opts(f, { autoMerge: 'squash' }));
    expect(report.failed).toBe(0);
    expect(report.results[0]).toMatchObject({ action: 'proposed', message: expect.stringMatching(/merged now \(squash\)/) });
    const [pull] = hub.gh.pulls(f.slug('cluster-01'));
    expect(pull).toMatchObject({ state: 'closed', merged: true });
    // squashed: one commit on main, whose parent is main's first commit
    const log = await promisify(execFile)('git', ['log', '--format=%s', 'main'], { cwd: hub.gh.gitDir(f.slug('cluster-01')) });
    expect(log.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    const again = await run(opts(f, { autoMerge: 'squash' }));
    expect(again.results[0]?.action).toBe('up-to-date');
  });

  it('auto-merge where the kdelta check is required: enabled, and the pull request waits for it', async () => {
    const f = await fleet(['cluster-01']);
    hub.gh.requireStatusChecks(f.slug('cluster-01'), 'main', ['kdelta', 'ci']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const report = await run(opts(f, { autoMerge: 'merge' }));
    expect(report.failed).toBe(0);
    expect(hub.gh.pulls(f.slug('cluster-01'))[0]).toMatchObject({ state: 'open', auto_merge: { merge_method: 'merge' } });
  });

  it('the status goes on the pushed commit, though GitHub moves the pull request head later', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await run(opts(f));
    const [before] = hub.gh.pulls(f.slug('cluster-01'));
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: moved\n' }, 'base-ns/v1');
    await hub.gh.holdHeads(true);
    try {
      const second = await run(opts(f));
      expect(second.results[0]?.action).toBe('updated');
    } finally {
      await hub.gh.holdHeads(false);
    }
    const [after] = hub.gh.pulls(f.slug('cluster-01'));
    expect(after!.head.sha).not.toBe(before!.head.sha);
    expect(hub.gh.statuses(f.slug('cluster-01'), after!.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
    expect(hub.gh.statuses(f.slug('cluster-01'), before!.head.sha)).toHaveLength(1);
  });

  it('a pull request opened from a branch an earlier, failed run pushed gets its status', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const failed = await run(opts(f, { token: NO_PULLS }));
    expect(failed.results[0]?.action).toBe('failed');
    expect(hub.gh.pulls(f.slug('cluster-01'))).toEqual([]);
    const next = await run(opts(f));
    expect(next.results[0]?.action).toBe('proposed');
    const [pull] = hub.gh.pulls(f.slug('cluster-01'));
    expect(hub.gh.statuses(f.slug('cluster-01'), pull!.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
  });

  it('a status that did not land leaves the pull request standing; the next run finds the commit without it and posts it', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const first = await run(opts(f, { token: NO_STATUSES }));
    expect(first.results[0]).toMatchObject({ action: 'proposed', message: expect.stringMatching(/statuses=write/) });
    const [pull] = hub.gh.pulls(f.slug('cluster-01'));
    expect(pull?.state).toBe('open');
    expect(hub.gh.statuses(f.slug('cluster-01'), pull!.head.sha)).toEqual([]);
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({ action: 'unchanged', writes: true });
    expect(hub.gh.statuses(f.slug('cluster-01'), pull!.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
    hub.gh.clearRequests();
    const third = await run(opts(f));
    expect(third.results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(hub.gh.writes()).toBe(0);
  });

  it('two runs at once: one pull request per variant; the run that loses the push to the same proposal reports it unchanged', async () => {
    const f = await fleet(['cluster-01', 'cluster-02']);
    f.writeControl({ 'a.yaml': packageVariant('a', 'cluster-01'), 'b.yaml': packageVariant('b', 'cluster-02') });
    const [one, two] = await Promise.all([run(opts(f)), run(opts(f))]);
    expect([...one!.results, ...two!.results].filter((r) => r.action === 'failed').map((r) => r.error)).toEqual([]);
    for (const variant of ['a', 'b']) {
      const actions = [one!, two!].map((r) => r.results.find((x) => x.variant === variant)?.action).sort();
      expect(actions).toEqual(['proposed', 'unchanged']);
    }
    expect(hub.gh.pulls(f.slug('cluster-01'))).toHaveLength(1);
    expect(hub.gh.pulls(f.slug('cluster-02'))).toHaveLength(1);
  });

  it('a revoked token: the API and git say the token was refused and name it, nothing about a missing user name', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const env = cleanEnv({ GITHUB_TOKEN: REVOKED });
    const ok = await run(opts(f, { token: undefined }, { env }));
    expect(ok.results[0]?.action).toBe('proposed');
    hub.gh.revokeToken(REVOKED);
    const refused = await run(opts(f, { token: undefined }, { env }));
    expect(refused.results[0]).toMatchObject({ action: 'failed' });
    expect(refused.results[0]?.error).toMatch(/GitHub refused GITHUB_TOKEN \(401 bad credentials: expired, revoked or mistyped\)/);
    const git = await listRemoteRefs({ repo: `${hub.gh.serverUrl}/${f.slug('cluster-01')}.git`, token: REVOKED, env: cleanEnv() }).catch(
      (e: Error) => e,
    );
    expect((git as Error).message).toMatch(
      /^git ls-remote failed: the server refused the token kdelta was given for 127\.0\.0\.1:\d+ \(HTTP 401/,
    );
    expect((git as Error).message).not.toMatch(/Username/);
    const named = await listRemoteRefs({
      repo: `${hub.gh.serverUrl}/${f.slug('cluster-01')}.git`,
      token: REVOKED,
      tokenName: 'the `token` input',
      env: cleanEnv(),
    }).catch((e: Error) => e);
    expect((named as Error).message).toMatch(/^git ls-remote failed: the server refused the `token` input \(HTTP 401/);
    expect((git as Error).message).not.toContain(REVOKED);
  });
});
