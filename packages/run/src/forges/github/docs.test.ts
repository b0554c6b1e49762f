import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FakeGitHub } from '@kdelta/fake-github';
import { tempDir } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { Budget } from '../budget.js';
import { fakeGitHubs } from '../__fixtures__/fake-github.js';
import { createGitHubForge } from './github.js';
import { nextLink, nextPageOf } from './pages.js';

/**
 * The GitHub forge where GitHub's documentation promises less than a plain fake gives: pages as
 * the `link` header says; the headers every request carries.
 */

const fake = fakeGitHubs();

const fast = { writeSpacing: false, retryAfterUnitMs: 1 } as const;
/** What the run decides (review-gate.ts) and the forge carries out: ready, free to merge by itself; or not ready. */
// as the run decides them (review-gate.ts), under the default draft policy
const READY = { ready: true, draft: false, autoMerge: true } as const;
const NOT_READY = { ready: false, draft: true, autoMerge: false } as const;
const forgeOn = (gh: FakeGitHub, more: Parameters<typeof createGitHubForge>[0] = {}) =>
  createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast, ...more });
const target = (gh: FakeGitHub, head: string) => ({
  downstream: 'cluster-01',
  repo: `${gh.serverUrl}/org/cluster-01.git`,
  head,
  base: 'main',
});

describe('pagination', () => {
  it('reads the link header: rel="next" among others, in any order; none is the last page', () => {
    expect(nextLink('<https://api.github.com/x?page=1>; rel="prev", <https://api.github.com/x?page=3>; rel="next"')).toBe(
      'https://api.github.com/x?page=3',
    );
    expect(nextLink('<https://api.github.com/x?page=9>; rel="last", <https://api.github.com/x?page=2>;rel=next')).toBe(
      'https://api.github.com/x?page=2',
    );
    expect(nextLink('<https://api.github.com/x?page=1>; rel="first"')).toBeUndefined();
    expect(nextLink(undefined)).toBeUndefined();
  });

  it('follows a next page on the API’s own origin only: the token goes with it', () => {
    const api = 'https://ghe.example.com/api/v3';
    expect(nextPageOf('<https://ghe.example.com/api/v3/repositories/1/pulls?page=2>; rel="next"', api)).toEqual({
      ok: true,
      url: 'https://ghe.example.com/api/v3/repositories/1/pulls?page=2',
    });
    expect(nextPageOf('<https://elsewhere.example.com/pulls?page=2>; rel="next"', api)).toEqual({
      ok: false,
      error: expect.stringMatching(
        /points to https:\/\/elsewhere\.example\.com, not to the API at https:\/\/ghe\.example\.com: not followed/,
      ),
    });
  });

  it('a server that holds fewer pull requests a page than asked: every open pull request is found through the link header', async () => {
    const gh = await fake({ maxPerPage: 2 });
    const heads = ['kdelta/a', 'kdelta/b', 'kdelta/c', 'kdelta/d', 'kdelta/e'];
    const first = forgeOn(gh);
    for (const head of heads) {
      await gh.humanCommit('org/cluster-01', head, { [`${head}.txt`]: 'x\n' });
      await first.upsert({ ...target(gh, head), title: head, body: 'b\n', fingerprint: 'f' });
    }
    const next = forgeOn(gh);
    gh.clearRequests();
    for (const head of heads) expect(await next.find(target(gh, head))).toMatchObject({ head, state: 'open' });
    // the oldest pull request is on the last page (newest first): all three pages were read, once
    expect(gh.requests.map((r) => `${r.method} ${r.query.page ?? '1'}`)).toEqual(['GET 1', 'GET 2', 'GET 3']);
    // an unchanged proposal is found, not opened again
    const again = await next.upsert({ ...target(gh, 'kdelta/a'), title: 'kdelta/a', body: 'b\n', fingerprint: 'f' });
    expect(again).toMatchObject({ created: false, changed: false });
    expect((await next.list()).map((p) => p.head).sort()).toEqual(heads);
  });

  it('kdelta’s status is found on a later page of a commit’s combined status: not posted again', async () => {
    const gh = await fake({ maxPerPage: 2 });
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const forge = forgeOn(gh);
    const { proposal } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    const sha = gh.pulls('org/cluster-01')[0]!.head.sha;
    for (const context of ['ci', 'lint']) {
      await fetch(`${gh.apiUrl}/repos/org/cluster-01/statuses/${sha}`, {
        method: 'POST',
        headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ state: 'success', context }),
      });
    }
    await forge.setStatus(proposal, { state: 'success', description: 'ok' }, sha);
    expect(await forgeOn(gh).ensureStatus!(proposal, { state: 'success', description: 'ok' }, sha)).toBe(false);
    expect(gh.statuses('org/cluster-01', sha).map((s) => s.context)).toEqual(['ci', 'lint', 'kdelta']);
  });

  it('the dashboard is found on a later page of the issues (a person’s issues before it)', async () => {
    const gh = await fake({ maxPerPage: 2 });
    const forge = forgeOn(gh);
    for (const title of ['one', 'two', 'three']) {
      await fetch(`${gh.apiUrl}/repos/org/cluster-01/issues`, {
        method: 'POST',
        headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title, body: 'a person’s issue' }),
      });
    }
    const dashboard = { repository: 'org/cluster-01', name: 'dashboard', title: 'kdelta dashboard', marker: '<!-- kdelta-dashboard -->' };
    const made = await forge.writeDashboard!(dashboard, `fleet\n${dashboard.marker}\n`, undefined);
    expect(await forgeOn(gh).readDashboard!(dashboard)).toEqual(made);
  });
});

