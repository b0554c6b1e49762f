import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from './index.js';

const REPO = 'org/cluster-01';
const ThrottledOctokit = Octokit.plugin(throttling, retry);

let gh: FakeGitHub;
let work: string;

const run = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

// Asynchronous: the fake serves git from this same process, so a synchronous git would wait on itself.
async function sh(cwd: string, args: string[], token = gh.token): Promise<string> {
  const auth = Buffer.from(`x-access-token:${token}`).toString('base64');
  const { stdout } = await run('git', ['-c', `http.extraHeader=Authorization: Basic ${auth}`, ...args], {
    cwd,
    encoding: 'utf8',
    env: GIT_ENV,
  });
  return stdout;
}

/** A plain client (the throttled one spaces writes a second apart) for most tests. */
function octokit(token = gh.token) {
  return new Octokit({ auth: token, baseUrl: gh.apiUrl, headers: { 'X-GitHub-Api-Version': '2022-11-28' } });
}

/** The client the forge uses: throttling and retry plugins. */
function throttledOctokit(token = gh.token) {
  return new ThrottledOctokit({
    auth: token,
    baseUrl: gh.apiUrl,
    headers: { 'X-GitHub-Api-Version': '2022-11-28' },
    throttle: {
      onRateLimit: () => true,
      onSecondaryRateLimit: (_after: number, _opts: unknown, _o: unknown, retryCount: number) => retryCount < 2,
    },
    retry: { doNotRetry: [400, 401, 403, 404, 422] },
  });
}

/** A clone with a new branch pushed over HTTP; returns the branch's commit. */
async function pushBranch(branch: string, file: string, content: string): Promise<string> {
  const dir = join(work, `clone-${branch.replace(/\W/g, '-')}-${Math.random().toString(36).slice(2)}`);
  await sh(work, ['clone', '--quiet', `${gh.serverUrl}/${REPO}.git`, dir]);
  await sh(dir, ['checkout', '--quiet', '-b', branch]);
  writeFileSync(join(dir, file), content);
  await sh(dir, ['add', '.']);
  await sh(dir, ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', 'commit', '--quiet', '-m', `edit ${file}`]);
  await sh(dir, ['push', '--quiet', 'origin', branch]);
  return (await sh(dir, ['rev-parse', 'HEAD'])).trim();
}

beforeAll(async () => {
  gh = await startFakeGitHub({
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      ghs_readonly: { login: 'reader', permissions: { contents: 'read', pull_requests: 'read' } },
    },
  });
  work = mkdtempSync(join(tmpdir(), 'fake-github-test-'));
  await gh.createRepo(REPO, { defaultBranch: 'main', files: { 'README.md': 'hi\n' } });
});

afterAll(async () => {
  await gh.close();
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
});

describe('repositories and git over HTTP', () => {
  it('serves the repository and its default branch', async () => {
    const { data, headers } = await octokit().request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'cluster-01' });
    expect(data.full_name).toBe(REPO);
    expect(data.default_branch).toBe('main');
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers['x-github-request-id']).toMatch(/\S/);
    expect(headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  });

  it('answers 401 Bad credentials to an unknown token', async () => {
    await expect(octokit('ghs_wrong').request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'cluster-01' })).rejects.toMatchObject({
      status: 401,
      message: expect.stringContaining('Bad credentials'),
    });
    expect(gh.requests.at(-1)).toMatchObject({ status: 401, operationId: 'repos/get', write: false });
  });

  it('a push over HTTP lands in the bare repository the API reads', async () => {
    const sha = await pushBranch('kdelta/push', 'a.txt', 'a\n');
    expect(execFileSync('git', ['--git-dir', gh.gitDir(REPO), 'rev-parse', 'refs/heads/kdelta/push'], { encoding: 'utf8' }).trim()).toBe(
      sha,
    );
    const { data } = await octokit().request('GET /repos/{owner}/{repo}/git/ref/{ref}', {
      owner: 'org',
      repo: 'cluster-01',
      ref: 'heads/kdelta/push',
    });
    expect(data.object.sha).toBe(sha);
  });

  it('refuses a push without contents: write, and a clone without a token', async () => {
    const dir = join(work, 'ro');
    await sh(work, ['clone', '--quiet', `${gh.serverUrl}/${REPO}.git`, dir], 'ghs_readonly');
    await sh(dir, ['checkout', '--quiet', '-b', 'kdelta/denied']);
    await expect(sh(dir, ['push', '--quiet', 'origin', 'kdelta/denied'], 'ghs_readonly')).rejects.toThrow(/403/);
    await expect(run('git', ['clone', '--quiet', `${gh.serverUrl}/${REPO}.git`, join(work, 'anon')], { env: GIT_ENV })).rejects.toThrow(
      /Authentication failed|could not read Username/,
    );
  });

  it('accepts credentials in the URL (x-access-token:<token>)', async () => {
    const url = gh.serverUrl.replace('http://', `http://x-access-token:${gh.token}@`) + `/${REPO}.git`;
    await run('git', ['clone', '--quiet', url, join(work, 'url-creds')], { env: GIT_ENV });
    expect((await run('git', ['-C', join(work, 'url-creds'), 'log', '--format=%s'], { env: GIT_ENV })).stdout).toMatch(/Initial commit/);
  });
});

