import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import { packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { type Materialize, parseMetadataBlock, run, type RunOptions } from '@kdelta/run';
import type { Io } from '../../src/command.js';
import { main } from '../../src/main.js';
import { allFiles, copyMaterialize, type GitHubFleet, githubFleets } from './__fixtures__/github-fleet.js';

/** `kdelta run --forge github` against a fake GitHub: real git repositories behind a REST and GraphQL API. */

const READ_ONLY_PRS = 'ghs_pr_read';
const hub = githubFleets({
  fake: {
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      [READ_ONLY_PRS]: { login: 'limited', permissions: { contents: 'write', pull_requests: 'read', issues: 'write', metadata: 'read' } },
    },
  },
});
const { cacheDir, cleanEnv } = hub;

/** An upstream and control repository on disk, downstream repositories on the fake GitHub. */
const fleet = (downstreams: string[] = ['cluster-01', 'cluster-02']): Promise<GitHubFleet> =>
  hub.fleet(downstreams, { labels: { env: 'prod' } });

function opts(f: Fleet, github: RunOptions['github'] = {}, extra: Partial<RunOptions> = {}): RunOptions {
  return hub.runOptions(f, github, { materialize: copyMaterialize, ...extra });
}

const conflict = {
  resource: 'v1/Namespace example',
  file: 'namespace.yaml',
  path: 'metadata.labels.team',
  values: { origin: 'a', upstream: 'b', local: 'c' },
  rule: 'local-wins',
  winner: 'local',
  message: 'both changed metadata.labels.team',
} as unknown as Conflict;

/** The copy of the upstream package, reporting one conflict for variant `conflicted`. */
const conflictingMaterialize: Materialize = async (input) => {
  const out = await copyMaterialize(input);
  return input.variant === 'conflicted' ? { ...out, conflicts: [conflict] } : out;
};

