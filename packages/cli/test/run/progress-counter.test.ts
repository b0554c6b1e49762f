import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { cliFleets, mergeBranch as merge } from './__fixtures__/cli-fleet.js';

const { fleet, kdelta } = cliFleets();

/** The `[n/N]` lines a run printed on stderr: each counter's label, n and N. */
function counters(stderr: string): { label: string; n: number; total: number }[] {
  return [...stderr.matchAll(/^(.*?)\[(\d+)\/(\d+)\]/gm)].map((m) => ({ label: m[1]!, n: Number(m[2]), total: Number(m[3]) }));
}

/** Each counter counts up by one from 1 to its total, which never changes. */
function expectHonest(stderr: string, resultRows: number): void {
  const lines = counters(stderr);
  const byLabel = new Map<string, { n: number; total: number }[]>();
  for (const l of lines) byLabel.set(l.label, [...(byLabel.get(l.label) ?? []), l]);
  for (const [label, seen] of byLabel) {
    const total = seen[0]!.total;
    expect(
      seen.map((s) => `${s.n}/${s.total}`),
      `${label || 'jobs'}: ${stderr}`,
    ).toEqual(seen.map((_, i) => `${i + 1}/${total}`));
  }
  // every result of the report was counted once
  expect(lines.length, stderr).toBe(resultRows);
}

describe('progress counters', () => {
  it('every job, removals, closed drafts and merged removals included, is counted against a total known before the first line', async () => {
    const f = fleet(['cluster-01', 'cluster-02']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'db.yaml': packageVariant('db', 'cluster-02'),
    });
    const first = await kdelta(f, 'run');
    expectHonest(first.stderr, 3);
    merge(f, 'cluster-01', 'kdelta/web');
    merge(f, 'cluster-01', 'kdelta/api');
    // web is retired (a removal), db's open proposal is closed (a retired draft)
    f.writeControl({ 'web.yaml': null, 'db.yaml': null });
    const second = await kdelta(f, 'run', '--report', 'report.json');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/web\s+cluster-01\/web\s+removal-proposed/);
    expect(second.stdout).toMatch(/db\s+cluster-02\/db\s+closed/);
    expectHonest(second.stderr, 3);
    // the removal is merged: the next run records it merged, and counts it
    merge(f, 'cluster-01', 'kdelta/web');
    const third = await kdelta(f, 'run');
    expect(third.stdout).toMatch(/web\s+cluster-01\s+up-to-date/);
    const rows = third.stdout.split('\n').filter((l) => /^(web|api|db)\s/.test(l)).length;
    expectHonest(third.stderr, rows);
  });
});