describe('pull requests', () => {
  it('opens a PR, refuses the duplicate with 422, finds it by head', async () => {
    const sha = await pushBranch('kdelta/web', 'web.yaml', 'kind: Web\n');
    const ok = octokit();
    const { data, status } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'Update web',
      head: 'kdelta/web',
      base: 'main',
      body: 'changes',
      draft: true,
    });
    expect(status).toBe(201);
    expect(data.head.sha).toBe(sha);
    expect(data.draft).toBe(true);
    expect(data.commits).toBe(1);

    const dup = ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'again',
      head: 'org:kdelta/web',
      base: 'main',
    });
    await expect(dup).rejects.toMatchObject({
      status: 422,
      response: {
        data: {
          message: 'Validation Failed',
          errors: [{ resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for org:kdelta/web.' }],
        },
      },
    });

    const list = await ok.request('GET /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      head: 'org:kdelta/web',
      state: 'open',
    });
    expect(list.data.map((p) => p.number)).toEqual([data.number]);
    const none = await ok.request('GET /repos/{owner}/{repo}/pulls', { owner: 'org', repo: 'cluster-01', head: 'org:kdelta/other' });
    expect(none.data).toEqual([]);
    expect(gh.pulls(REPO).find((p) => p.number === data.number)).toMatchObject({
      title: 'Update web',
      state: 'open',
      head: { ref: 'kdelta/web', sha },
    });
  });

  it('opens one pull request when many requests for the same head arrive at once', async () => {
    await pushBranch('kdelta/at-once', 'at-once.txt', 'x\n');
    const ok = octokit();
    const open = () =>
      ok.request('POST /repos/{owner}/{repo}/pulls', {
        owner: 'org',
        repo: 'cluster-01',
        title: 't',
        head: 'kdelta/at-once',
        base: 'main',
      });
    const answers = await Promise.allSettled(Array.from({ length: 6 }, open));
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    for (const a of answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected')) {
      expect(a.reason).toMatchObject({
        status: 422,
        response: { data: { errors: [{ message: 'A pull request already exists for org:kdelta/at-once.' }] } },
      });
    }
    expect(gh.pulls(REPO).filter((p) => p.head.ref === 'kdelta/at-once')).toHaveLength(1);
  });

  it('answers 422 when the head branch does not exist or has no commits', async () => {
    const ok = octokit();
    await expect(
      ok.request('POST /repos/{owner}/{repo}/pulls', {
        owner: 'org',
        repo: 'cluster-01',
        title: 't',
        head: 'kdelta/missing',
        base: 'main',
      }),
    ).rejects.toMatchObject({ status: 422, response: { data: { errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }] } } });
    await expect(
      ok.request('POST /repos/{owner}/{repo}/pulls', { owner: 'org', repo: 'cluster-01', title: 't', head: 'main', base: 'main' }),
    ).rejects.toMatchObject({
      status: 422,
      response: { data: { errors: [{ code: 'custom', message: 'No commits between main and main' }] } },
    });
  });

  it('paginates the list with a Link header', async () => {
    for (const b of ['kdelta/p1', 'kdelta/p2', 'kdelta/p3']) {
      await pushBranch(b, `${b.slice(7)}.txt`, 'x\n');
      await octokit().request('POST /repos/{owner}/{repo}/pulls', { owner: 'org', repo: 'cluster-01', title: b, head: b, base: 'main' });
    }
    const first = await octokit().request('GET /repos/{owner}/{repo}/pulls', { owner: 'org', repo: 'cluster-01', per_page: 2, page: 1 });
    expect(first.data).toHaveLength(2);
    expect(first.headers.link).toMatch(/page=2>; rel="next"/);
    const total = gh.pulls(REPO).filter((p) => p.state === 'open').length;
    const last = Math.ceil(total / 2);
    const lastPage = await octokit().request('GET /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      per_page: 2,
      page: last,
    });
    expect(lastPage.headers.link).not.toMatch(/rel="next"/);
    expect(first.data.length + (last - 1) * 2 - 2 + lastPage.data.length).toBe(total);
  });

  it('labels, assignees and reviewers', async () => {
    const sha = await pushBranch('kdelta/labels', 'l.txt', 'l\n');
    const ok = octokit();
    const { data: pr } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'l',
      head: 'kdelta/labels',
      base: 'main',
    });
    const labels = await ok.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
      owner: 'org',
      repo: 'cluster-01',
      issue_number: pr.number,
      labels: ['kdelta', 'kdelta:update'],
    });
    expect(labels.data.map((l) => l.name)).toEqual(['kdelta', 'kdelta:update']);
    await ok.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', {
      owner: 'org',
      repo: 'cluster-01',
      issue_number: pr.number,
      name: 'kdelta:update',
    });
    await ok.request('POST /repos/{owner}/{repo}/issues/{issue_number}/assignees', {
      owner: 'org',
      repo: 'cluster-01',
      issue_number: pr.number,
      assignees: ['alice'],
    });
    await ok.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers', {
      owner: 'org',
      repo: 'cluster-01',
      pull_number: pr.number,
      reviewers: ['bob'],
      team_reviewers: ['platform'],
    });
    gh.addLabel(REPO, pr.number, 'kdelta:stop');
    const snap = gh.pulls(REPO).find((p) => p.number === pr.number)!;
    expect(snap).toMatchObject({
      labels: ['kdelta', 'kdelta:stop'],
      assignees: ['alice'],
      requested_reviewers: ['bob'],
      requested_teams: ['platform'],
      head: { sha },
    });
    const { data: got } = await ok.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
      owner: 'org',
      repo: 'cluster-01',
      pull_number: pr.number,
    });
    expect(got.labels.map((l) => l.name)).toEqual(['kdelta', 'kdelta:stop']);
    await expect(
      ok.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', {
        owner: 'org',
        repo: 'cluster-01',
        issue_number: pr.number,
        name: 'absent',
      }),
    ).rejects.toMatchObject({ status: 404 });
    // a label GitHub would have to create with a name over 50 characters: refused, none added
    const long = 'x'.repeat(51);
    await expect(
      ok.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
        owner: 'org',
        repo: 'cluster-01',
        issue_number: pr.number,
        labels: ['kdelta:new', long],
      }),
    ).rejects.toMatchObject({
      status: 422,
      response: { data: { message: 'Validation Failed', errors: [{ value: long, resource: 'Label', field: 'name', code: 'invalid' }] } },
    });
    expect(gh.pulls(REPO).find((p) => p.number === pr.number)?.labels).toEqual(['kdelta', 'kdelta:stop']);
  });

  it('closes a PR with PATCH state=closed, and a human merge advances the base', async () => {
    await pushBranch('kdelta/close', 'c.txt', 'c\n');
    const headSha = await pushBranch('kdelta/merge', 'm.txt', 'm\n');
    const ok = octokit();
    const { data: a } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'c',
      head: 'kdelta/close',
      base: 'main',
    });
    const { data: b } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'm',
      head: 'kdelta/merge',
      base: 'main',
    });
    const closed = await ok.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', {
      owner: 'org',
      repo: 'cluster-01',
      pull_number: a.number,
      state: 'closed',
    });
    expect(closed.data.state).toBe('closed');
    expect(closed.data.closed_at).not.toBeNull();

    const merge = await gh.mergePull(REPO, b.number);
    const gitDir = gh.gitDir(REPO);
    const parents = execFileSync('git', ['--git-dir', gitDir, 'rev-list', '--parents', '-n1', 'refs/heads/main'], { encoding: 'utf8' })
      .trim()
      .split(' ');
    expect(parents[0]).toBe(merge);
    expect(parents).toContain(headSha);
    const { data: merged } = await ok.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
      owner: 'org',
      repo: 'cluster-01',
      pull_number: b.number,
    });
    expect(merged).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: merge });
  });
});