describe('headers', () => {
  it('every request, a GitHub App’s included, asks for application/vnd.github+json, names the API version and kdelta as its user agent', async () => {
    const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const gh = await fake({ apps: [{ id: 7, slug: 'kdelta-fleet', privateKey, installations: { org: { id: 11 } } }] });
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    for (const forge of [forgeOn(gh), forgeOn(gh, { token: undefined, app: { appId: '7', privateKey } })]) {
      const { proposal } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
      // conflicts now: a draft, through GraphQL
      await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b2\n', fingerprint: 'f2', conflicts: 1, review: NOT_READY });
      await forge.setStatus(proposal, { state: 'success', description: 'ok' });
    }
    const ops = new Set(gh.requests.map((r) => r.operationId ?? r.path));
    expect([...ops]).toEqual(
      expect.arrayContaining([
        'apps/get-repo-installation',
        'apps/create-installation-access-token',
        'pulls/create',
        'graphql/convertPullRequestToDraft',
      ]),
    );
    for (const r of gh.requests) {
      expect({
        op: r.operationId ?? r.path,
        accept: r.headers?.accept,
        version: r.headers?.apiVersion,
        agent: r.headers?.userAgent?.split(' ')[0],
      }).toEqual({
        op: r.operationId ?? r.path,
        accept: 'application/vnd.github+json',
        version: '2022-11-28',
        agent: 'kdelta',
      });
    }
  });
});

