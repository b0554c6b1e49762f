import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, packageVariant, repository, tempDir, type Fleet } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { renderTable } from '../report/report.js';
import { run, type RunOptions } from '../run.js';
import { PASS, type Gate } from './gate.js';
import { GATES } from './gates.js';

// The gate slot, proved by a gate of this file's own: a freeze of one variant until a given time.
// Real repositories, the local forge, the whole run: what a user of a schedule window would see.

const NOW = new Date('2026-03-02T10:00:00Z');
const THAW = new Date('2026-03-02T18:00:00Z');

/** Holds the variants named until `until`: the shape a freeze or a schedule window takes. */
function freeze(variants: readonly string[], until: Date): Gate & { seen: string[] } {
  const seen: string[] = [];
  return {
    name: 'freeze',
    seen,
    decide(job, context) {
      seen.push(`${job.kind} ${job.variant} ${context.now.toISOString()}`);
      if (!variants.includes(job.variant) || context.now >= until) return PASS;
      return { pass: false, reason: `${job.variant} is frozen`, lookAgain: until };
    },
  };
}

function fleet(): Fleet {
  const f = createFleet(['cluster-01', 'cluster-02']);
  onTestFinished(() => f.cleanup());
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      repository('cluster-01', f.downstream('cluster-01')),
      repository('cluster-02', f.downstream('cluster-02')),
    ].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'api.yaml': packageVariant('api', 'cluster-02'),
  });
  return f;
}

function options(f: Fleet, more: Partial<RunOptions> = {}): RunOptions {
  const cacheDir = tempDir();
  return {
    cwd: f.control,
    mode: 'variants',
    cacheDir,
    env: {
      ...process.env,
      KDELTA_CACHE_DIR: cacheDir,
      GIT_AUTHOR_NAME: 'kdelta',
      GIT_AUTHOR_EMAIL: 'kdelta@noreply.invalid',
      GIT_COMMITTER_NAME: 'kdelta',
      GIT_COMMITTER_EMAIL: 'kdelta@noreply.invalid',
    },
    ...more,
  };
}

describe('a gate holds a job before it proposes', () => {
  it('holds the one variant it names: deferred with its reason, no branch, no record; the others propose; a later run proposes it', async () => {
    const f = fleet();
    const gate = freeze(['web'], THAW);
    const held = await run(options(f, { gates: [...GATES, gate], now: () => NOW }));

    // the gate saw every planned job, at the run's one instant
    expect(gate.seen.sort()).toEqual([`variant api ${NOW.toISOString()}`, `variant web ${NOW.toISOString()}`]);
    const web = held.results.find((r) => r.variant === 'web');
    expect(held.results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'proposed'],
      ['web', 'deferred'],
    ]);
    expect(web).toMatchObject({
      downstream: 'cluster-01/web',
      heldBy: 'freeze',
      writes: false,
      message: `web is frozen (looked at again from ${THAW.toISOString()})`,
    });
    expect(held.failed).toBe(0);
    // nothing of web was written: no branch on its downstream
    expect(f.refs('cluster-01')).not.toContain('kdelta/web');
    expect(f.refs('cluster-02')).toContain('refs/heads/kdelta/api');
    // the table and the dashboard say who held it and why
    expect(renderTable(held)).toMatch(/web +cluster-01\/web +deferred \(freeze\)/);
    expect(renderTable(held)).toContain(
      'Held by a gate (a later run proposes them):\n  freeze: web is frozen (looked at again from 2026-03-02T18:00:00.000Z)\n    web → cluster-01/web\n',
    );
    expect(renderTable(held)).toMatch(/, 1 held by a gate\n$/);
    const dashboard = readFileSync(join(f.control, '.kdelta', 'proposals', 'dashboard-variants.md'), 'utf8');
    expect(dashboard).toContain('### Held by a gate (a schedule window, a freeze, a rollout wave): a later run proposes it (1)');
    expect(dashboard).toContain(
      '- `web` → `cluster-01/web`, held by `freeze`: `web is frozen (looked at again from 2026-03-02T18:00:00.000Z)`',
    );
    expect(dashboard).not.toContain("### Deferred: the run's write budget was spent");

    // once the freeze ends, the next run proposes the held variant
    const thawed = await run(options(f, { gates: [...GATES, gate], now: () => THAW }));
    expect(thawed.results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'unchanged'],
      ['web', 'proposed'],
    ]);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
  });

  it('a hold with a code needs a person: the job fails with that code, as the removal guard does', async () => {
    const f = fleet();
    const stop: Gate = {
      name: 'policy',
      decide: (job) => (job.variant === 'api' ? { pass: false, code: 'policy-refused', reason: 'api may not be proposed' } : PASS),
    };
    const report = await run(options(f, { gates: [...GATES, stop], now: () => NOW }));
    expect(report.results.map((r) => [r.variant, r.action, r.code, r.error])).toEqual([
      ['api', 'failed', 'policy-refused', 'api may not be proposed'],
      ['web', 'proposed', undefined, undefined],
    ]);
    expect(report.failed).toBe(1);
    expect(f.refs('cluster-02')).not.toContain('kdelta/api');
  });
});
