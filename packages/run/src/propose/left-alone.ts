import { checkpoint, type JobContext } from '../context.js';
import type { Proposal, ProposalStatus, ProposalTarget } from '../forges/forge.js';
import { withAutoMergeOff } from './proposal-metadata.js';
import { costOf, reserve } from './reserve.js';
import { DEFERRED_MESSAGE, message, proposalRef, type VariantResult } from '../report/result.js';
import { autoMergeToTurnOff, reviewGate } from './review-gate.js';
import type { BranchCommit } from './workspace.js';

/**
 * A proposal branch holding commits kdelta did not make, which kdelta leaves as it is: reported,
 * and held back from merging by itself (nothing merges that nobody reviewed).
 */

/** What a job that leaves a branch alone reports. */
export type Blocked = Pick<VariantResult, 'action' | 'writes' | 'proposal' | 'message'>;

/**
 * A branch with commits kdelta did not make, when nothing moved (or they cannot be carried
 * forward, for `reason`): left alone, and said so.
 */
export function blockedBy(foreign: readonly BranchCommit[], target: ProposalTarget, open: Proposal | undefined, reason?: string): Blocked {
  const named = foreign.map((c) => `${c.sha.slice(0, 12)} by ${c.name} <${c.email}>`);
  const why = reason ? ` and cannot be carried forward: ${reason}` : '';
  return {
    action: 'blocked',
    writes: false,
    proposal: open ? proposalRef(open) : undefined,
    message: `branch ${target.head} has ${foreign.length} commit(s) kdelta did not make (${named.join(', ')})${why}: left alone; a new upstream commit or a change of the variant updates it on top of them (or merge or delete it)`,
  };
}

/**
 * A branch left alone (`blocked`, holding the commits `foreign`) with an open proposal is held back from merging by
 * itself: its auto-merge, when on, is turned off (with a line in its body saying why), and its tip
 * gets a status naming the commits kdelta did not make, once per tip.
 */
export async function leftAlone(
  ctx: JobContext,
  blocked: Blocked,
  foreign: readonly BranchCommit[],
  open: Proposal | undefined,
  tip: string | undefined,
): Promise<Blocked> {
  if (!open || !tip || ctx.dryRun) return blocked;
  const gate = reviewGate({ kind: 'left-alone', foreign: foreign.map((c) => c.sha) });
  const turnOff = autoMergeToTurnOff(open, gate);
  const release = reserve(ctx, turnOff ? costOf(ctx, { kind: 'upsert', created: false }) : 0);
  if (!release) return { ...blocked, action: 'deferred', message: `${blocked.message}; ${DEFERRED_MESSAGE}` };
  const done: string[] = [];
  try {
    await checkpoint(ctx.signal);
    if (turnOff) {
      const { downstream, repo, head, base, title, body, fingerprint } = open;
      await ctx.forge.upsert({
        downstream,
        repo,
        head,
        base,
        title,
        body: withAutoMergeOff(body, gate.held!),
        fingerprint,
        review: { ready: gate.ready, autoMerge: gate.autoMerge },
      });
      done.push('auto-merge turned off');
    }
    try {
      if (await statusOnce(ctx, open, gate.status, tip)) done.push(`status "${gate.status.description}" on ${tip.slice(0, 12)}`);
    } catch (error) {
      // a status that did not land is posted by the next run; auto-merge, above, is never left on
      done.push(message(error));
    }
  } finally {
    release();
  }
  return done.length > 0 ? { ...blocked, writes: true, message: `${blocked.message}; ${done.join('; ')}` } : blocked;
}

/**
 * Post `status` on `commit` unless it has one of kdelta's already (GitHub keeps statuses per
 * commit); a forge that keeps one per proposal (local) records it when it differs. True when written.
 */
async function statusOnce(ctx: JobContext, open: Proposal, status: ProposalStatus, commit: string): Promise<boolean> {
  if (ctx.forge.ensureStatus) return ctx.forge.ensureStatus(open, status, commit);
  if (open.status?.state === status.state && open.status.description === status.description) return false;
  await ctx.forge.setStatus(open, status, commit);
  return true;
}