describe('what follows an open pull request', () => {
  it('a label GitHub refuses (a name over 50 characters) is a warning: assignees, reviewers and the draft state still follow', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const long = `team:${'x'.repeat(50)}`;
    const forge = forgeOn(gh, { labels: ['kdelta', long], assignees: ['alice'], reviewers: ['bob'] });
    const made = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    expect(made).toMatchObject({
      created: true,
      warnings: [expect.stringMatching(/^GitHub: cannot label pull request #\d+ of org\/cluster-01: 422 Validation Failed/)],
    });
    expect(gh.pulls('org/cluster-01')[0]).toMatchObject({ labels: [], assignees: ['alice'], requested_reviewers: ['bob'], draft: false });
    // conflicts now: it turns into a draft, though the label is refused again
    const updated = await forge.upsert({
      ...target(gh, 'kdelta/web'),
      title: 't',
      body: 'b2\n',
      fingerprint: 'f2',
      conflicts: 1,
      review: NOT_READY,
    });
    expect(updated.warnings).toHaveLength(1);
    expect(gh.pulls('org/cluster-01')[0]).toMatchObject({ draft: true, body: expect.stringContaining('b2') });
  });
});

describe('review requests', () => {
  it('a reviewer who is not a collaborator (422) is a warning: the pull request stands, labelled and assigned', async () => {
    const gh = await fake({ collaborators: ['alice', 'bob'] });
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const forge = forgeOn(gh, { labels: ['kdelta'], assignees: ['alice'], reviewers: ['bob', 'mallory'], autoMerge: 'merge' });
    gh.requireStatusChecks('org/cluster-01', 'main', ['ci']);
    const made = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f', review: READY });
    expect(made).toMatchObject({
      created: true,
      warnings: [
        expect.stringMatching(
          /^GitHub: cannot request reviews on pull request #\d+ of org\/cluster-01: 422 Reviews may only be requested from collaborators/,
        ),
      ],
    });
    expect(gh.pulls('org/cluster-01')[0]).toMatchObject({
      state: 'open',
      labels: ['kdelta'],
      assignees: ['alice'],
      auto_merge: { merge_method: 'merge' },
    });
  });
});

describe('auto-merge', () => {
  it('a clean pull request GitHub refuses to merge (409: the head moved since kdelta pushed) stays open, with a warning', async () => {
    const gh = await fake();
    const pushed = await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'a person’s commit\n' });
    const forge = forgeOn(gh, { autoMerge: 'squash' });
    const made = await forge.upsert({
      ...target(gh, 'kdelta/web'),
      title: 't',
      body: 'b\n',
      fingerprint: 'f',
      headCommit: pushed,
      review: READY,
    });
    expect(made).toMatchObject({
      created: true,
      warnings: [
        expect.stringMatching(
          /^auto-merge: pull request #\d+ of org\/cluster-01 is ready to merge but was left open: .*409 Head branch was modified/,
        ),
      ],
    });
    expect(gh.pulls('org/cluster-01')[0]).toMatchObject({ state: 'open', merged: false });
  });
});

describe('draft pull requests where GitHub offers none (a private repository on GitHub Free or Pro)', () => {
  it('a proposal with conflicts is opened ready for review, with a warning; later, auto-merge is still turned off when conflicts come', async () => {
    const gh = await fake({ draftPullRequests: false });
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    gh.requireStatusChecks('org/cluster-01', 'main', ['ci']);
    const forge = forgeOn(gh, { autoMerge: 'squash' });
    const opened = await forge.upsert({
      ...target(gh, 'kdelta/web'),
      title: 't',
      body: 'b\n',
      fingerprint: 'f1',
      conflicts: 1,
      review: NOT_READY,
    });
    expect(opened).toMatchObject({
      created: true,
      warnings: [
        'GitHub offers no draft pull requests in org/cluster-01 (a private repository on GitHub Free or Pro): the pull request for kdelta/web is opened ready for review',
      ],
    });
    expect(gh.pulls('org/cluster-01')).toMatchObject([{ state: 'open', draft: false, auto_merge: null }]);
    // the conflicts resolved: auto-merge waits for the required check
    await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b2\n', fingerprint: 'f2', review: READY });
    expect(gh.pulls('org/cluster-01')[0]).toMatchObject({ auto_merge: { merge_method: 'squash' } });
    // conflicts again: no draft to turn it into, and auto-merge is turned off all the same
    const again = await forge.upsert({
      ...target(gh, 'kdelta/web'),
      title: 't',
      body: 'b3\n',
      fingerprint: 'f3',
      conflicts: 2,
      review: NOT_READY,
    });
    expect(again.warnings).toEqual([
      expect.stringMatching(
        /^GitHub offers no draft pull requests in org\/cluster-01 .*: pull request #\d+ of org\/cluster-01 stays ready for review$/,
      ),
    ]);
    expect(gh.pulls('org/cluster-01')[0]).toMatchObject({
      state: 'open',
      draft: false,
      auto_merge: null,
      body: expect.stringContaining('b3'),
    });
  });
});

describe('commit statuses', () => {
  it('a description over GitHub’s 140 characters is cut to 140 characters, never inside one', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const forge = forgeOn(gh);
    const { proposal } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    const sha = gh.pulls('org/cluster-01')[0]!.head.sha;
    await forge.setStatus(proposal, { state: 'failure', description: `${'a'.repeat(139)}🙂🙂 and more` }, sha);
    await forge.setStatus(proposal, { state: 'success', description: 'b'.repeat(200) }, sha);
    expect(gh.statuses('org/cluster-01', sha).map((s) => s.description)).toEqual([`${'a'.repeat(139)}🙂`, 'b'.repeat(140)]);
  });
});