describe('statuses, permissions, rate limits, validation', () => {
  it('records commit statuses and combines them', async () => {
    const sha = execFileSync('git', ['--git-dir', gh.gitDir(REPO), 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();
    const ok = octokit();
    await ok.request('POST /repos/{owner}/{repo}/statuses/{sha}', {
      owner: 'org',
      repo: 'cluster-01',
      sha,
      state: 'pending',
      context: 'kdelta',
    });
    await ok.request('POST /repos/{owner}/{repo}/statuses/{sha}', {
      owner: 'org',
      repo: 'cluster-01',
      sha,
      state: 'success',
      context: 'kdelta',
      description: 'up to date',
    });
    const { data } = await ok.request('GET /repos/{owner}/{repo}/commits/{ref}/status', { owner: 'org', repo: 'cluster-01', ref: 'main' });
    expect(data).toMatchObject({ state: 'success', sha, total_count: 1 });
    expect(gh.statuses(REPO, sha).map((s) => s.state)).toEqual(['pending', 'success']);
  });

  it('records check runs as a GitHub App posts them and lists the newest of each name for a ref, by name', async () => {
    const sha = execFileSync('git', ['--git-dir', gh.gitDir(REPO), 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();
    const ok = octokit();
    const at = { owner: 'org', repo: 'cluster-01' };
    const { data: first, status } = await ok.request('POST /repos/{owner}/{repo}/check-runs', {
      ...at,
      name: 'flux-system',
      head_sha: sha,
      status: 'in_progress',
    });
    expect(status).toBe(201);
    expect(first).toMatchObject({ name: 'flux-system', head_sha: sha, status: 'in_progress', conclusion: null });
    await ok.request('POST /repos/{owner}/{repo}/check-runs', {
      ...at,
      name: 'flux-system',
      head_sha: sha,
      conclusion: 'failure',
      details_url: 'https://ci.example.com/1',
      output: { title: 'kustomization failed', summary: 'apps: health check failed' },
    });
    await ok.request('POST /repos/{owner}/{repo}/check-runs', { ...at, name: 'lint', head_sha: sha, conclusion: 'success' });
    const list = (query: Record<string, string>) =>
      ok.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', { ...at, ref: 'main', ...query });
    const { data: named } = await list({ check_name: 'flux-system' });
    expect(named.total_count).toBe(1);
    expect(named.check_runs[0]).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      details_url: 'https://ci.example.com/1',
      output: { title: 'kustomization failed' },
    });
    expect((await list({ check_name: 'flux-system', filter: 'all' })).data.check_runs.map((r) => r.status)).toEqual([
      'completed',
      'in_progress',
    ]);
    expect((await list({})).data.check_runs.map((r) => r.name).sort()).toEqual(['flux-system', 'lint']);
    // GitHub's rules: a commit that does not exist, a completed run without a conclusion
    await expect(ok.request('POST /repos/{owner}/{repo}/check-runs', { ...at, name: 'x', head_sha: 'a'.repeat(40) })).rejects.toMatchObject(
      { status: 422 },
    );
    await expect(
      ok.request('POST /repos/{owner}/{repo}/check-runs', { ...at, name: 'x', head_sha: sha, status: 'completed' }),
    ).rejects.toMatchObject({ status: 422 });
    expect(gh.violations).toEqual([]);
  });

  it('lists, creates and updates the comments of a pull request; a read-only token cannot comment', async () => {
    await pushBranch('kdelta/comments', 'c.txt', 'c\n');
    const ok = octokit();
    const { data: pr } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'c',
      head: 'kdelta/comments',
      base: 'main',
    });
    const at = { owner: 'org', repo: 'cluster-01', issue_number: pr.number };
    expect((await ok.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', at)).data).toEqual([]);
    const { data: made } = await ok.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...at, body: 'first' });
    expect(made).toMatchObject({ body: 'first', user: { login: 'kdelta-bot' } });
    await ok.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
      owner: 'org',
      repo: 'cluster-01',
      comment_id: made.id,
      body: 'second',
    });
    const { data: listed } = await ok.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...at, per_page: 100 });
    expect(listed.map((c) => [c.id, c.body])).toEqual([[made.id, 'second']]);
    expect(gh.comments(REPO, pr.number)).toEqual([{ id: made.id, body: 'second', user: 'kdelta-bot' }]);
    const denied = await octokit('ghs_readonly')
      .request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...at, body: 'no' })
      .catch((e: { status: number }) => e);
    expect(denied).toMatchObject({ status: 403 });
    const missing = await ok
      .request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { owner: 'org', repo: 'cluster-01', comment_id: 1, body: 'x' })
      .catch((e: { status: number }) => e);
    expect(missing).toMatchObject({ status: 404 });
  });

  it('creates, lists, reads and updates issues numbered with the pull requests; the list holds pull requests too', async () => {
    await pushBranch('kdelta/issues', 'i.txt', 'i\n');
    const ok = octokit();
    const at = { owner: 'org', repo: 'cluster-01' };
    const { data: pr } = await ok.request('POST /repos/{owner}/{repo}/pulls', { ...at, title: 'p', head: 'kdelta/issues', base: 'main' });
    const { data: made } = await ok.request('POST /repos/{owner}/{repo}/issues', { ...at, title: 'Dashboard', body: 'one', labels: ['x'] });
    expect(made).toMatchObject({ number: pr.number + 1, title: 'Dashboard', body: 'one', state: 'open', user: { login: 'kdelta-bot' } });
    expect(made.html_url).toBe(`${gh.serverUrl}/${REPO}/issues/${made.number}`);
    expect(made.labels.map((l) => (typeof l === 'string' ? l : l.name))).toEqual(['x']);
    const listed = (await ok.request('GET /repos/{owner}/{repo}/issues', { ...at, state: 'open', per_page: 100 })).data;
    const mine = listed.find((i) => i.number === made.number);
    expect(mine?.pull_request).toBeUndefined();
    expect(listed.find((i) => i.number === pr.number)?.pull_request).toBeDefined();
    await ok.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { ...at, issue_number: made.number, body: 'two' });
    expect((await ok.request('GET /repos/{owner}/{repo}/issues/{issue_number}', { ...at, issue_number: made.number })).data.body).toBe(
      'two',
    );
    gh.editIssue(REPO, made.number, 'ticked');
    expect(gh.issues(REPO).find((i) => i.number === made.number)).toMatchObject({ body: 'ticked', state: 'open', user: 'kdelta-bot' });
    await ok.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { ...at, issue_number: made.number, state: 'closed' });
    const open = (await ok.request('GET /repos/{owner}/{repo}/issues', { ...at, state: 'open', per_page: 100 })).data;
    expect(open.some((i) => i.number === made.number)).toBe(false);
    const denied = await octokit('ghs_readonly')
      .request('POST /repos/{owner}/{repo}/issues', { ...at, title: 'no' })
      .catch((e: { status: number }) => e);
    expect(denied).toMatchObject({ status: 403 });
    const missing = await ok
      .request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { ...at, issue_number: 9999, body: 'x' })
      .catch((e: { status: number }) => e);
    expect(missing).toMatchObject({ status: 404 });
    expect(gh.violations).toEqual([]);
  });

  it('a token without the permission gets 403 naming it', async () => {
    const ro = octokit('ghs_readonly');
    const err = await ro
      .request('POST /repos/{owner}/{repo}/pulls', { owner: 'org', repo: 'cluster-01', title: 't', head: 'kdelta/push', base: 'main' })
      .catch((e: { status: number; response: { headers: Record<string, string> } }) => e);
    expect(err).toMatchObject({ status: 403 });
    expect((err as { response: { headers: Record<string, string> } }).response.headers['x-accepted-github-permissions']).toBe(
      'pull_requests=write',
    );
    const st = await ro
      .request('POST /repos/{owner}/{repo}/statuses/{sha}', { owner: 'org', repo: 'cluster-01', sha: 'a'.repeat(40), state: 'success' })
      .catch((e: { status: number; response: { headers: Record<string, string> } }) => e);
    expect((st as { response: { headers: Record<string, string> } }).response.headers['x-accepted-github-permissions']).toBe(
      'statuses=write',
    );
    const lb = await ro
      .request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
        owner: 'org',
        repo: 'cluster-01',
        issue_number: 1,
        labels: ['x'],
      })
      .catch((e: { status: number; response: { headers: Record<string, string> } }) => e);
    expect((lb as { response: { headers: Record<string, string> } }).response.headers['x-accepted-github-permissions']).toBe(
      'issues=write; pull_requests=write',
    );
    // pull_requests: write alone is enough to label a pull request.
    const prWriter = await startFakeGitHub({ tokens: { ghs_pr: { permissions: { pull_requests: 'write', contents: 'write' } } } });
    try {
      await prWriter.createRepo('o/r');
      await prWriter.humanCommit('o/r', 'feature', { 'f.txt': 'f\n' });
      const client = new Octokit({ auth: prWriter.token, baseUrl: prWriter.apiUrl });
      const { data: pr } = await client.request('POST /repos/{owner}/{repo}/pulls', {
        owner: 'o',
        repo: 'r',
        title: 't',
        head: 'feature',
        base: 'main',
      });
      const { data } = await client.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
        owner: 'o',
        repo: 'r',
        issue_number: pr.number,
        labels: ['kdelta'],
      });
      expect(data.map((l) => l.name)).toEqual(['kdelta']);
      expect(prWriter.violations).toEqual([]);
    } finally {
      await prWriter.close();
    }
  });

  it('answers the secondary rate limit once; the throttled client retries after retry-after', async () => {
    gh.clearRequests();
    gh.rateLimitNext(1, 1);
    const { data } = await throttledOctokit().request('GET /repos/{owner}/{repo}', { owner: 'org', repo: 'cluster-01' });
    expect(data.name).toBe('cluster-01');
    expect(gh.requests.map((r) => r.status)).toEqual([403, 200]);
    expect(gh.writes()).toBe(0);
  });

  it('refuses a body over 65536 characters (an issue, a pull request, a comment) with 422, as GitHub does', async () => {
    const ok = octokit();
    const long = 'x'.repeat(65_537);
    const refused = (p: Promise<unknown>) =>
      expect(p).rejects.toMatchObject({
        status: 422,
        response: { data: { errors: [{ field: 'body', message: 'body is too long (maximum is 65536 characters)' }] } },
      });
    await refused(ok.request('POST /repos/{owner}/{repo}/issues', { owner: 'org', repo: 'cluster-01', title: 'long', body: long }));
    const { data: issue } = await ok.request('POST /repos/{owner}/{repo}/issues', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'fits',
      body: 'y'.repeat(65_536),
    });
    await refused(
      ok.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
        owner: 'org',
        repo: 'cluster-01',
        issue_number: issue.number,
        body: long,
      }),
    );
    await pushBranch('kdelta/long', 'long.txt', 'long\n');
    await refused(
      ok.request('POST /repos/{owner}/{repo}/pulls', {
        owner: 'org',
        repo: 'cluster-01',
        title: 'l',
        head: 'kdelta/long',
        base: 'main',
        body: long,
      }),
    );
    const { data: pr } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      owner: 'org',
      repo: 'cluster-01',
      title: 'l',
      head: 'kdelta/long',
      base: 'main',
    });
    await refused(
      ok.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', {
        owner: 'org',
        repo: 'cluster-01',
        pull_number: pr.number,
        body: long,
      }),
    );
    await refused(
      ok.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        owner: 'org',
        repo: 'cluster-01',
        issue_number: pr.number,
        body: long,
      }),
    );
  });

  it('a request body that breaks the schema is answered 500 and recorded', async () => {
    const lax = await startFakeGitHub();
    try {
      await lax.createRepo('o/r');
      const res = await fetch(`${lax.apiUrl}/repos/o/r/pulls`, {
        method: 'POST',
        headers: { authorization: `token ${lax.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 't', head: 'x', base: 'main', draft: 'yes' }),
      });
      expect(res.status).toBe(500);
      expect(((await res.json()) as { message: string }).message).toMatch(/draft.*boolean/);
      expect(lax.violations).toHaveLength(1);
      expect(lax.violations[0]).toMatch(/pulls\/create/);
    } finally {
      await lax.close();
    }
  });
});
