import { carryForward, carryOnto, outsideMessage } from './carry.js';
import type { Change, Prepared } from '../jobs/change.js';
import { checkpoint, type JobContext } from '../context.js';
import type { Proposal } from '../forges/forge.js';
import { applyDecisions, decisionsMessage } from './decisions.js';
import { declineNote } from './decline-note.js';
import { pendingTicks } from './proposal-body.js';
import { parseMetadataBlock } from './proposal-metadata.js';
import { blockedBy, leftAlone } from './left-alone.js';
import { autoMergeToTurnOff, reviewGate } from './review-gate.js';
import { proposalRef, type JobOutcome } from '../report/result.js';
import { baseHistoryIn, type BranchCommit, type Mirror, type Workspace } from './workspace.js';
import { COMMIT_TRAILER, reachedBase } from './protocol.js';
import { conflictCount, proposeWorkspace, stopped } from './publish.js';
import { memoApplies, rememberUpToDate, wasUpToDate, type UpToDateKey } from './up-to-date-memo.js';

/**
 * The one protocol every job's change goes through: stop label, fast no-op, checkout, prepare,
 * diff, foreign commits, commit, push or publish, upsert, status — each write reserved from the
 * run's budget before the first.
 */

export { COMMIT_TRAILER } from './protocol.js';

/** Propose a change: from the forge's open proposal to the pushed branch and its proposal. */
export async function propose(ctx: JobContext, change: Change): Promise<JobOutcome> {
  const { target, fingerprint } = change;
  const known = change.upstream ? { upstream: change.upstream } : {};
  // The forge first: a repository it cannot serve fails here, before anything is cloned.
  let open = await ctx.forge.find(target);
  // the branches as ls-remote reports them: a fast no-op clones nothing
  const heads = await ctx.heads(target.repo);
  const stop = stopped(open, target.head);
  if (stop) return { ...stop, fingerprint, ...known };
  // People can say no: a declined proposal is not proposed again from the same inputs.
  let declined: Proposal | undefined;
  let justDeclined = false;
  if (open && (await declinedNow(change, open, heads, () => ctx.mirror(target.repo)))) {
    declined = ctx.dryRun ? { ...open, state: 'declined' } : await ctx.forge.close(open, 'declined');
    justDeclined = true;
    open = undefined;
  } else if (!open) declined = await ctx.forge.declined?.(target);
  // a person asked for it again (the dashboard's "re-propose"): proposed as if never declined
  const reproposed = declined && !justDeclined && ctx.repropose?.has(declined.url) ? declined.url : undefined;
  if (reproposed) declined = undefined;
  if (declined && declined.fingerprint === fingerprint) {
    return {
      action: 'declined',
      writes: justDeclined,
      proposal: proposalRef(declined),
      fingerprint,
      ...known,
      message: declineMessage(declined),
    };
  }
  const meta = open ? parseMetadataBlock(open.body) : undefined;
  // The boxes a person ticked on the open proposal, read once: the rebuild below applies them.
  const ticked = open ? pendingTicks(open.body) : [];
  // Fast no-op: the open proposal was computed from exactly these inputs, on this base, its
  // branch is where it left it, and nobody ticked a box since. Nothing is fetched, nothing is written.
  // A proposal whose render failed is always rendered again: what failed may work now (a fixed
  // function, a container runtime, --allow-exec); when it fails the same way nothing is written.
  const gate =
    meta && reviewGate({ kind: 'built', conflicts: meta.conflicts, notReady: strings(meta.notReady), carried: strings(meta.carried) });
  if (
    open &&
    meta &&
    gate &&
    !meta.renderFailed &&
    // auto-merge on where the gate holds it back (a person turned it on, or a run could not turn it off)
    !autoMergeToTurnOff(open, gate) &&
    ticked.length === 0 &&
    open.fingerprint === fingerprint &&
    heads.get(target.head) === meta.headCommit &&
    heads.get(target.base) === meta.baseCommit
  ) {
    // the status follows the body that names its commit; one that did not land is said in the body
    const repaired =
      meta.statusMissing === true && (await ctx.forge.ensureStatus?.(open, gate.status, meta.headCommit).catch(() => false)) === true;
    return {
      action: 'unchanged',
      writes: repaired,
      ...(repaired ? { message: "the proposal's commit had no kdelta status: posted" } : {}),
      proposal: proposalRef(open),
      fingerprint,
      ...(change.upstream ? { upstream: { ...change.upstream, oldCommit: meta.upstream?.oldCommit } } : {}),
      conflictCount: meta.conflicts,
    };
  }
  // Nothing new upstream and nothing open: no checkout needed.
  if (!open && change.current) return { action: 'up-to-date', writes: false, fingerprint, ...known };
  // Nothing open, nothing declined of these inputs, no re-propose ticked: a change found up to date
  // at this base (and this proposal branch, or none) and these settings is up to date again.
  const memoKey = !open && !reproposed ? upToDateKey(ctx, change, heads) : undefined;
  if (memoKey && (await wasUpToDate(ctx.upToDate!, memoKey))) return { action: 'up-to-date', writes: false, fingerprint, ...known };

  await checkpoint(ctx.signal);
  const checkedOut = await ctx.checkout(target.repo, target.base, target.head, change.scratchName);
  // read once: the same commits whichever workspace asks
  let foreignOnce: Promise<BranchCommit[]> | undefined;
  const foreign = () => (foreignOnce ??= foreignCommits(ctx, checkedOut));
  // A human's commits on the branch, when its inputs moved: the update is built on top of them.
  const carry = await carryForward({
    open,
    fingerprint,
    directory: change.directory,
    ws: checkedOut,
    foreign,
  });
  if (carry.kind === 'left-alone' || carry.kind === 'outside') {
    const blocked =
      carry.kind === 'outside'
        ? {
            action: 'blocked' as const,
            writes: false,
            proposal: open ? proposalRef(open) : undefined,
            message: outsideMessage(carry.outside, target.head, change.directory),
          }
        : blockedBy(carry.foreign, target, open, carry.reason);
    return { ...(await leftAlone(ctx, blocked, carry.foreign, open, checkedOut.remoteHead)), fingerprint, ...known };
  }
  // Built from the base always: its conflicts are those of the downstream's own package, whatever
  // the branch already took from upstream.
  const made = await change.prepare(checkedOut);
  if ('done' in made) return { fingerprint, ...made.done };
  let prepared = await applyDecisions(checkedOut, change.directory, made, { ticked, decided: meta?.decided ?? [] });
  let ws = checkedOut;
  // A human's commits on the branch, when its inputs moved: applied on top of the new proposal.
  if (carry.kind === 'carry') {
    const onTip = await carryOnto(checkedOut, carry, change.directory);
    if ('reason' in onTip) {
      const all = await foreign();
      return {
        ...(await leftAlone(ctx, blockedBy(all, target, open, onTip.reason), all, open, checkedOut.remoteHead)),
        fingerprint,
        ...known,
      };
    }
    ws = onTip.ws;
    prepared = { ...prepared, clashes: onTip.clashes };
  }
  const carried = carry.kind === 'carry' ? carry.carried : undefined;
  await checkpoint(ctx.signal);
  const proposed = await proposeWorkspace({
    ctx,
    change,
    prepared: declined ? withDeclineNote(prepared, declined) : prepared,
    ws,
    open,
    foreign,
    carried,
  });
  // what was built at the base the memo's key names (the workspace's, read before the checkout)
  if (
    memoKey &&
    proposed.action === 'up-to-date' &&
    !prepared.renderFailure &&
    checkedOut.baseCommit === memoKey.baseCommit &&
    checkedOut.remoteHead === memoKey.headCommit
  )
    await rememberUpToDate(ctx.upToDate!, memoKey);
  const said = [proposed.message, decisionsMessage(prepared.decisions, ticked)].filter((m) => m !== undefined);
  return {
    ...proposed,
    ...(said.length > 0 ? { message: said.join('; ') } : {}),
    // the declined proposal a person asked for again: the new one may live elsewhere (a new pull request)
    ...(reproposed !== undefined && proposed.writes ? { reproposed } : {}),
    fingerprint,
    ...(prepared.upstream ? { upstream: prepared.upstream } : {}),
    // the clashes with carried commits are conflicts too: a reviewer has to look at them
    conflicts: [...prepared.conflicts, ...(prepared.clashes ?? [])],
    conflictCount: conflictCount(prepared),
    // a render failure is the state of a proposal: none when nothing is proposed (the proposal was merged, or closed)
    ...(prepared.renderFailure && proposed.action !== 'up-to-date' && proposed.action !== 'closed'
      ? { renderFailure: prepared.renderFailure }
      : {}),
    // a dry run says what each resource would become (a preview lists those that change)
    ...(ctx.dryRun ? { resources: prepared.resources } : {}),
  };
}