describe('bodies', () => {
  it('a pull request or dashboard body over GitHub’s 65536 characters is a clear error, and nothing is sent', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const forge = forgeOn(gh);
    await forge.find(target(gh, 'kdelta/web'));
    gh.clearRequests();
    await expect(
      forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'x'.repeat(65_537), fingerprint: 'f' }),
    ).rejects.toMatchObject({ code: 'body-too-long', message: expect.stringMatching(/over GitHub's limit of 65536$/) });
    const dashboard = { repository: 'org/cluster-01', name: 'dashboard', title: 'kdelta dashboard', marker: '<!-- kdelta-dashboard -->' };
    await expect(forge.writeDashboard!(dashboard, 'x'.repeat(65_537), undefined)).rejects.toMatchObject({ code: 'body-too-long' });
    expect(gh.requests).toEqual([]);
  });
});

describe('server errors', () => {
  it('a 502 or 503 is retried (twice at most), each send inside the budget; then a clear error', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const budget = new Budget(100);
    const forge = forgeOn(gh, { budget });
    gh.failNext(1, 502);
    const { proposal } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    gh.clearRequests();
    gh.failNext(2, 503);
    await forge.setStatus(proposal, { state: 'success', description: 'ok' });
    expect(gh.requests.map((r) => r.status)).toEqual([503, 503, 201]);
    gh.failNext(3, 502);
    await expect(forge.setStatus(proposal, { state: 'failure', description: 'no' })).rejects.toMatchObject({
      code: 'github-request-failed',
      message: expect.stringMatching(/^GitHub: cannot record a status on [0-9a-f]{12} in org\/cluster-01: 502/),
    });
    expect(budget.used).toBe(gh.writes() + 1);
  });

  it("a 502 after GitHub opened the pull request, looked for before it is sent again: the pull request is this call's, created", async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const forge = forgeOn(gh);
    gh.failAfterApplying('pulls/create', 1, 502);
    const { proposal, created, changed } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    expect(gh.requests.filter((r) => r.operationId === 'pulls/create').map((r) => r.status)).toEqual([502]);
    expect({ created, changed, fingerprint: proposal.fingerprint }).toEqual({ created: true, changed: true, fingerprint: 'f' });
    expect(gh.pulls('org/cluster-01')).toHaveLength(1);
  });

  it('a 502 before GitHub opened the pull request: none is found, so it is sent again and opened once', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const forge = forgeOn(gh);
    await forge.find(target(gh, 'kdelta/web'));
    gh.failNext(1, 502);
    const { created } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    expect(gh.requests.filter((r) => r.operationId === 'pulls/create').map((r) => r.status)).toEqual([502, 201]);
    expect(created).toBe(true);
    expect(gh.pulls('org/cluster-01')).toHaveLength(1);
  });

  it('422 "already exists" with another fingerprint (opened by someone else): found and updated, not created', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const other = forgeOn(gh);
    const forge = forgeOn(gh);
    await forge.find(target(gh, 'kdelta/web')); // the list is read before the other opens it
    await other.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'old\n', fingerprint: 'e' });
    const { created, changed, proposal } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    expect({ created, changed, fingerprint: proposal.fingerprint }).toEqual({ created: false, changed: true, fingerprint: 'f' });
  });
});

