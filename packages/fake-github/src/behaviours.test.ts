import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Octokit } from '@octokit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from './index.js';

// GitHub's behaviours the fake reproduces beyond its schemas: merges and their refusals, revoked
// tokens, installation tokens that reach one owner and expire on the fake's clock.

const run = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const fakes: FakeGitHub[] = [];
afterEach(async () => {
  for (const gh of fakes.splice(0)) {
    expect(gh.violations).toEqual([]);
    await gh.close();
  }
});

async function start(options: Parameters<typeof startFakeGitHub>[0] = {}) {
  const gh = await startFakeGitHub(options);
  fakes.push(gh);
  await gh.createRepo('org/repo');
  await gh.humanCommit('org/repo', 'topic', { 'a.txt': 'a\n' });
  return gh;
}

const kit = (gh: FakeGitHub, token = gh.token) => new Octokit({ auth: token, baseUrl: gh.apiUrl });
const status = (e: unknown) => (e as { status?: number }).status;

describe('the fake GitHub', () => {
  it('merges: 409 when the head moved since the sha given, 405 while a required check is missing, then squashes', async () => {
    const gh = await start();
    const ok = kit(gh);
    const { data: pull } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'repo',
      head: 'topic',
      base: 'main',
      title: 't',
    });
    const merge = (sha?: string) =>
      ok.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        owner: 'org',
        repo: 'repo',
        pull_number: pull.number,
        merge_method: 'squash',
        ...(sha ? { sha } : {}),
      });
    expect(status(await merge('0'.repeat(40)).catch((e) => e))).toBe(409);
    gh.requireStatusChecks('org/repo', 'main', ['kdelta']);
    expect(status(await merge().catch((e) => e))).toBe(405);
    await ok.request('POST /repos/{owner}/{repo}/statuses/{sha}', {
      owner: 'org',
      repo: 'repo',
      sha: pull.head.sha,
      state: 'success',
      context: 'kdelta',
    });
    expect((await merge(pull.head.sha)).data).toMatchObject({ merged: true });
    expect(gh.pulls('org/repo')[0]).toMatchObject({ state: 'closed', merged: true });
  });

  it('a revoked token gets 401 from the API and from git', async () => {
    const gh = await start({ tokens: { ghs_a: { login: 'a' } } });
    gh.revokeToken('ghs_a');
    expect(
      status(
        await kit(gh, 'ghs_a')
          .request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'repo' })
          .catch((e) => e),
      ),
    ).toBe(401);
    const auth = Buffer.from('x-access-token:ghs_a').toString('base64');
    const git = await run('git', ['-c', `http.extraHeader=Authorization: Basic ${auth}`, 'ls-remote', `${gh.serverUrl}/org/repo.git`], {
      env: GIT_ENV,
    }).catch((e: { stderr: string }) => e);
    expect((git as { stderr: string }).stderr).toMatch(/could not read Username|401/);
  });

  it('past the primary limit every request is refused (403, x-ratelimit-remaining 0, the reset time); rateLimitNext primary refuses the next ones so', async () => {
    const gh = await start({ rateLimit: 2 });
    const get = () =>
      kit(gh)
        .request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'repo' })
        .catch((e: { status: number; response: { headers: Record<string, string>; data: { message: string } } }) => e);
    expect(await get()).toMatchObject({ status: 200, headers: { 'x-ratelimit-remaining': '1' } });
    expect(await get()).toMatchObject({ status: 200, headers: { 'x-ratelimit-remaining': '0' } });
    const refused = await get();
    expect(refused).toMatchObject({
      status: 403,
      response: { headers: { 'x-ratelimit-remaining': '0' }, data: { message: expect.stringMatching(/^API rate limit exceeded/) } },
    });
    expect(Number((refused as { response: { headers: Record<string, string> } }).response.headers['x-ratelimit-reset'])).toBeGreaterThan(
      Date.now() / 1000,
    );

    const other = await start();
    other.rateLimitNext(1, 30, 'primary');
    const once = await kit(other)
      .request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'repo' })
      .catch((e: { status: number; response: { headers: Record<string, string> } }) => e);
    expect(once).toMatchObject({ status: 403, response: { headers: { 'x-ratelimit-remaining': '0' } } });
    const reset = Number((once as { response: { headers: Record<string, string> } }).response.headers['x-ratelimit-reset']);
    expect(reset - Date.now() / 1000).toBeGreaterThan(25);
    expect((await kit(other).request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'repo' })).status).toBe(200);
  });
});
