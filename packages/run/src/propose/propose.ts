import { hideCredentials, lastCommitWithLine } from '@kdelta/git-source';
import { carryForward, carryOnto, outsideMessage } from './carry.js';
import type { Change, Prepared } from '../jobs/change.js';
import { checkpoint, type JobContext } from '../context.js';
import { STOP_LABEL, type Proposal } from '../forges/forge.js';
import { applyDecisions, decisionsMessage } from './decisions.js';
import { declineNote } from './decline-note.js';
import { type CarriedCommit, type FileChange, type ProposalBodies, pendingTicks, renderProposalBodies } from './proposal-body.js';
import { parseMetadataBlock, withAutoMergeOff } from './proposal-metadata.js';
import { blockedBy, leftAlone } from './left-alone.js';
import { costOf, reserve } from './reserve.js';
import { reviewGate } from './review-gate.js';
import { DEFERRED_MESSAGE, message, proposalRef, type JobAction, type JobOutcome, type VariantResult } from '../report/result.js';
import { isAncestorIn, type BranchCommit, type Mirror, type Workspace } from './workspace.js';
import { RunError } from '../errors.js';

/**
 * The one protocol every job's change goes through: stop label, fast no-op, checkout, prepare,
 * diff, foreign commits, commit, push or publish, upsert, status — each write reserved from the
 * run's budget before the first.
 */

/** The trailer on every commit kdelta makes: a branch with any other commit is a human's. */
export const COMMIT_TRAILER = 'Kdelta-Variant';
/** The trailer with the inputs' fingerprint: a squash merge keeps it in the base's history. */
const FINGERPRINT_TRAILER = 'Kdelta-Fingerprint';

