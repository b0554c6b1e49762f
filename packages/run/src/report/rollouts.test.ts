import { describe, expect, it } from 'vitest';
import type { RolloutStatus } from '../policy/policy.js';
import { renderTable, reportJson } from './report.js';
import type { VariantResult } from './result.js';
import { rolloutStatus } from './__fixtures__/rollout-status.js';
import { readRolloutReports, rolloutLine, rolloutReport } from './rollouts.js';
import { runReport } from './run-report.js';

const status = rolloutStatus;

const web: VariantResult = {
  variant: 'web',
  downstream: 'cluster-01/web',
  action: 'proposed',
  writes: true,
  dryRun: false,
  conflicts: [],
  conflictCount: 0,
};

const report = (rollouts: RolloutStatus[]) =>
  runReport({
    version: '1',
    settings: { dryRun: false, mode: 'variants', shard: undefined },
    results: [web],
    warnings: [],
    budget: undefined,
    dashboard: undefined,
    scope: undefined,
    policies: { byVariant: new Map(), rollouts, warnings: [] },
  });

describe("the run's rollouts in its reports", () => {
  it('the JSON report has each rollout, its waves and its dates as text; none when no policy has waves', () => {
    const json = JSON.parse(reportJson(report([status()]))) as { rollouts: unknown };
    expect(json.rollouts).toEqual([
      {
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
        waitingOn: ['soak until 2026-03-02T12:00:00.000Z'],
        soakUntil: '2026-03-02T12:00:00.000Z',
      },
    ]);
    expect(JSON.parse(reportJson(report([])))).not.toHaveProperty('rollouts');
  });

  it.each([
    {
      name: 'on its way',
      rollout: status(),
      line: 'rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; reached canary, proposed to prod; the rollout waits on: soak until 2026-03-02T12:00:00.000Z',
    },
    {
      name: 'not started',
      rollout: status({ reached: -1, proposing: 'canary', waitingOn: ['merge of web in cluster-01'] }),
      line: 'rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; no wave has it yet, proposed to canary; prod waits on: merge of web in cluster-01',
    },
    {
      name: 'halted: says why, and waits on nothing',
      rollout: status({ halted: 'status flux-system failed on cluster-01 (canary)' }),
      line: 'rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; reached canary, proposed to prod; HALTED: status flux-system failed on cluster-01 (canary)',
    },
    {
      name: 'advanced by hand',
      rollout: status({ advancedTo: 'prod', waitingOn: [] }),
      line: 'rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; reached canary, proposed to prod; advanced by hand to prod',
    },
    {
      name: 'done',
      rollout: status({ reached: 1, proposing: undefined, waitingOn: [] }),
      line: 'rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; every wave has it',
    },
  ])('one line of text: $name', ({ rollout, line }) => {
    expect(rolloutLine(rolloutReport(rollout))).toBe(line);
  });

  it("the run's table prints one line per rollout after the table, before the summary", () => {
    const table = renderTable(report([status(), status({ revision: 'base-ns/v3', reached: -1, proposing: 'canary' })]));
    const lines = table.split('\n');
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    expect(at('web ')).toBeLessThan(at('rollout of catalog/base-ns base-ns/v2'));
    expect(at('rollout of catalog/base-ns base-ns/v2')).toBe(at('rollout of catalog/base-ns base-ns/v3') - 1);
    expect(at('rollout of catalog/base-ns base-ns/v3')).toBeLessThan(at('1 variant(s), 0 failed'));
    expect(renderTable(report([]))).not.toContain('rollout');
  });

  it('reads back only rollouts of the form (a data block a person edited)', () => {
    const good = rolloutReport(status());
    expect(readRolloutReports([good, { ...good, waves: [{ name: 'x', variants: -1, merged: 0 }] }, 'x', null, { policy: 1 }])).toEqual([
      good,
    ]);
    expect(readRolloutReports({ not: 'a list' })).toEqual([]);
  });
});

describe('a rollout as text in a terminal', () => {
  it("shows a stranger's control characters (a terminal's escapes) as spaces", () => {
    const line = rolloutLine(rolloutReport(status({ halted: 'status \u001b[2Jflux failed\ron cluster-01', revision: 'v2\u0007' })));
    expect(line).toContain('base-ns v2  (policy platform)');
    expect(line).toContain('HALTED: status  [2Jflux failed on cluster-01');
    expect([...line].filter((c) => c.charCodeAt(0) < 0x20)).toEqual([]);
  });
});
