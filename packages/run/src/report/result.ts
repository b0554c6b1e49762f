import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import { hideCredentials } from '@kdelta/git-source';
import type { BudgetReport } from '../forges/budget.js';
import type { Proposal } from '../forges/forge.js';
import type { FileChange } from '../propose/proposal-body.js';
import type { ProposalUpstream } from '../propose/proposal-metadata.js';
import type { RenderFailureReport } from '../jobs/render.js';
import type { Shard } from '../plan/shard.js';
import type { RolloutReport } from './rollouts.js';

/**
 * What a job ends as: its action, its proposal, and when it failed, a code and a message. Every
 * result leaves the run through {@link resultWithoutCredentials}.
 */

export type JobAction =
  /** A new proposal (branch pushed). */
  | 'proposed'
  /** The open proposal was brought up to date (branch pushed or body rewritten). */
  | 'updated'
  /** The open proposal already proposes exactly this. */
  | 'unchanged'
  /** The downstream already has this content: nothing to propose. */
  | 'up-to-date'
  /** A proposal no longer needed was closed and its branch deleted. */
  | 'closed'
  /** The branch carries commits kdelta did not make: left alone. */
  | 'blocked'
  /** The package exists and belongs to no one (or someone else); adoptNone leaves it alone. */
  | 'not-adopted'
  /** The variant is gone: a proposal removing its package (deletionPolicy delete) or its ownership (orphan). */
  | 'removal-proposed'
  | 'orphan-proposed'
  /**
   * A person declined this proposal (closed it unmerged; on the local forge, deleted its branch)
   * and its inputs are the same: not proposed again until the upstream or the variant changes.
   */
  | 'declined'
  /** The run's API budget was spent before this one could write: the next run does it. */
  | 'deferred'
  | 'failed';

export interface VariantResult {
  readonly variant: string;
  /** `<Repository>/<package>`. */
  readonly downstream: string;
  readonly action: JobAction;
  /** Whether the action writes (pushes, records): in a dry run, what would have been written. */
  readonly writes: boolean;
  readonly dryRun: boolean;
  readonly proposal?:
    | { readonly id: string; readonly url: string; readonly state: string; readonly head: string; readonly base: string }
    | undefined;
  readonly conflicts: readonly Conflict[];
  /** Conflicts of the proposal (also when they were not recomputed: a fast no-op). */
  readonly conflictCount: number;
  readonly upstream?: ProposalUpstream | undefined;
  readonly fingerprint?: string | undefined;
  /** Why: for blocked, not-adopted, closed, deferred... */
  readonly message?: string | undefined;
  /** The gate (gates/) that deferred this job to a later run: `message` says why, and when to look again. */
  readonly heldBy?: string | undefined;
  /** Its rollout wave, when an update policy with waves governs the variant (`index`: the wave's place in the policy's order). */
  readonly wave?: { readonly name: string; readonly index: number } | undefined;
  /** The proposal's whole body when this run wrote (or would write) it; the forge's copy may be shortened. */
  readonly body?: string | undefined;
  /** Why the job failed, one line or more (`action` is 'failed'). */
  readonly error?: string | undefined;
  /**
   * What failed, as a stable code a caller can act on: the `code` of the KdeltaError that stopped
   * the job (a RunError, ForgeError, GitError...: `forbidden` and `missing-permission` for a token
   * that may not write), a job's own (`upstream-unresolved`: the revision or ref names nothing
   * upstream; `no-release`: a variant without a revision found no release tag of its package to
   * follow; `variant-failed`: the variant's mutations failed), or `failed` for an error without one.
   */
  readonly code?: string | undefined;
  /** The render failed: the package was proposed unrendered, the proposal says why (not an error of the run). */
  readonly renderFailure?: RenderFailureReport | undefined;
  /** A dry run: the files the proposal would change against the base branch (a preview lists them). */
  readonly changes?: readonly FileChange[] | undefined;
  /** A dry run: what the update did to each resource (a preview lists those that change). */
  readonly resources?: readonly ResourceReport[] | undefined;
  /**
   * A dry run that would write: the content is there already, and a preview reports no change —
   * `open`: the open proposal's branch holds exactly it (only its text or inputs would be
   * rewritten); `lock`: only the package's Kptfile upstream lock would move.
   */
  readonly sameContent?: 'open' | 'lock' | undefined;
  /** The declined proposal (its URL) a dashboard tick asked for again, which this job proposed anew. */
  readonly reproposed?: string | undefined;
}

/** What a run did with its dashboard (see dashboard-run.ts). */
export interface DashboardReport {
  /** `created`/`updated`: written; `unchanged`: nothing to write; `raced`: changed since it was read, left for the next run; `skipped`: not kept (see `reason`). */
  readonly outcome: 'created' | 'updated' | 'unchanged' | 'raced' | 'skipped';
  readonly url?: string | undefined;
  readonly reason?: string | undefined;
  /** The ticks this run acted on: job keys (`<variant> <downstream>`) retried first, removal sets allowed, declined proposals (URLs) proposed again. */
  readonly ticks: { readonly retry: readonly string[]; readonly allowRemovals: readonly string[]; readonly repropose: readonly string[] };
}