type Proposed = Pick<VariantResult, 'action' | 'writes' | 'proposal' | 'message' | 'body' | 'changes' | 'sameContent'>;

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
  if (declined && !justDeclined && ctx.repropose?.has(declined.url)) declined = undefined;
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
    !(open.autoMerge === true && !gate.autoMerge) &&
    ticked.length === 0 &&
    open.fingerprint === fingerprint &&
    heads.get(target.head) === meta.headCommit &&
    heads.get(target.base) === meta.baseCommit
  ) {
    // the run that pushed this commit may have stopped before its status
    const repaired = (await ctx.forge.ensureStatus?.(open, gate.status, meta.headCommit).catch(() => false)) === true;
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
  const proposed = await proposeWorkspace(
    ctx,
    change,
    declined ? withDeclineNote(prepared, declined) : prepared,
    ws,
    open,
    foreign,
    carried,
  );
  const said = [proposed.message, decisionsMessage(prepared.decisions, ticked)].filter((m) => m !== undefined);
  return {
    ...proposed,
    ...(said.length > 0 ? { message: said.join('; ') } : {}),
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

/** A list of strings from a body a person may have edited (anything else: none). */
function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/**
 * Whether the open proposal was just declined: its branch is gone and what it proposed did not
 * reach the base, merged (its head commit is in the base) or squashed (a commit of the base
 * carries its fingerprint trailer, as squash merges keep the messages). The local forge has no
 * other way to close a proposal unmerged; on GitHub closing the pull request ends it.
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
  const meta = parseMetadataBlock(open.body);
  if (meta && (await isAncestorIn(mirror.dir, meta.headCommit, baseCommit))) return false;
  const squashed = await lastCommitWithLine({
    dir: mirror.dir,
    ref: base,
    path: change.directory,
    line: `${FINGERPRINT_TRAILER}: ${open.fingerprint}`,
  });
  return squashed === undefined;
}

function declineMessage(declined: Proposal): string {
  return `${declined.url} was closed without merging; the same upstream commit and variant are not proposed again (a new upstream commit or a change of the variant proposes again; \`kdelta proposals\` says how to undo a decline)`;
}

/** A new proposal after a declined one says so, and what the declined one proposed. */
function withDeclineNote(prepared: Prepared, declined: Proposal): Prepared {
  return { ...prepared, summary: `${prepared.summary}\n\n${declineNote(declined)}` };
}

/**
 * An open proposal whose body lost the metadata block at its end (cut, or edited): the conflicts
 * decided on it cannot be read, so it is left as it is, with the decisions its branch holds.
 */
function withoutMetadata(open: Proposal): Proposed {
  return {
    action: 'blocked',
    writes: false,
    proposal: proposalRef(open),
    message: `the body of the proposal for ${open.head} does not end with kdelta's metadata block (it was cut or edited), so the conflicts decided on it cannot be read: left as it is, with its decisions; put the block back as the body's last line (the proposal's edit history has it), or close the proposal`,
  };
}

/** A proposal a human labelled `kdelta:stop`: left alone and reported. */
export function stopped(open: Proposal | undefined, head: string): Proposed | undefined {
  if (!open?.labels?.includes(STOP_LABEL)) return undefined;
  return {
    action: 'blocked',
    writes: false,
    proposal: proposalRef(open),
    message: `the proposal for ${head} carries the label ${STOP_LABEL}: left alone; remove the label to let kdelta update it`,
  };
}

/** What a result says of the commits its branch carried forward. */
function carriedNote(carried: readonly CarriedCommit[]): string {
  return `carried forward ${carried.length} commit(s) kdelta did not make (${carried.map((c) => `${c.sha.slice(0, 12)} by ${c.name}`).join(', ')}): a new commit on top of them`;
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

/** A proposal's conflicts with upstream and its clashes with the commits it carries: each one for a reviewer. */
const conflictCount = (prepared: Prepared) => prepared.conflicts.length + (prepared.clashes?.length ?? 0);

/**
 * The proposal's texts, with every URL's credentials left out: they are pushed and published, and
 * a Repository's `spec.git.repo` may carry credentials.
 */
function texts(ctx: JobContext, change: Change, prepared: Prepared, ws: Workspace, carried: readonly CarriedCommit[] | undefined) {
  const { fingerprint, variant } = change;
  const detail = prepared.commitDetail ? `${prepared.commitDetail}\n\n` : '';
  const commitMessage = hideCredentials(
    `${prepared.title}\n\n${detail}${COMMIT_TRAILER}: ${variant}\n${FINGERPRINT_TRAILER}: ${fingerprint}\n`,
  );
  const body = (headCommit: string, changes: FileChange[]): ProposalBodies => {
    const bodies = renderProposalBodies({
      title: prepared.title,
      compareUrl: prepared.compareUrl,
      upstreamChanges: prepared.upstreamChanges,
      summary: prepared.summary,
      downstream: { repo: change.target.repo, branch: change.target.base, directory: change.directory },
      changes,
      resources: prepared.resources,
      conflicts: prepared.conflicts,
      clashes: prepared.clashes,
      renderFailure: prepared.renderFailure,
      notReady: prepared.notReady,
      decisions: prepared.decisions,
      carried,
      metadata: {
        version: ctx.version,
        variant,
        fingerprint,
        headCommit,
        baseCommit: ws.baseCommit,
        upstream: prepared.upstream,
        conflicts: conflictCount(prepared),
        kind: change.kind,
        ...(prepared.renderFailure ? { renderFailed: true } : {}),
        ...(prepared.decisions?.decided.length ? { decided: prepared.decisions.decided.map((d) => d.choice.id) } : {}),
        ...(prepared.notReady?.length ? { notReady: prepared.notReady.map((g) => g.type) } : {}),
        ...(carried?.length ? { carried: carried.map((c) => c.sha) } : {}),
      },
    });
    return { ...bodies, body: hideCredentials(bodies.body), full: hideCredentials(bodies.full) };
  };
  return { commitMessage, body };
}

/**
 * The package in `ws` differs from the base (or not): push the branch and open or update the
 * proposal, close one no longer needed, or stop at a branch a human has written on.
 */
async function proposeWorkspace(
  ctx: JobContext,
  change: Change,
  prepared: Prepared,
  ws: Workspace,
  given: Proposal | undefined,
  foreignOf: () => Promise<readonly BranchCommit[]>,
  carried?: readonly CarriedCommit[],
): Promise<Proposed> {
  const { target } = change;
  const { commitMessage, body: bodyOf } = texts(ctx, change, prepared, ws, carried);
  const conflicts = conflictCount(prepared);
  const gate = reviewGate({
    kind: 'built',
    conflicts,
    renderFailure: prepared.renderFailure,
    notReady: prepared.notReady?.map((g) => g.type),
    carried: carried?.map((c) => c.sha),
  });
  // Whatever the prefix and the names: a proposal's head is never the branch it proposes into.
  if (target.head === target.base) {
    throw new RunError(
      'head-is-base',
      `the proposal branch "${target.head}" is the base branch of ${target.downstream}: nothing is pushed to it (choose another branch prefix or variant name)`,
    );
  }
  const stop = stopped(given, target.head);
  if (stop) return stop;
  await checkpoint(ctx.signal);
  const token = ctx.forge.gitToken?.(target.repo);
  const remote = {
    remote: target.repo,
    branch: target.head,
    env: ctx.env,
    token,
    tokenName: token ? ctx.forge.gitTokenName?.(target.repo) : undefined,
  };
  let open = given;
  // the whole diff from where the branch leaves the base: nothing it would merge goes unlisted
  const changes = await ws.changedFiles('');
  // auto-merge on where the gate holds it back: turned off, and the body says so
  const turnOff = () => open?.autoMerge === true && !gate.autoMerge;
  const body: typeof bodyOf = (headCommit, files) => {
    const bodies = bodyOf(headCommit, files);
    if (!turnOff()) return bodies;
    return { ...bodies, body: withAutoMergeOff(bodies.body, gate.held!), full: withAutoMergeOff(bodies.full, gate.held!) };
  };
  let mergedOpen: Proposal | undefined;
  // merged: its head commit is in the base, or (squashed, the branch deleted) a commit of the base carries its fingerprint
  const reachedBase = async (p: Proposal) =>
    (ws.remoteHead !== undefined && (await ws.isAncestor(ws.remoteHead, ws.baseCommit))) ||
    (ws.remoteHead === undefined && ((await ws.baseHasLine?.(`${FINGERPRINT_TRAILER}: ${p.fingerprint}`, change.directory)) ?? false));
  if (open && changes.length > 0 && (await reachedBase(open))) {
    // The open proposal was merged and there is something new since: it is recorded as merged
    // and the new content is a new proposal (a merged pull request cannot be reopened).
    mergedOpen = open;
    open = undefined;
  }
  if (changes.length === 0) {
    if (!open) return { action: 'up-to-date', writes: false };
    const merged = await reachedBase(open);
    // closing deletes the branch: not one a human has written on
    const foreign = merged ? [] : await foreignOf();
    if (foreign.length > 0) return leftAlone(ctx, blockedBy(foreign, target, open), foreign, open, ws.remoteHead);
    if (ctx.dryRun) return { action: merged ? 'up-to-date' : 'closed', writes: true, proposal: proposalRef(open) };
    const release = reserve(ctx, costOf(ctx, { kind: 'close' }) + (merged ? 0 : costOf(ctx, { kind: 'delete-branch' })));
    if (!release) return { action: 'deferred', writes: false, proposal: proposalRef(open), message: DEFERRED_MESSAGE };
    try {
      const closed = await ctx.forge.close(open, merged ? 'merged' : 'closed');
      if (!merged) await ws.deleteBranch(remote);
      return {
        action: merged ? 'up-to-date' : 'closed',
        writes: true,
        proposal: proposalRef(closed),
        message: merged ? 'the proposal was merged' : (prepared.closeReason ?? 'the downstream already has this content'),
      };
    } finally {
      release();
    }
  }
  // carried forward: the human's commits stay under this one
  const foreign = carried ? [] : await foreignOf();
  if (foreign.length > 0) return leftAlone(ctx, blockedBy(foreign, target, open), foreign, open, ws.remoteHead);
  // The decisions of the open proposal live in its metadata block: a rebuild without it would drop them unsaid.
  if (open && !parseMetadataBlock(open.body)) return withoutMetadata(open);
  const { commit, sameAsRemote } = await ws.commit(commitMessage, ctx.author);
  // The branch already holds exactly this content on this base: keep it (no push, refs identical).
  let pushNeeded = !(sameAsRemote && ws.remoteHead);
  let headCommit = pushNeeded ? commit : ws.remoteHead!;
  if (!pushNeeded) {
    const bodies = body(headCommit, changes);
    const unchanged =
      open !== undefined &&
      open.body === bodies.body &&
      open.title === prepared.title &&
      open.fingerprint === change.fingerprint &&
      !turnOff();
    if (unchanged && open) return { action: 'unchanged', writes: false, proposal: proposalRef(open) };
  }
  let action: JobAction = open ? change.updated : change.opened;
  const openMeta = open ? parseMetadataBlock(open.body) : undefined;
  const renderChanged = open !== undefined && Boolean(openMeta?.renderFailed) !== Boolean(prepared.renderFailure);
  // A commit no proposal names yet may lack its status (pushed by a run that stopped before it).
  const newHead = open === undefined || openMeta?.headCommit !== headCommit;
  if (ctx.dryRun) {
    // what a preview needs to tell a change of content from a rewrite of text or lock
    const sameContent = open && !pushNeeded ? 'open' : prepared.lockOnly ? 'lock' : undefined;
    return {
      action,
      writes: true,
      proposal: open ? proposalRef(open) : undefined,
      body: body(headCommit, changes).full,
      changes,
      ...(sameContent ? { sameContent } : {}),
    };
  }
  // Every write this job may make is reserved before the first: it writes all of them or none.
  const cost =
    (mergedOpen ? costOf(ctx, { kind: 'close' }) : 0) +
    (pushNeeded ? costOf(ctx, { kind: 'push', files: changes.length }) : 0) +
    (pushNeeded || renderChanged || newHead ? costOf(ctx, { kind: 'status' }) : 0) +
    costOf(ctx, { kind: 'upsert', created: open === undefined });
  const release = reserve(ctx, cost);
  if (!release) {
    return { action: 'deferred', writes: false, proposal: open ? proposalRef(open) : undefined, message: DEFERRED_MESSAGE };
  }
  try {
    // the last moment to stop before this proposal's writes, which then go through whole
    await checkpoint(ctx.signal);
    if (mergedOpen) await ctx.forge.close(mergedOpen, 'merged');
    if (pushNeeded && ctx.forge.publishCommit) {
      // The forge makes the commit (verified on GitHub): the proposal names that commit.
      headCommit = await ctx.forge.publishCommit({
        target,
        dir: ws.dir,
        commit,
        // the commit's parent: the base, or the branch's tip when its commits are carried forward
        baseCommit: ws.parent ?? ws.baseCommit,
        expectedHead: ws.remoteHead,
        message: commitMessage,
        author: ctx.author,
      });
    } else if (pushNeeded) {
      const pushed = await ws.push(remote);
      if (pushed !== commit) {
        // Another run pushed this very proposal first: its commit is the proposal.
        headCommit = pushed;
        pushNeeded = false;
      }
    }
    const bodies = body(headCommit, changes);
    const {
      proposal,
      warnings: given = [],
      created,
      changed,
    } = await ctx.forge.upsert({
      ...target,
      title: prepared.title,
      body: bodies.body,
      fingerprint: change.fingerprint,
      conflicts,
      ...(prepared.renderFailure ? { renderFailed: true } : {}),
      review: { ready: gate.ready, autoMerge: gate.autoMerge },
      headCommit,
    });
    const warnings = [...(carried ? [carriedNote(carried)] : []), ...given];
    // A proposal another run opened just now, exactly as this one would write it, is that run's:
    // unchanged here, whichever of the two won the push (one run reports it proposed, not both).
    if (!created && !changed && !renderChanged && (open === undefined || !pushNeeded)) action = 'unchanged';
    else if (pushNeeded || renderChanged || created || (changed && newHead)) {
      // Porch's readiness, as a status on the pushed commit (on GitHub a commit status, context
      // "kdelta", on that commit: GitHub moves the pull request's head to it only later): a branch
      // protection that requires it holds back a proposal with conflicts, a failed render or an
      // unmet readiness gate. The same commit gets a new status when only the render's outcome changed.
      try {
        await ctx.forge.setStatus(proposal, gate.status, headCommit);
      } catch (error) {
        // the proposal stands: a status that did not land is repaired by the next run (ensureStatus)
        warnings.push(message(error));
      }
    }
    return {
      action,
      writes: pushNeeded || action !== 'unchanged',
      proposal: proposalRef(proposal),
      body: bodies.full,
      ...(warnings.length > 0 ? { message: warnings.join('; ') } : {}),
    };
  } finally {
    release();
  }
}
