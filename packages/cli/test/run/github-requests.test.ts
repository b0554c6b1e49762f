import { describe, expect, it } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import { copyMaterialize, githubFleets } from './__fixtures__/github-fleet.js';

/**
 * What a run costs in GitHub API requests, counted by the fake GitHub: at 1,000 variants the hour's
 * 5,000 requests are the limit, so a run with nothing new makes one read per repository (its open
 * pull requests, statuses included: the body says whether its commit's status landed) and one for
 * the run's dashboard (who the token is and the open issues, in one GraphQL query), and no write.
 * Where GraphQL names no viewer (an older Enterprise Server, a proxy), REST still finds the
 * dashboard, for two reads more.
 */

const NO_STATUSES = 'ghs_no_statuses';
const tokens = {
  ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
  [NO_STATUSES]: {
    login: 'no-statuses',
    permissions: { contents: 'write', pull_requests: 'write', issues: 'write', metadata: 'read' },
  },
} as const;
const hub = githubFleets({ fake: { tokens }, owner: 'economy' });
const restHub = githubFleets({ fake: { tokens, graphqlViewer: false }, owner: 'economy-rest' });

type Control = Fleet & { controlRepo: string; slug(d: string): string };

async function fleet(downstreams: string[], on = hub): Promise<Control> {
  const f = await on.fleet(downstreams);
  await on.gh.createRepo(`${f.owner}/control`, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
  return Object.assign(f, { controlRepo: `${f.owner}/control` });
}

const opts = (f: Control, github: RunOptions['github'] = {}, on = hub): RunOptions =>
  on.runOptions(f, github, { materialize: copyMaterialize, dashboard: { repository: f.controlRepo } });

const variants = ['a', 'b', 'c', 'd', 'e'];

describe('GitHub API requests of a run', () => {
  it.each([
    { fleet: '5 variants in 5 repositories', repos: variants.map((v) => `cluster-${v}`), reads: 5 + 1, on: hub },
    { fleet: '5 variants in 1 repository', repos: variants.map(() => 'cluster-a'), reads: 1 + 1, on: hub },
    {
      fleet: '5 variants in 5 repositories, GraphQL naming no viewer',
      repos: variants.map((v) => `cluster-${v}`),
      reads: 5 + 3,
      on: restHub,
    },
  ])('a run with nothing new over $fleet: $reads reads, no write', async ({ repos, reads, on }) => {
    const f = await fleet([...new Set(repos)], on);
    f.writeControl(Object.fromEntries(variants.map((v, i) => [`${v}.yaml`, packageVariant(v, repos[i]!)])));
    const first = await run(opts(f, {}, on));
    expect(first.results.map((r) => r.action)).toEqual(variants.map(() => 'proposed'));
    // every pull request has its status, posted by the run that opened it
    for (const [i, v] of variants.entries()) {
      const pull = on.gh.pulls(f.slug(repos[i]!)).find((p) => p.head.ref === `kdelta/${v}`)!;
      expect(on.gh.statuses(f.slug(repos[i]!), pull.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
    }
    on.gh.clearRequests();
    const second = await run(opts(f, {}, on));
    expect(second.results.map((r) => r.action)).toEqual(variants.map(() => 'unchanged'));
    expect({ reads: on.gh.requests.filter((r) => !r.write).length, writes: on.gh.writes() }).toEqual({ reads, writes: 0 });
    // the dashboard the first run opened was found again, not opened twice
    expect(on.gh.issues(f.controlRepo)).toHaveLength(1);
  });

  it('a status that did not land is said in the body: the next run reads it and posts it', async () => {
    const f = await fleet(['cluster-a']);
    f.writeControl({ 'a.yaml': packageVariant('a', 'cluster-a') });
    const first = await run(opts(f, { token: NO_STATUSES }));
    expect(first.results[0]).toMatchObject({ action: 'proposed', message: expect.stringMatching(/statuses=write/) });
    const [pull] = hub.gh.pulls(f.slug('cluster-a'));
    expect(hub.gh.statuses(f.slug('cluster-a'), pull!.head.sha)).toEqual([]);
    hub.gh.clearRequests();
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({ action: 'unchanged', writes: true });
    expect(hub.gh.statuses(f.slug('cluster-a'), pull!.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
    expect(hub.gh.requests.filter((r) => r.operationId === 'repos/get-combined-status-for-ref')).toHaveLength(1);
  });

  it('a 502 after GitHub opened the pull request: reported proposed, its status posted in the same run', async () => {
    const f = await fleet(['cluster-a']);
    f.writeControl({ 'a.yaml': packageVariant('a', 'cluster-a') });
    hub.gh.failAfterApplying('pulls/create', 1, 502);
    const first = await run(opts(f));
    expect(hub.gh.requests.filter((r) => r.operationId === 'pulls/create').map((r) => r.status)).toEqual([502]);
    expect(first.results[0]).toMatchObject({ action: 'proposed', writes: true });
    expect(first.results[0]?.message).toBeUndefined();
    const [pull] = hub.gh.pulls(f.slug('cluster-a'));
    expect(hub.gh.statuses(f.slug('cluster-a'), pull!.head.sha)).toMatchObject([{ state: 'success', context: 'kdelta' }]);
  });
});
