import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import type { RunOptions, RunReport } from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * A preview computes every variant's change in a work tree of its downstream; a fleet fans a
 * package out to many variants, so what each work tree costs is paid a thousand times. Each is
 * made from the run's one mirror of the downstream by one git process: no clone per variant.
 */

/** One run with every git process tracing what it runs: the report and the git commands run. */
async function traced(f: ScenarioFleet, extra: Partial<RunOptions>): Promise<{ report: RunReport; git: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'kdelta-trace-'));
  const trace = join(dir, 'trace');
  const before = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    const report = await f.run(extra);
    return { report, git: [...readFileSync(trace, 'utf8').matchAll(/built-in: git (\S+)/g)].map((m) => m[1]!) };
  } finally {
    if (before === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = before;
    rmSync(dir, { recursive: true, force: true });
  }
}

const count = (git: readonly string[], command: string) => git.filter((c) => c === command).length;

describeScenarios('the work trees of a preview', {}, ({ fleet }) => {
  it('makes each variant a work tree of its downstream without a clone: one clone per downstream, its mirror', async () => {
    const variants = ['web-1', 'web-2', 'web-3', 'web-4'];
    const f = await fleet(['cluster-01'], Object.fromEntries(variants.map((v) => [`${v}.yaml`, packageVariant(v, 'cluster-01')])));
    const { report, git } = await traced(f, { dryRun: true });
    expect(report.results.map((r) => [r.variant, r.action])).toEqual(variants.map((v) => [v, 'proposed']));
    // the downstream's mirror and the upstream's fetch: the same for one variant or a thousand
    expect(count(git, 'clone')).toBeLessThanOrEqual(2);
    expect(count(git, 'worktree')).toBe(variants.length);
  });
});