/**
 * The memo's key for a change with nothing open, or undefined when the memo cannot answer: none
 * kept (a dry run, a caller's `materialize`), a kind it does not answer for, or a base branch the
 * downstream does not have (the slow path says so).
 */
function upToDateKey(ctx: JobContext, change: Change, heads: ReadonlyMap<string, string>): UpToDateKey | undefined {
  const baseCommit = heads.get(change.target.base);
  if (!ctx.upToDate || !memoApplies(change) || baseCommit === undefined) return undefined;
  return { change, baseCommit, headCommit: heads.get(change.target.head) };
}

/** A list of strings from a body a person may have edited (anything else: none). */
function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/**
 * Whether the open proposal was just declined: its branch is gone and what it proposed did not
 * reach the base (the protocol's one rule: merged or squashed). The local forge has no other way
 * to close a proposal unmerged; on GitHub closing the pull request ends it.
 */
async function declinedNow(
  change: Change,
  open: Proposal,
  heads: ReadonlyMap<string, string>,
  mirrorOf: () => Promise<Mirror>,
): Promise<boolean> {
  const { head, base } = change.target;
  const baseCommit = heads.get(base);
  if (heads.has(head) || baseCommit === undefined) return false;
  // the branch is gone: merged, squashed or declined, which only the base's history tells
  const mirror = await mirrorOf();
  const reached = await reachedBase(baseHistoryIn(mirror.dir, baseCommit), {
    commit: parseMetadataBlock(open.body)?.headCommit,
    fingerprint: open.fingerprint,
    branchGone: true,
    directory: change.directory,
  });
  return !reached;
}

function declineMessage(declined: Proposal): string {
  return `${declined.url} was closed without merging; the same upstream commit and variant are not proposed again (a new upstream commit or a change of the variant proposes again; \`kdelta proposals\` says how to undo a decline)`;
}

/** A new proposal after a declined one says so, and what the declined one proposed. */
function withDeclineNote(prepared: Prepared, declined: Proposal): Prepared {
  return { ...prepared, summary: `${prepared.summary}\n\n${declineNote(declined)}` };
}

/**
 * The commits of the remote branch kdelta did not make: those not on base without the trailer or
 * by another author, and, when the branch has no commit of its own, its tip unless kdelta made it
 * (a human's branch that points into the base branch is still a human's).
 */
async function foreignCommits(ctx: JobContext, ws: Workspace): Promise<BranchCommit[]> {
  const trailer = new RegExp(`^${COMMIT_TRAILER}: `, 'm');
  return (await ws.branchCommits()).filter((c) => !(c.email === ctx.author.email && trailer.test(c.body)));
}
