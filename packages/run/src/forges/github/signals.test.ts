import { execFileSync } from 'node:child_process';
import type { FakeGitHub } from '@kdelta/fake-github';
import { describe, expect, it } from 'vitest';
import { fakeGitHubs } from '../__fixtures__/fake-github.js';
import type { CommitSignal } from '../forge.js';
import { createGitHubForge } from './github.js';

/**
 * A rollout's health signal as the GitHub forge reads it: a commit status (as Flux's
 * notification-controller posts one) or a check run of that name, on a downstream's commit,
 * posted on the fake GitHub as GitHub's API takes them.
 */

const fake = fakeGitHubs();

const head = (gh: FakeGitHub) =>
  execFileSync('git', ['--git-dir', gh.gitDir('org/cluster-01'), 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();

async function post(gh: FakeGitHub, path: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${gh.apiUrl}/repos/org/cluster-01/${path}`, {
    method: 'POST',
    headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

type Posted = { status?: Record<string, unknown>[]; checks?: Record<string, unknown>[] };

interface Case {
  readonly name: string;
  readonly posted: Posted;
  readonly kind: 'status' | 'check-run' | 'any';
  readonly expected: CommitSignal;
  /** API reads the forge makes. */
  readonly reads: number;
}

const CASES: readonly Case[] = [
  { name: 'nothing posted: missing', posted: {}, kind: 'any', expected: { state: 'missing' }, reads: 2 },
  {
    name: 'a green status of that context',
    posted: {
      status: [
        { context: 'flux-system', state: 'success', description: 'Reconciliation finished', target_url: 'https://flux.example.com' },
      ],
    },
    kind: 'status',
    expected: { state: 'success', description: 'Reconciliation finished', url: 'https://flux.example.com' },
    reads: 1,
  },
  {
    name: 'the latest status counts: pending after success is pending',
    posted: {
      status: [
        { context: 'flux-system', state: 'success' },
        { context: 'flux-system', state: 'pending' },
      ],
    },
    kind: 'status',
    expected: { state: 'pending' },
    reads: 1,
  },
  {
    name: 'a status error is a failure; another context is no signal',
    posted: {
      status: [
        { context: 'flux-system', state: 'error', description: 'health check failed' },
        { context: 'other', state: 'success' },
      ],
    },
    kind: 'any',
    expected: { state: 'failure', description: 'health check failed' },
    reads: 1,
  },
  {
    name: 'a check run only: kind status does not see it',
    posted: { checks: [{ name: 'flux-system', conclusion: 'success' }] },
    kind: 'status',
    expected: { state: 'missing' },
    reads: 1,
  },
  {
    name: 'a check run in progress is pending',
    posted: { checks: [{ name: 'flux-system', status: 'in_progress' }] },
    kind: 'check-run',
    expected: { state: 'pending' },
    reads: 1,
  },
  {
    name: 'a timed out check run fails, with its title and page',
    posted: { checks: [{ name: 'flux-system', conclusion: 'timed_out', output: { title: 'no answer from the cluster', summary: '-' } }] },
    kind: 'check-run',
    expected: { state: 'failure', description: 'no answer from the cluster' },
    reads: 1,
  },
  {
    name: 'any: a green status and a failed check run of that name fail',
    posted: { status: [{ context: 'flux-system', state: 'success' }], checks: [{ name: 'flux-system', conclusion: 'cancelled' }] },
    kind: 'any',
    expected: { state: 'failure', description: 'cancelled' },
    reads: 2,
  },
  {
    name: 'any: a neutral check run passes',
    posted: { checks: [{ name: 'flux-system', conclusion: 'neutral' }] },
    kind: 'any',
    expected: { state: 'success', description: 'neutral' },
    reads: 2,
  },
];

describe('the GitHub forge reads a health signal on a commit', () => {
  it.each(CASES)('$name', async (c) => {
    const gh = await fake();
    const sha = head(gh);
    for (const s of c.posted.status ?? []) await post(gh, `statuses/${sha}`, s);
    for (const r of c.posted.checks ?? []) await post(gh, 'check-runs', { head_sha: sha, ...r });
    const forge = createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, pacing: { writeSpacing: false } });
    const before = forge.requests.reads;
    const got = await forge.commitSignal!({ downstream: 'cluster-01', repo: `${gh.serverUrl}/org/cluster-01.git` }, sha, {
      name: 'flux-system',
      kind: c.kind,
    });
    const { url, ...rest } = got;
    const { url: expectedUrl, ...expected } = c.expected;
    expect(rest).toEqual(expected);
    if (expectedUrl) expect(url).toBe(expectedUrl);
    expect(forge.requests.reads - before).toBe(c.reads);
  });
});
