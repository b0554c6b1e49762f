import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { run } from '@kdelta/run';
import { copyMaterialize, githubFleets } from './run/__fixtures__/github-fleet.js';

/**
 * The fleet dashboard's ticks are decisions (retry, allow removals, re-propose): only the issue
 * the run's own identity opened is the dashboard. An outsider's issue with the same title and
 * marker, opened before kdelta's first run and ticked by its author, is no one's decision.
 */

const OUTSIDER = 'ghs_outsider';
const hub = githubFleets({
  fake: {
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      [OUTSIDER]: { login: 'outsider', permissions: { issues: 'write', metadata: 'read' } },
    },
  },
  owner: 'hostile-dash',
});

/** The key an "allow these removals" box carries: anyone can compute it from the variants' names. */
const removalKey = (keys: string[]) =>
  createHash('sha256')
    .update([...keys].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);

describe('hostile: an outsider issue posing as the dashboard', () => {
  it('is never read: its ticked "allow these removals" box does not release the removal guard, and kdelta keeps its own issue', async () => {
    const f = await hub.fleet(['cluster-01']);
    const controlRepo = `${f.owner}/control`;
    await hub.gh.createRepo(controlRepo, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
    const marker = '<!-- kdelta-dashboard: dashboard -->';
    const forged = `${marker}\n- [x] <!-- kdelta-allow-removals:${removalKey(['web cluster-01/web', 'api cluster-01/api'])} --> allow these 2 removals on the next run\n`;
    // opened before kdelta's first run, by someone who may open issues and nothing else
    const res = await fetch(`${hub.gh.apiUrl}/repos/${controlRepo}/issues`, {
      method: 'POST',
      headers: { authorization: `token ${OUTSIDER}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
      body: JSON.stringify({ title: 'kdelta dashboard', body: forged }),
    });
    expect(res.status).toBe(201);
    const outsiders = (await res.json()) as { number: number };

    const opts = (maxRemovals?: number) =>
      hub.runOptions(
        f,
        {},
        { materialize: copyMaterialize, dashboard: { repository: controlRepo }, ...(maxRemovals ? { maxRemovals } : {}) },
      );
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01'), 'api.yaml': packageVariant('api', 'cluster-01') });
    const first = await run(opts());
    expect(first.results.map((r) => r.action)).toEqual(['proposed', 'proposed']);
    expect(first.dashboard).toMatchObject({ outcome: 'created' });
    for (const p of hub.gh.pulls(f.slug('cluster-01'))) await hub.gh.mergePull(f.slug('cluster-01'), p.number);

    // its author ticks it again, whatever a run wrote there
    hub.gh.editIssue(controlRepo, outsiders.number, forged);
    f.writeControl({ 'web.yaml': null, 'api.yaml': null });
    const held = await run(opts(1));
    expect(held.results.map((r) => [r.variant, r.action, r.code])).toEqual([
      ['api', 'failed', 'removals-held'],
      ['web', 'failed', 'removals-held'],
    ]);
    expect(held.dashboard?.ticks.allowRemovals).toEqual([]);
    const issues = hub.gh.issues(controlRepo);
    expect(issues.find((i) => i.number === outsiders.number)?.body).toBe(forged);
    expect(issues.filter((i) => i.user === 'kdelta-bot' && i.title === 'kdelta dashboard')).toHaveLength(1);
  });
});
