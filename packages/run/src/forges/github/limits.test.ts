import type { FakeGitHub } from '@kdelta/fake-github';
import { describe, expect, it } from 'vitest';
import { Budget, DEFAULT_BUDGET } from '../budget.js';
import { fakeGitHubs } from '../__fixtures__/fake-github.js';
import { createGitHubForge } from './github.js';

/**
 * The GitHub forge on servers that differ from github.com: GitHub Enterprise Server's URLs, rate
 * limits reported or not, GitHub's secondary limit on content creation, retried writes.
 */

const fake = fakeGitHubs((gh) => gh.humanCommit('org/cluster-01', 'kdelta/web', { 'web.txt': 'web\n' }));

const target = (gh: FakeGitHub) => ({
  downstream: 'cluster-01',
  repo: `${gh.serverUrl}/org/cluster-01.git`,
  head: 'kdelta/web',
  base: 'main',
});
// the run decides review (review-gate.ts): a proposal with conflicts is not ready
const input = (gh: FakeGitHub, conflicts = 0) => ({
  ...target(gh),
  title: 't',
  body: 'b\n',
  fingerprint: `f${conflicts}`,
  conflicts,
  review: { ready: conflicts === 0, draft: conflicts > 0, autoMerge: conflicts === 0 },
});

describe('GitHub Enterprise Server', () => {
  it('GraphQL goes to GITHUB_GRAPHQL_URL (API under /api/v3, GraphQL where the server says)', async () => {
    const gh = await fake({ graphqlPath: '/api/graphql' });
    const proxied = await fake({ graphqlPath: '/ghe/api/graphql' });
    for (const server of [gh, proxied]) {
      const env = {
        GITHUB_TOKEN: server.token,
        GITHUB_SERVER_URL: server.serverUrl,
        GITHUB_API_URL: `${server.serverUrl}/api/v3`,
        GITHUB_GRAPHQL_URL: server.graphqlUrl,
      };
      const forge = createGitHubForge({ env, pacing: { writeSpacing: false } });
      await forge.upsert(input(server));
      // conflicts now: the pull request turns into a draft, through GraphQL
      await forge.upsert(input(server, 1));
      expect(server.pulls('org/cluster-01')[0]).toMatchObject({ draft: true });
      expect(server.requests.filter((r) => r.path === '/graphql').map((r) => r.status)).toEqual([200]);
    }
  });

  it('a server that reports no rate limit: the default budget does not hold the run back; a chosen budget still does', async () => {
    const gh = await fake({ rateLimitHeaders: false });
    const forgeWith = (budget: Budget) =>
      createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, budget });
    const byDefault = new Budget();
    await forgeWith(byDefault).find(target(gh));
    expect(byDefault.reserve(DEFAULT_BUDGET * 10)).toBeTypeOf('function');
    const chosen = new Budget(5);
    await forgeWith(chosen).find(target(gh));
    expect(chosen.reserve(6)).toBeUndefined();
    // github.com reports its limit: the default holds there
    const github = await fake();
    const onGitHub = new Budget();
    await createGitHubForge({ token: github.token, apiUrl: github.apiUrl, serverUrl: github.serverUrl, env: {}, budget: onGitHub }).find(
      target(github),
    );
    expect(onGitHub.reserve(DEFAULT_BUDGET + 1)).toBeUndefined();
  });

  it('a server that reports its limit: the run stays inside what remains', async () => {
    // 12 requests an hour in all: after the first read, 11 remain
    const gh = await fake({ rateLimit: 12 });
    const budget = new Budget(100);
    const forge = createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, budget });
    await forge.find(target(gh));
    expect(budget.reserve(12)).toBeUndefined();
    expect(new Budget(100).reserve(12)).toBeTypeOf('function');
  });
});

describe('writes', () => {
  it('are paced under GitHub’s per-minute limit on content creation (no request refused, time waited instead)', async () => {
    let now = 1_700_000_000_000;
    const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
    const gh = await fake({ contentCreationPerMinute: 5, clock });
    const forge = createGitHubForge({
      token: gh.token,
      apiUrl: gh.apiUrl,
      serverUrl: gh.serverUrl,
      env: {},
      clock,
      pacing: { writeSpacing: false, retryAfterUnitMs: 1, writesPerMinute: 5 },
    });
    const { proposal } = await forge.upsert(input(gh));
    const start = now;
    for (let i = 0; i < 12; i++) await forge.setStatus(proposal, { state: 'success', description: `run ${i}` });
    expect(gh.requests.filter((r) => r.status === 403)).toEqual([]);
    expect(gh.writes()).toBe(13);
    // 13 writes at 5 a minute: the last waited two minutes past the first
    expect(now - start).toBeGreaterThanOrEqual(120_000);
    // and no minute ever saw more than 5
    const times = gh.requests.filter((r) => r.write).map((r) => r.at!);
    for (const t of times) expect(times.filter((u) => u > t - 60_000 && u <= t).length).toBeLessThanOrEqual(5);
  });

  it('the budget is a ceiling: a retried write counts, and one past the budget is not sent', async () => {
    const gh = await fake();
    const budget = new Budget(2);
    const forge = createGitHubForge({
      token: gh.token,
      apiUrl: gh.apiUrl,
      serverUrl: gh.serverUrl,
      env: {},
      budget,
      pacing: { writeSpacing: false, retryAfterUnitMs: 1 },
    });
    const { proposal } = await forge.upsert(input(gh));
    gh.clearRequests();
    gh.rateLimitNext(1, 1);
    // refused once, retried: that is the second write; there is none left for a third
    await expect(forge.setStatus(proposal, { state: 'success', description: 'ok' })).rejects.toThrow(/budget \(2\) is spent/);
    expect(budget.used).toBe(2);
    expect(gh.writes()).toBe(1);
  });
});
