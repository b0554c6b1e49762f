import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import {
  listProposals,
  parseDashboard,
  renderDashboard,
  renderTable,
  reportJson,
  type CheckedSettings,
  type RolloutReport,
} from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * Where a person sees the fleet's rollouts, on every forge: the dashboard the run keeps (its
 * "Rollouts" section, and its data block) and `kdelta proposals`, which reads them back from that
 * dashboard (the local forge's file, GitHub's issue).
 */

const POLICY = `apiVersion: kdelta.dev/v1alpha1
kind: UpdatePolicy
metadata:
  name: platform
spec:
  rollout:
    waves: [canary, prod]
`;

const ROLLOUT: RolloutReport = {
  policy: 'platform',
  upstream: 'catalog/base-ns',
  revision: 'base-ns/v2',
  commit: 'c'.repeat(40),
  waves: [
    { name: 'canary', variants: 1, merged: 1 },
    { name: 'prod', variants: 2, merged: 0 },
  ],
  reached: 'canary',
  proposing: 'prod',
  waitingOn: ['soak until 2026-12-01T12:00:00.000Z'],
  soakUntil: '2026-12-01T12:00:00.000Z',
};

function labelWaves(f: ScenarioFleet, waves: Readonly<Record<string, string>>): void {
  const file = join(f.control, '.kdelta', 'repositories.yaml');
  let text = readFileSync(file, 'utf8');
  for (const [name, wave] of Object.entries(waves))
    text = text.replace(
      `  name: ${name}\n  namespace: default\n`,
      `  name: ${name}\n  namespace: default\n  labels:\n    kdelta.dev/wave: ${wave}\n`,
    );
  f.writeControl({ 'repositories.yaml': text });
}

describeScenarios("the fleet's rollouts where a person reads them", {}, ({ forge, fleet }) => {
  it('kdelta proposals lists the rollouts the dashboard keeps, beside the proposals', async () => {
    const f = await fleet(
      ['cluster-01'],
      { 'web.yaml': packageVariant('web', 'cluster-01', '', '""'), 'policy.yaml': POLICY },
      { dashboard: true },
    );
    labelWaves(f, { 'cluster-01': 'canary' });
    expect((await f.run()).results.map((r) => [r.variant, r.action])).toEqual([['web', 'proposed']]);

    // the dashboard as a run with this rollout writes it (the same writer)
    f.editDashboard((body) => {
      const marker = /<!-- kdelta-dashboard: [^>]*-->/.exec(body)![0];
      return renderDashboard({ title: 'kdelta dashboard', marker, entries: [], rollouts: [ROLLOUT] });
    });
    expect(f.dashboard()).toContain('### Rollouts (1)');
    expect(parseDashboard(f.dashboard()!).rollouts).toEqual([ROLLOUT]);

    const github = f.github;
    const settings: CheckedSettings = { values: { forge }, origins: { forge: { type: 'option', name: 'forge' } } };
    const listed = await listProposals({
      cwd: f.control,
      settings,
      env: github ? { GITHUB_TOKEN: github.gh.token, GITHUB_API_URL: github.gh.apiUrl, GITHUB_SERVER_URL: github.gh.serverUrl } : {},
      dashboardRepository: github?.controlRepo,
    });
    expect(listed.warnings).toEqual([]);
    expect(listed.proposals.map((p) => [p.head, p.state])).toEqual([['kdelta/web', 'open']]);
    expect(listed.rollouts).toEqual([ROLLOUT]);
  });

  it("a run's rollouts: in its JSON report, under its table, in the dashboard's Rollouts section, and listed by kdelta proposals", async () => {
    const f = await fleet(
      ['cluster-01', 'cluster-02'],
      {
        'web-1.yaml': packageVariant('web-1', 'cluster-01', '', '""'),
        'web-2.yaml': packageVariant('web-2', 'cluster-02', '', '""'),
        'policy.yaml': POLICY,
      },
      { dashboard: true },
    );
    labelWaves(f, { 'cluster-01': 'canary', 'cluster-02': 'prod' });
    const report = await f.run();
    expect(report.results.map((r) => [r.variant, r.action, r.heldBy ?? '-'])).toEqual([
      ['web-1', 'proposed', '-'],
      ['web-2', 'deferred', 'rollout-wave'],
    ]);
    const [rollout, ...more] = (JSON.parse(reportJson(report)) as { rollouts: RolloutReport[] }).rollouts;
    expect(more).toEqual([]);
    expect(rollout).toMatchObject({
      policy: 'platform',
      upstream: 'catalog/base-ns',
      revision: 'base-ns/v1',
      waves: [
        { name: 'canary', variants: 1, merged: 0 },
        { name: 'prod', variants: 1, merged: 0 },
      ],
      proposing: 'canary',
    });
    expect(rollout!.reached).toBeUndefined();
    expect(renderTable(report)).toMatch(
      /\nrollout of catalog\/base-ns base-ns\/v1 \(policy platform\): canary 0\/1, prod 0\/1 merged; no wave has it yet, proposed to canary/,
    );

    const dashboard = f.dashboard()!;
    expect(dashboard).toContain('### Rollouts (1)');
    expect(dashboard).toMatch(
      /- `catalog\/base-ns` `base-ns\/v1` \(policy `platform`, commit `[0-9a-f]{12}`\): no wave has it yet, proposed to `canary`/,
    );
    expect(dashboard).toContain('  - waves: `canary` 0/1 merged · `prod` 0/1 merged');
    expect(dashboard.indexOf('### Rollouts')).toBeLessThan(dashboard.indexOf('### Held by a gate'));

    const github = f.github;
    const listed = await listProposals({
      cwd: f.control,
      settings: { values: { forge }, origins: { forge: { type: 'option', name: 'forge' } } },
      env: github ? { GITHUB_TOKEN: github.gh.token, GITHUB_API_URL: github.gh.apiUrl, GITHUB_SERVER_URL: github.gh.serverUrl } : {},
      dashboardRepository: github?.controlRepo,
    });
    expect(listed.rollouts).toEqual([rollout]);
  });
});
