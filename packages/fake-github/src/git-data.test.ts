import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Octokit } from '@octokit/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from './index.js';

const run = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const REPO = 'org/signed';
const params = { owner: 'org', repo: 'signed' };

let gh: FakeGitHub;
let ok: Octokit;
let work: string;

// Asynchronous: the fake serves git from this same process, so a synchronous git would wait on itself.
async function git(cwd: string, args: string[]): Promise<string> {
  const auth = Buffer.from(`x-access-token:${gh.token}`).toString('base64');
  const { stdout } = await run('git', ['-c', `http.extraHeader=Authorization: Basic ${auth}`, ...args], {
    cwd,
    encoding: 'utf8',
    env: GIT_ENV,
  });
  return stdout.trim();
}

beforeAll(async () => {
  gh = await startFakeGitHub();
  ok = new Octokit({ auth: gh.token, baseUrl: gh.apiUrl, headers: { 'X-GitHub-Api-Version': '2022-11-28' } });
  work = mkdtempSync(join(tmpdir(), 'fake-github-data-'));
  await gh.createRepo(REPO, { files: { 'README.md': 'hi\n', 'pkg/app.yaml': 'replicas: 1\n', 'pkg/old.yaml': 'old\n' } });
});

afterAll(async () => {
  await gh.close();
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
});

/** A commit on `branch` made through the git data API, as the forge does for signed commits. */
async function apiCommit(branch: string, files: Record<string, string | null>, create: boolean): Promise<string> {
  const { data: base } = await ok.request('GET /repos/{owner}/{repo}/git/ref/{ref}', {
    ...params,
    ref: `heads/${create ? 'main' : branch}`,
  });
  const parent = base.object.sha;
  const { data: parentCommit } = await ok.request('GET /repos/{owner}/{repo}/branches/{branch}', {
    ...params,
    branch: create ? 'main' : branch,
  });
  const tree = [];
  for (const [path, content] of Object.entries(files)) {
    if (content === null) tree.push({ path, mode: '100644' as const, type: 'blob' as const, sha: null });
    else {
      const { data: blob } = await ok.request('POST /repos/{owner}/{repo}/git/blobs', {
        ...params,
        content: Buffer.from(content).toString('base64'),
        encoding: 'base64',
      });
      tree.push({ path, mode: '100644' as const, type: 'blob' as const, sha: blob.sha });
    }
  }
  const { data: newTree } = await ok.request('POST /repos/{owner}/{repo}/git/trees', {
    ...params,
    base_tree: parentCommit.commit.commit.tree.sha,
    tree,
  });
  const { data: commit } = await ok.request('POST /repos/{owner}/{repo}/git/commits', {
    ...params,
    message: `update ${branch}`,
    tree: newTree.sha,
    parents: [parent],
  });
  expect(commit.verification?.verified).toBe(true);
  if (create) await ok.request('POST /repos/{owner}/{repo}/git/refs', { ...params, ref: `refs/heads/${branch}`, sha: commit.sha });
  else await ok.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...params, ref: `heads/${branch}`, sha: commit.sha, force: true });
  return commit.sha;
}

