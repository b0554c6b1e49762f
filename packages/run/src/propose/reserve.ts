import type { JobContext } from '../context.js';
import type { WriteOperation } from '../forges/forge.js';

/** What a write costs in forge requests (the forge says; free when it does not). */
export const costOf = (ctx: JobContext, op: WriteOperation) => ctx.forge.writeCost?.(op) ?? 0;

/** Reserve a job's writes from the run's budget; undefined: the budget cannot cover them (defer the job). */
export function reserve(ctx: JobContext, cost: number): (() => void) | undefined {
  if (!ctx.budget) return () => {};
  return ctx.budget.reserve(cost);
}