describe('rate limits', () => {
  it('the primary limit reached on a write (403, x-ratelimit-remaining 0): sent again after x-ratelimit-reset, inside the run’s budget', async () => {
    const gh = await fake();
    await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
    const budget = new Budget(100);
    const forge = forgeOn(gh, { budget });
    const { proposal, created } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
    expect(created).toBe(true);
    gh.clearRequests();
    const before = budget.used;
    gh.rateLimitNext(1, 1, 'primary');
    await forge.setStatus(proposal, { state: 'success', description: 'ok' });
    expect(gh.requests.map((r) => `${r.operationId} ${r.status}`)).toEqual([
      'repos/create-commit-status 403',
      'repos/create-commit-status 201',
    ]);
    // both sends counted, and the budget still admits writes
    expect(budget.used - before).toBe(2);
    expect(budget.reserve(10)).toBeTypeOf('function');
  });

  it.each([403, 429] as const)(
    'a limit answered %i (the secondary one with retry-after on a read, the primary one with x-ratelimit-reset on a write): waited out and sent again',
    async (status) => {
      const gh = await fake();
      await gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' });
      const forge = forgeOn(gh, { budget: new Budget(100) });
      gh.rateLimitNext(1, 2, 'secondary', status);
      const { proposal } = await forge.upsert({ ...target(gh, 'kdelta/web'), title: 't', body: 'b\n', fingerprint: 'f' });
      gh.rateLimitNext(1, 2, 'primary', status);
      await forge.setStatus(proposal, { state: 'success', description: 'ok' });
      expect(gh.requests.map((r) => `${r.method} ${r.status}`)).toEqual([
        `GET ${status}`,
        'GET 200',
        'POST 201',
        `POST ${status}`,
        'POST 201',
      ]);
    },
  );
});

describe('commits through the git data API', () => {
  /** git, asynchronously (the fake serves git from this process). */
  const git = async (dir: string, ...args: string[]) =>
    (
      await promisify(execFile)('git', args, {
        cwd: dir,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      })
    ).stdout.trim();

  it('an executable, a symlink, a mode change and a deletion arrive as they are; a branch made meanwhile is left alone (branch-moved)', async () => {
    const gh = await fake();
    const base = await gh.humanCommit('org/cluster-01', 'main', { 'run.sh': '#!/bin/sh\n', 'old.txt': 'old\n', 'keep.txt': 'keep\n' });
    const dir = tempDir('kdelta-publish-');
    await git(dir, 'init', '--quiet');
    await git(
      dir,
      '-c',
      `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${gh.token}`).toString('base64')}`,
      'fetch',
      '--quiet',
      `${gh.serverUrl}/org/cluster-01.git`,
      'main',
    );
    await git(dir, 'checkout', '--quiet', base);
    chmodSync(join(dir, 'run.sh'), 0o755);
    writeFileSync(join(dir, 'tool.sh'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
    symlinkSync('keep.txt', join(dir, 'link'));
    unlinkSync(join(dir, 'old.txt'));
    writeFileSync(join(dir, 'keep.txt'), 'kept\n');
    await git(dir, 'add', '-A');
    await git(dir, '-c', 'user.name=k', '-c', 'user.email=k@example.com', 'commit', '--quiet', '-m', 'change');
    const commit = await git(dir, 'rev-parse', 'HEAD');
    const forge = forgeOn(gh, { signedCommits: true });
    const input = {
      target: target(gh, 'kdelta/web'),
      dir,
      commit,
      baseCommit: base,
      expectedHead: undefined,
      message: 'change',
      author: { name: 'kdelta', email: 'kdelta@example.com' },
    };
    const made = await forge.publishCommit!(input);
    const tree = await git(gh.gitDir('org/cluster-01'), 'ls-tree', '-r', 'kdelta/web');
    expect(tree.split('\n').map((l) => l.replace(/ [0-9a-f]{40}/, ''))).toEqual([
      '100644 blob\tREADME.md',
      '100644 blob\tkeep.txt',
      '120000 blob\tlink',
      '100755 blob\trun.sh',
      '100755 blob\ttool.sh',
    ]);
    // the same content as the local commit, byte for byte
    expect(await git(gh.gitDir('org/cluster-01'), 'rev-parse', 'kdelta/web^{tree}')).toBe(await git(dir, 'rev-parse', 'HEAD^{tree}'));
    expect(gh.commitVerified('org/cluster-01', made)).toBe(true);
    // the branch exists now, though this publish expected none: GitHub refuses to make it (422), kdelta leaves it alone
    await expect(forge.publishCommit!(input)).rejects.toMatchObject({
      code: 'branch-moved',
      message:
        'cannot create kdelta/web in org/cluster-01: it was made or moved since kdelta read it (GitHub: 422 Reference already exists): left alone',
    });
    expect(await git(gh.gitDir('org/cluster-01'), 'rev-parse', 'kdelta/web')).toBe(made);
  });
});