export interface RunReport {
  readonly version: string;
  readonly dryRun: boolean;
  readonly mode: 'variants' | 'updates' | 'both';
  readonly shard?: Shard | undefined;
  readonly results: readonly VariantResult[];
  readonly warnings: readonly string[];
  readonly failed: number;
  /** The forge's write budget (GitHub): what it allowed, what the run used, whether it ran out. */
  readonly budget?: BudgetReport | undefined;
  /** What the run did with the fleet dashboard (none in a dry run or with the dashboard off). */
  readonly dashboard?: DashboardReport | undefined;
  /** A preview of an upstream ref (RunOptions.upstreamRef): the Repository and the commit it ran at. */
  readonly upstreamRef?: { readonly repository: string; readonly url: string; readonly ref: string; readonly commit: string } | undefined;
  /** The fleet's rollouts (update policies with waves): each revision's way through the waves. Absent when there are none. */
  readonly rollouts?: readonly RolloutReport[] | undefined;
}

/** The result of a job before the run names it: what every job fills in. */
export type JobOutcome = Omit<VariantResult, 'variant' | 'downstream' | 'dryRun' | 'conflicts' | 'conflictCount'> &
  Partial<Pick<VariantResult, 'conflicts' | 'conflictCount'>>;

/** Which job a result is of, before it ran. */
export interface JobIdentity {
  readonly variant: string;
  /** `<Repository>/<package>`. */
  readonly downstream: string;
  readonly dryRun: boolean;
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The stable code of what was thrown: a KdeltaError's own, else `failed`. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && code !== '' ? code : 'failed';
}

/** A failed job's outcome: the code and the message of what stopped it. */
export function failure(code: string, error: string): JobOutcome {
  return { action: 'failed', writes: false, code, error };
}

/** A job's outcome as its result; whatever it throws is its failure (never the run's), in `describe`'s words. */
export async function runJob(
  id: JobIdentity,
  job: () => Promise<JobOutcome>,
  describe: (error: unknown) => string = message,
): Promise<VariantResult> {
  const base = { ...id, conflicts: [], conflictCount: 0 };
  try {
    return { ...base, ...(await job()) };
  } catch (error) {
    return { ...base, ...failure(errorCode(error), describe(error)) };
  }
}

export const DEFERRED_MESSAGE = "the run's API write budget is spent: the next run continues";

/** A job that did not start: the run's write budget was spent before it. */
export function deferredResult(id: JobIdentity): VariantResult {
  return { ...id, action: 'deferred', writes: false, conflicts: [], conflictCount: 0, message: DEFERRED_MESSAGE };
}

export function proposalRef(p: Proposal): VariantResult['proposal'] {
  return { id: p.id, url: p.url, state: p.state, head: p.head, base: p.base };
}

/** A result with every URL's credentials left out of its texts: it is printed, reported and summarised. */
export function resultWithoutCredentials(result: VariantResult): VariantResult {
  const clean = (text: string | undefined) => (text === undefined ? undefined : hideCredentials(text));
  return {
    ...result,
    ...(result.error !== undefined ? { error: clean(result.error) } : {}),
    ...(result.message !== undefined ? { message: clean(result.message) } : {}),
    ...(result.body !== undefined ? { body: clean(result.body) } : {}),
    ...(result.upstream ? { upstream: { ...result.upstream, repo: hideCredentials(result.upstream.repo) } } : {}),
  };
}

/** What a result counts as in a run's totals (the Action's outputs of the same names). */
export type Counted = 'created' | 'updated' | 'closed' | 'declined' | 'unchanged' | 'deferred' | 'failed';

export type Counts = Record<Counted, number>;

export function countedAs(action: JobAction): Counted {
  switch (action) {
    case 'proposed':
    case 'removal-proposed':
    case 'orphan-proposed':
      return 'created';
    case 'updated':
      return 'updated';
    case 'closed':
      return 'closed';
    case 'declined':
      return 'declined';
    case 'deferred':
      return 'deferred';
    case 'failed':
      return 'failed';
    // nothing was written
    case 'unchanged':
    case 'up-to-date':
    case 'blocked':
    case 'not-adopted':
      return 'unchanged';
    default:
      return action satisfies never;
  }
}

export function countResults(results: readonly Pick<VariantResult, 'action'>[]): Counts {
  const counts: Counts = { created: 0, updated: 0, closed: 0, declined: 0, unchanged: 0, deferred: 0, failed: 0 };
  for (const r of results) counts[countedAs(r.action)]++;
  return counts;
}