describe('git data API', () => {
  it('writes real objects: a fetch sees the verified commit with its tree', async () => {
    const sha = await apiCommit('kdelta/signed', { 'pkg/app.yaml': 'replicas: 3\n', 'pkg/old.yaml': null, 'pkg/new/x.yaml': 'x\n' }, true);
    expect(gh.commitVerified(REPO, sha)).toBe(true);
    const dir = join(work, 'clone');
    await git(work, ['clone', '--quiet', `${gh.serverUrl}/${REPO}.git`, dir]);
    await git(dir, ['fetch', '--quiet', 'origin', 'kdelta/signed']);
    expect(await git(dir, ['rev-parse', 'FETCH_HEAD'])).toBe(sha);
    expect((await git(dir, ['ls-tree', '-r', '--name-only', sha])).split('\n')).toEqual(['README.md', 'pkg/app.yaml', 'pkg/new/x.yaml']);
    expect(await git(dir, ['show', `${sha}:pkg/app.yaml`])).toBe('replicas: 3');
    expect(await git(dir, ['log', '-1', '--format=%an', sha])).toBe('kdelta-bot');

    // A second API commit on the branch (PATCH git/refs with force): the PR follows the branch.
    const { data: pr } = await ok.request('POST /repos/{owner}/{repo}/pulls', {
      ...params,
      title: 'signed',
      head: 'kdelta/signed',
      base: 'main',
    });
    expect(pr.head.sha).toBe(sha);
    const again = await apiCommit('kdelta/signed', { 'pkg/app.yaml': 'replicas: 4\n' }, false);
    expect(gh.pulls(REPO)[0]!.head.sha).toBe(again);
    const { data: commits } = await ok.request('GET /repos/{owner}/{repo}/pulls/{pull_number}/commits', {
      ...params,
      pull_number: pr.number,
    });
    expect(commits.map((c) => c.sha)).toEqual([sha, again]);
  });

  it('refuses a fast-forward-only update that is not one, and deletes a ref', async () => {
    const sha = await apiCommit('kdelta/ff', { 'a.txt': 'a\n' }, true);
    const main = (await ok.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { ...params, ref: 'heads/main' })).data.object.sha;
    await expect(
      ok.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...params, ref: 'heads/kdelta/ff', sha: main }),
    ).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining('Update is not a fast forward'),
    });
    expect((await ok.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { ...params, ref: 'heads/kdelta/ff' })).data.object.sha).toBe(sha);
    await ok.request('DELETE /repos/{owner}/{repo}/git/refs/{ref}', { ...params, ref: 'heads/kdelta/ff' });
    await expect(ok.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { ...params, ref: 'heads/kdelta/ff' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('a human commit moves the branch and the PR head', async () => {
    const before = gh.pulls(REPO)[0]!.head.sha;
    const sha = await gh.humanCommit(REPO, 'kdelta/signed', { 'pkg/app.yaml': 'replicas: 9\n' });
    expect(sha).not.toBe(before);
    expect(gh.commitVerified(REPO, sha)).toBe(false);
    const { data } = await ok.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...params, pull_number: 1 });
    expect(data.head.sha).toBe(sha);
    const { data: c } = await ok
      .request('POST /repos/{owner}/{repo}/git/commits', { ...params, message: 'm', tree: data.base.sha, parents: [] })
      .catch((e) => e.response);
    expect(c.message).toBe('Tree SHA does not exist');
    expect(readFileSync(join(gh.gitDir(REPO), 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
  });
});

describe('GraphQL auto-merge', () => {
  it('enables and disables auto-merge by node id; unknown queries are GraphQL errors', async () => {
    const pr = gh.pulls(REPO)[0]!;
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(gh.graphqlUrl, {
        method: 'POST',
        headers: { authorization: `bearer ${gh.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { data?: any; errors?: { message: string }[] };
    };
    // GitHub refuses auto-merge on a pull request it could merge now ("clean": no check to wait for)
    const clean = await gql(
      'mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: MERGE}) { pullRequest { id } } }',
      { id: pr.node_id },
    );
    expect(clean.errors?.[0]?.message).toMatch(/is in clean status/);
    gh.requireStatusChecks(REPO, pr.base.ref, ['ci']);
    gh.clearRequests();
    const enabled = await gql(
      'mutation($id: ID!, $method: PullRequestMergeMethod!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: $method}) { pullRequest { autoMergeRequest { mergeMethod } } } }',
      { id: pr.node_id, method: 'SQUASH' },
    );
    expect(enabled.errors).toBeUndefined();
    expect(enabled.data.enablePullRequestAutoMerge.pullRequest.autoMergeRequest.mergeMethod).toBe('SQUASH');
    expect(gh.pulls(REPO)[0]!.auto_merge).toEqual({ merge_method: 'squash' });
    const { data } = await ok.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...params, pull_number: pr.number });
    expect(data.auto_merge?.merge_method).toBe('squash');

    const disabled = await gql(`mutation { disablePullRequestAutoMerge(input: {pullRequestId: "${pr.node_id}"}) { clientMutationId } }`);
    expect(disabled.errors).toBeUndefined();
    expect(gh.pulls(REPO)[0]!.auto_merge).toBeNull();
    expect(gh.requests.filter((r) => r.path === '/graphql').map((r) => [r.operationId, r.write])).toEqual([
      ['graphql/enablePullRequestAutoMerge', true],
      ['graphql/disablePullRequestAutoMerge', true],
    ]);

    const unknown = await gql('query { viewer { name } }');
    expect(unknown.errors?.[0]?.message).toMatch(/viewer/);
    expect(await gql('query { viewer { login } }')).toEqual({ data: { viewer: { login: 'kdelta-bot' } } });
    const missing = await gql('mutation { enablePullRequestAutoMerge(input: {pullRequestId: "PR_nope"}) { clientMutationId } }');
    expect(missing.errors?.[0]?.message).toMatch(/Could not resolve to a node/);
  });
});
