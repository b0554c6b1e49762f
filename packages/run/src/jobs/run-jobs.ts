import type { JobContext } from '../context.js';
import { failure, deferredResult, resultWithoutCredentials, type VariantResult } from '../report/result.js';
import type { Gated } from '../gates/gates.js';
import type { JobsPlan, PlannedJob } from '../plan/jobs-plan.js';
import { pool } from '../pool.js';
import { recordMergedRemoval } from '../propose/settle.js';
import { runGroupJob } from './group.js';
import { runRemovalJob, removalLabel } from './removal.js';
import { runRetireJob } from './retire.js';
import { runUpdateJob } from './update.js';
import { runVariantJob } from './variant.js';

/** What `run()` reports as it goes: the total once every job is known, then each result as it ends. */
export type RunProgress =
  | { readonly type: 'planned'; readonly total: number }
  | { readonly type: 'done'; readonly result: VariantResult; readonly done: number; readonly total: number };

/**
 * The jobs stage: each job that passed the gates runs (a few at a time, one kind after the other),
 * and every job the run planned ends as one result, reported as it ends; the results in name order.
 */
export async function runJobs(
  planned: Pick<JobsPlan, 'collided' | 'merged' | 'guard'>,
  gated: Gated,
  ctx: JobContext,
  options: { readonly concurrency: number; readonly onProgress?: ((event: RunProgress) => void) | undefined },
): Promise<VariantResult[]> {
  const { concurrency } = options;
  // Every job of the run is known now: the progress total never changes after this.
  // a group's members end as one result each
  const jobResults = gated.jobs.reduce((n, j) => n + idsOf(j).length, 0);
  const total = jobResults + planned.collided.size + planned.guard.held.length + gated.held.length + planned.merged.length;
  options.onProgress?.({ type: 'planned', total });
  let done = 0;
  const report = (raw: VariantResult) => {
    const result = resultWithoutCredentials(raw);
    options.onProgress?.({ type: 'done', result, done: ++done, total });
    return result;
  };
  // Once the budget is spent no job starts: each is reported deferred for the next run.
  const run = async (job: PlannedJob): Promise<VariantResult[]> =>
    (ctx.budget?.exhausted ? idsOf(job).map((id) => deferredResult({ ...id, dryRun: ctx.dryRun })) : await start(job, ctx)).map(report);
  const results: VariantResult[] = [];
  for (const kind of ['variant', 'group', 'update', 'removal', 'retire'] as const) {
    results.push(
      ...(
        await pool(
          gated.jobs.filter((j) => j.kind === kind),
          concurrency,
          ctx.signal,
          run,
        )
      ).flat(),
    );
  }
  for (const [r, why] of planned.collided) {
    results.push(report(notRun({ variant: r.variant, downstream: removalLabel(r) }, ctx.dryRun, 'name-collision', why)));
  }
  for (const h of planned.guard.held) results.push(report(notRun(h, ctx.dryRun, 'removals-held', planned.guard.message ?? '')));
  for (const held of gated.held) results.push(report(held));
  for (const m of planned.merged) results.push(report(await recordMergedRemoval(ctx, m)));
  return results.sort((a, b) => (a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : a.downstream < b.downstream ? -1 : 1));
}

async function start(job: PlannedJob, ctx: JobContext): Promise<VariantResult[]> {
  switch (job.kind) {
    case 'variant':
      return [await runVariantJob(job.plan, ctx, job)];
    case 'group':
      return runGroupJob(job.group, ctx);
    case 'update':
      return [await runUpdateJob(job.plan, job.control, ctx)];
    case 'removal':
      return [await runRemovalJob(job.removal, ctx)];
    case 'retire':
      return [await runRetireJob(job.draft, ctx)];
    default:
      return job satisfies never;
  }
}

/** The results a job ends as: one, or one per member of a group. */
function idsOf(job: PlannedJob): { variant: string; downstream: string }[] {
  const members = job.kind === 'group' ? job.group.members : [job];
  return members.map((m) => ({ variant: m.variant, downstream: m.downstream }));
}

/** A removal the run did not start: its failure, with the reason. */
function notRun(r: { variant: string; downstream: string }, dryRun: boolean, code: string, why: string): VariantResult {
  return { variant: r.variant, downstream: r.downstream, dryRun, conflicts: [], conflictCount: 0, ...failure(code, why) };
}