describe('kdelta run --forge github', () => {
  it('opens pull requests with labels, assignees and reviewers (draft when there are conflicts); a second run writes nothing', async () => {
    const f = await fleet(['cluster-01', 'cluster-02']);
    f.writeControl({
      'clean.yaml': packageVariant('clean', 'cluster-01'),
      'conflicted.yaml': packageVariant('conflicted', 'cluster-02'),
    });
    // auto-merge waits for the required kdelta check (without one GitHub would call them clean: merged at once)
    for (const d of ['cluster-01', 'cluster-02']) hub.gh.requireStatusChecks(f.slug(d), 'main', ['kdelta']);
    const github = {
      labels: ['kdelta', 'automated'],
      assignees: ['alice'],
      reviewers: ['bob'],
      teamReviewers: ['platform'],
      autoMerge: 'squash' as const,
    };
    const first = await run(opts(f, github, { materialize: conflictingMaterialize }));
    expect(first.failed).toBe(0);
    expect(first.results.map((r) => [r.variant, r.action])).toEqual([
      ['clean', 'proposed'],
      ['conflicted', 'proposed'],
    ]);
    const [clean] = hub.gh.pulls(f.slug('cluster-01'));
    const [conflicted] = hub.gh.pulls(f.slug('cluster-02'));
    expect(clean).toMatchObject({
      state: 'open',
      draft: false,
      head: { ref: 'kdelta/clean' },
      base: { ref: 'main' },
      labels: ['kdelta', 'automated'],
      assignees: ['alice'],
      requested_reviewers: ['bob'],
      requested_teams: ['platform'],
      auto_merge: { merge_method: 'squash' },
    });
    // conflicts: a draft, and never auto-merged
    expect(conflicted).toMatchObject({ state: 'open', draft: true, auto_merge: null });
    expect(conflicted!.body).toContain('### Conflicts (1)');
    // readiness as a commit status on each head: a required check holds back the one with conflicts
    expect(hub.gh.statuses(f.slug('cluster-01'), clean!.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
    expect(hub.gh.statuses(f.slug('cluster-02'), conflicted!.head.sha)).toMatchObject([{ state: 'failure', context: 'kdelta' }]);
    // the hidden block names the branch's commit, and the result carries the full body for the job summary
    expect(parseMetadataBlock(clean!.body ?? '')?.headCommit).toBe(clean!.head.sha);
    expect(first.results[0]?.body).toContain('### What changed');
    expect(first.results[0]?.proposal?.url).toMatch(new RegExp(`/${f.owner}/cluster-01/pull/\\d+$`));
    expect(first.budget).toEqual({ limit: 400, used: hub.gh.writes(), exhausted: false });
    expect(hub.gh.requests.every((r) => r.status < 400)).toBe(true);

    hub.gh.clearRequests();
    const second = await run(opts(f, github, { materialize: conflictingMaterialize }));
    expect(second.results.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    expect(second.results.map((r) => r.conflictCount)).toEqual([0, 1]);
    expect(hub.gh.writes()).toBe(0);
    // at most two reads per variant: one list of the open pull requests per repository, and its commit's statuses
    expect(hub.gh.requests.length).toBeLessThanOrEqual(2 * second.results.length);
    expect(second.budget).toMatchObject({ used: 0, exhausted: false });
  });

  it('survives a secondary rate limit by waiting retry-after', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    hub.gh.rateLimitNext(2, 1);
    const report = await run(opts(f, { labels: ['kdelta'] }));
    expect(report.results[0]).toMatchObject({ action: 'proposed' });
    expect(hub.gh.pulls(f.slug('cluster-01'))[0]).toMatchObject({ state: 'open', labels: ['kdelta'] });
    expect(hub.gh.requests.filter((r) => r.status === 403).length).toBe(2);
  });

  it('an exhausted budget stops cleanly: the rest is deferred (exit 0, stderr says how many) and the next run finishes', async () => {
    const f = await fleet(['cluster-01', 'cluster-02', 'cluster-03']);
    f.writeControl({
      'a.yaml': packageVariant('a', 'cluster-01'),
      'b.yaml': packageVariant('b', 'cluster-02'),
      'c.yaml': packageVariant('c', 'cluster-03'),
    });
    const { io, out } = capture(f.control, {
      GITHUB_TOKEN: hub.gh.token,
      GITHUB_API_URL: hub.gh.apiUrl,
      GITHUB_SERVER_URL: hub.gh.serverUrl,
    });
    // each new pull request costs 2 (open, label): 3 allows one, not two
    const code = await main(['run', '--forge', 'github', '--label', 'kdelta', '--budget', '3', '--concurrency', '1'], io);
    expect(code).toBe(0);
    expect(out.stderr).toContain('2 variant(s) deferred');
    expect(out.stdout).toMatch(/deferred \(\d of 3 API write requests used: the budget is spent, the next run continues\)/);
    const opened = ['cluster-01', 'cluster-02', 'cluster-03'].map((d) => hub.gh.pulls(f.slug(d)).length);
    expect(opened).toEqual([1, 0, 0]);
    // nothing half made: no branch without its pull request
    for (const d of ['cluster-02', 'cluster-03']) expect(branches(f.slug(d))).toEqual(['main']);

    const next = await run(opts(f, { labels: ['kdelta'] }, { materialize: undefined }));
    expect(next.results.map((r) => r.action)).toEqual(['unchanged', 'proposed', 'proposed']);
    expect(next.budget?.exhausted).toBe(false);
  });

  it('a missing permission names it and says what to change', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const report = await run(opts(f, { token: READ_ONLY_PRS }));
    expect(report.results[0]?.action).toBe('failed');
    expect(report.results[0]?.error).toContain(
      'the token lacks pull_requests=write: give the workflow `permissions: pull-requests: write`, or use a GitHub App token with Pull requests: Read and write',
    );
  });

  it('signed commits are made through the API: verified, and named in the body', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const first = await run(opts(f, { signedCommits: true }));
    expect(first.results[0]?.action).toBe('proposed');
    const [pull] = hub.gh.pulls(f.slug('cluster-01'));
    expect(hub.gh.commitVerified(f.slug('cluster-01'), pull!.head.sha)).toBe(true);
    expect(parseMetadataBlock(pull!.body ?? '')?.headCommit).toBe(pull!.head.sha);
    // the base branch is untouched
    expect(execFileSync('git', ['ls-tree', '--name-only', 'main'], { cwd: hub.gh.gitDir(f.slug('cluster-01')), encoding: 'utf8' })).toBe(
      'README.md\n',
    );
    hub.gh.clearRequests();
    const second = await run(opts(f, { signedCommits: true }));
    expect(second.results[0]?.action).toBe('unchanged');
    expect(hub.gh.writes()).toBe(0);
  });

  it('from a terminal: the token never appears in any output or file; no token or a foreign host is a clear error', async () => {
    const f = await fleet(['cluster-01']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'elsewhere.yaml': `${repository('elsewhere', 'https://gitlab.example/org/repo.git')}---\n${packageVariant('other', 'elsewhere')}`,
    });
    const env = { GITHUB_TOKEN: hub.gh.token, GITHUB_API_URL: hub.gh.apiUrl, GITHUB_SERVER_URL: hub.gh.serverUrl };
    const { io, out } = capture(f.control, env);
    const code = await main(['run', '--forge', 'github', '--report', 'report.json'], io);
    expect(code).toBe(1); // the foreign host fails its variant alone
    const report = readFileSync(join(f.control, 'report.json'), 'utf8');
    expect(JSON.parse(report).results.map((r: { variant: string; action: string }) => [r.variant, r.action])).toEqual([
      ['other', 'failed'],
      ['web', 'proposed'],
    ]);
    for (const text of [out.stdout, out.stderr, report, ...allFiles(f.root), ...allFiles(cacheDir)]) {
      expect(text).not.toContain(hub.gh.token);
      expect(text).not.toContain(Buffer.from(`x-access-token:${hub.gh.token}`).toString('base64'));
    }
    const missing = capture(f.control, {});
    expect(await main(['run', '--forge', 'github'], missing.io)).toBe(1);
    expect(missing.out.stderr).toMatch(/the github forge needs a token: set GITHUB_TOKEN .*or GH_TOKEN/);
  });
});

function capture(cwd: string, env: Record<string, string>) {
  const out = { stdout: '', stderr: '' };
  const io: Io = { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd, env: cleanEnv(env) };
  return { io, out };
}

function branches(slug: string): string[] {
  const dir = join(hub.gh.gitDir(slug), 'refs', 'heads');
  const walk = (d: string, prefix: string): string[] =>
    readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n), `${prefix}${n}/`) : [`${prefix}${n}`]));
  const packed = (() => {
    try {
      return readFileSync(join(hub.gh.gitDir(slug), 'packed-refs'), 'utf8')
        .split('\n')
        .map((l) => /refs\/heads\/(.+)$/.exec(l)?.[1])
        .filter((x): x is string => x !== undefined);
    } catch {
      return [];
    }
  })();
  return [...new Set([...walk(dir, ''), ...packed])].sort();
}
