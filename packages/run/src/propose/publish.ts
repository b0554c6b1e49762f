import { hideCredentials } from '@kdelta/git-source';
import type { Change, Prepared } from '../jobs/change.js';
import { checkpoint, type JobContext } from '../context.js';
import { STOP_LABEL, type Proposal, type ProposalInput } from '../forges/forge.js';
import type { CarriedCommit, FileChange, ProposalBodies } from './proposal-body.js';
import { renderProposalBodies } from './proposal-body.js';
import { parseMetadataBlock, withAutoMergeOff } from './proposal-metadata.js';
import { blockedBy, leftAlone } from './left-alone.js';
import { COMMIT_TRAILER, FINGERPRINT_TRAILER, reachedBase } from './protocol.js';
import { costOf, reserve } from './reserve.js';
import { autoMergeToTurnOff, draftOf, reviewGate, type ReviewGate } from './review-gate.js';
import { DEFERRED_MESSAGE, message, proposalRef, type JobAction, type VariantResult } from '../report/result.js';
import { baseHistoryOf, type BranchCommit, type RemoteBranch, type Workspace } from './workspace.js';
import { RunError } from '../errors.js';

/**
 * The protocol's last steps, once the package in a workspace is built: close a proposal no longer
 * needed (or record it merged), or commit, push or publish, open or update the proposal and post
 * its status — each job's writes reserved from the run's budget before the first.
 */

export type Proposed = Pick<VariantResult, 'action' | 'writes' | 'proposal' | 'message' | 'body' | 'changes' | 'sameContent'>;

/** A built package to propose: everything the steps below read. */
export interface ProposeInput {
  readonly ctx: JobContext;
  readonly change: Change;
  readonly prepared: Prepared;
  readonly ws: Workspace;
  /** The open proposal for the branch, if any. */
  readonly open: Proposal | undefined;
  /** The branch's commits kdelta did not make (read once, on demand). */
  readonly foreign: () => Promise<readonly BranchCommit[]>;
  /** The commits of others the new commit is built on (carried forward). */
  readonly carried?: readonly CarriedCommit[] | undefined;
}

/** What every step shares: the input, where the branch is pushed, the review gate and the bodies. */
interface Step extends ProposeInput {
  readonly remote: RemoteBranch;
  readonly gate: ReviewGate;
  readonly commitMessage: string;
  /**
   * The proposal's bodies for a head commit (with the auto-merge-off line when `open` needs it);
   * `statusMissing`: the commit's status did not land.
   */
  body(open: Proposal | undefined, headCommit: string, changes: FileChange[], statusMissing?: boolean): ProposalBodies;
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

/** What a result says of the commits its branch carried forward. */
function carriedNote(carried: readonly CarriedCommit[]): string {
  return `carried forward ${carried.length} commit(s) kdelta did not make (${carried.map((c) => `${c.sha.slice(0, 12)} by ${c.name}`).join(', ')}): a new commit on top of them`;
}

/** A proposal's conflicts with upstream and its clashes with the commits it carries: each one for a reviewer. */
export const conflictCount = (prepared: Prepared) => prepared.conflicts.length + (prepared.clashes?.length ?? 0);

/**
 * The proposal's texts, with every URL's credentials left out: they are pushed and published, and
 * a Repository's `spec.git.repo` may carry credentials.
 */
function texts(input: ProposeInput, gate: ReviewGate): Pick<Step, 'commitMessage' | 'body'> {
  const { ctx, change, prepared, ws, carried } = input;
  const { fingerprint, variant } = change;
  const detail = prepared.commitDetail ? `${prepared.commitDetail}\n\n` : '';
  const commitMessage = hideCredentials(
    `${prepared.title}\n\n${detail}${COMMIT_TRAILER}: ${variant}\n${FINGERPRINT_TRAILER}: ${fingerprint}\n`,
  );
  const body = (open: Proposal | undefined, headCommit: string, changes: FileChange[], statusMissing = false): ProposalBodies => {
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
        ...(statusMissing ? { statusMissing: true } : {}),
        ...(prepared.group ? { group: prepared.group } : {}),
      },
    });
    const clean = { ...bodies, body: hideCredentials(bodies.body), full: hideCredentials(bodies.full) };
    if (!autoMergeToTurnOff(open, gate)) return clean;
    return { ...clean, body: withAutoMergeOff(clean.body, gate.held!), full: withAutoMergeOff(clean.full, gate.held!) };
  };
  return { commitMessage, body };
}

/** The shared state of the steps: where the branch goes, the review gate, the texts. */
function stepOf(input: ProposeInput): Step {
  const { ctx, change, prepared, carried } = input;
  const { target } = change;
  const gate = reviewGate({
    kind: 'built',
    conflicts: conflictCount(prepared),
    renderFailure: prepared.renderFailure,
    notReady: prepared.notReady?.map((g) => g.type),
    carried: carried?.map((c) => c.sha),
  });
  const token = ctx.forge.gitToken?.(target.repo);
  const remote: RemoteBranch = {
    remote: target.repo,
    branch: target.head,
    env: ctx.env,
    token,
    tokenName: token ? ctx.forge.gitTokenName?.(target.repo) : undefined,
  };
  return { ...input, remote, gate, ...texts(input, gate) };
}

/** The protocol's one "reached the base" for the open proposal: merged, or (the branch deleted) squashed. */
function mergedInBase(step: Step, open: Proposal): Promise<boolean> {
  return reachedBase(baseHistoryOf(step.ws), {
    commit: step.ws.remoteHead,
    fingerprint: open.fingerprint,
    branchGone: step.ws.remoteHead === undefined,
    directory: step.change.directory,
  });
}

/**
 * The package in `ws` differs from the base (or not): push the branch and open or update the
 * proposal, close one no longer needed, or stop at a branch a human has written on.
 */
export async function proposeWorkspace(input: ProposeInput): Promise<Proposed> {
  const { target } = input.change;
  // Whatever the prefix and the names: a proposal's head is never the branch it proposes into.
  if (target.head === target.base) {
    throw new RunError(
      'head-is-base',
      `the proposal branch "${target.head}" is the base branch of ${target.downstream}: nothing is pushed to it (choose another branch prefix or variant name)`,
    );
  }
  const stop = stopped(input.open, target.head);
  if (stop) return stop;
  await checkpoint(input.ctx.signal);
  const step = stepOf(input);
  // the whole diff from where the branch leaves the base: nothing it would merge goes unlisted
  const changes = await step.ws.changedFiles('');
  if (changes.length === 0) return step.open ? closeNoLongerNeeded(step, step.open) : { action: 'up-to-date', writes: false };
  // The open proposal was merged and there is something new since: it is recorded as merged
  // and the new content is a new proposal (a merged pull request cannot be reopened).
  if (step.open && (await mergedInBase(step, step.open))) return commitAndPropose({ ...step, open: undefined }, changes, step.open);
  return commitAndPropose(step, changes, undefined);
}

/** Nothing left to propose: the open proposal is recorded merged, or closed and its branch deleted. */
async function closeNoLongerNeeded(step: Step, open: Proposal): Promise<Proposed> {
  const { ctx, ws, change, prepared } = step;
  const merged = await mergedInBase(step, open);
  // closing deletes the branch: not one a human has written on
  const foreign = merged ? [] : await step.foreign();
  if (foreign.length > 0) return leftAlone(ctx, blockedBy(foreign, change.target, open), foreign, open, ws.remoteHead);
  if (ctx.dryRun) return { action: merged ? 'up-to-date' : 'closed', writes: true, proposal: proposalRef(open) };
  const release = reserve(ctx, costOf(ctx, { kind: 'close' }) + (merged ? 0 : costOf(ctx, { kind: 'delete-branch' })));
  if (!release) return { action: 'deferred', writes: false, proposal: proposalRef(open), message: DEFERRED_MESSAGE };
  try {
    const closed = await ctx.forge.close(open, merged ? 'merged' : 'closed');
    if (!merged) await ws.deleteBranch(step.remote);
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

/** What the commit step found: the commit, whether it must be pushed, and what the proposal then names. */
interface Commit {
  readonly commit: string;
  readonly pushNeeded: boolean;
  readonly headCommit: string;
}

/**
 * Something to propose: commit it (unless a human's commits are on the branch, or the open
 * proposal lost its metadata), then write it all or nothing. `mergedOpen`: the open proposal,
 * merged, to record so first.
 */
async function commitAndPropose(step: Step, changes: FileChange[], mergedOpen: Proposal | undefined): Promise<Proposed> {
  const { ctx, change, ws, open } = step;
  // carried forward: the human's commits stay under this one
  const foreign = step.carried ? [] : await step.foreign();
  if (foreign.length > 0) return leftAlone(ctx, blockedBy(foreign, change.target, open), foreign, open, ws.remoteHead);
  // The decisions of the open proposal live in its metadata block: a rebuild without it would drop them unsaid.
  if (open && !parseMetadataBlock(open.body)) return withoutMetadata(open);
  const { commit, sameAsRemote } = await ws.commit(step.commitMessage, ctx.author);
  // The branch already holds exactly this content on this base: keep it (no push, refs identical).
  const pushNeeded = !(sameAsRemote && ws.remoteHead);
  const made: Commit = { commit, pushNeeded, headCommit: pushNeeded ? commit : ws.remoteHead! };
  if (!pushNeeded && open && unchanged(step, open, made.headCommit, changes)) {
    return { action: 'unchanged', writes: false, proposal: proposalRef(open) };
  }
  if (ctx.dryRun) {
    const action = open ? change.updated : change.opened;
    // what a preview needs to tell a change of content from a rewrite of text or lock
    const sameContent = open && !pushNeeded ? 'open' : step.prepared.lockOnly ? 'lock' : undefined;
    return {
      action,
      writes: true,
      proposal: open ? proposalRef(open) : undefined,
      body: step.body(open, made.headCommit, changes).full,
      changes,
      ...(sameContent ? { sameContent } : {}),
    };
  }
  return writeAll(step, changes, made, mergedOpen);
}

/** The open proposal already says exactly this, on a branch that holds it: nothing to write. */
function unchanged(step: Step, open: Proposal, headCommit: string, changes: FileChange[]): boolean {
  return (
    open.body === step.body(open, headCommit, changes).body &&
    open.title === step.prepared.title &&
    open.fingerprint === step.change.fingerprint &&
    !autoMergeToTurnOff(open, step.gate)
  );
}

/**
 * Every write of the proposal, reserved from the budget before the first so that it writes all
 * of them or none: the merged one recorded, the commit pushed or published, the proposal opened
 * or updated, its status posted.
 */
async function writeAll(step: Step, changes: FileChange[], made: Commit, mergedOpen: Proposal | undefined): Promise<Proposed> {
  const { ctx, change, prepared, open } = step;
  const openMeta = open ? parseMetadataBlock(open.body) : undefined;
  const renderChanged = open !== undefined && Boolean(openMeta?.renderFailed) !== Boolean(prepared.renderFailure);
  // A commit no proposal names yet may lack its status (pushed by a run that stopped before it),
  // and so does one whose body says its status did not land.
  const newHead = open === undefined || openMeta?.headCommit !== made.headCommit || openMeta?.statusMissing === true;
  const cost =
    (mergedOpen ? costOf(ctx, { kind: 'close' }) : 0) +
    (made.pushNeeded ? costOf(ctx, { kind: 'push', files: changes.length }) : 0) +
    (made.pushNeeded || renderChanged || newHead ? costOf(ctx, { kind: 'status' }) : 0) +
    costOf(ctx, { kind: 'upsert', created: open === undefined, autoMergeAsked: change.autoMerge });
  const release = reserve(ctx, cost);
  if (!release) {
    return { action: 'deferred', writes: false, proposal: open ? proposalRef(open) : undefined, message: DEFERRED_MESSAGE };
  }
  try {
    // the last moment to stop before this proposal's writes, which then go through whole
    await checkpoint(ctx.signal);
    if (mergedOpen) await ctx.forge.close(mergedOpen, 'merged');
    const { headCommit, pushNeeded } = made.pushNeeded ? await pushOrPublish(step, made.commit) : made;
    const bodies = step.body(open, headCommit, changes);
    const input = {
      ...change.target,
      title: prepared.title,
      body: bodies.body,
      fingerprint: change.fingerprint,
      conflicts: conflictCount(prepared),
      ...(prepared.renderFailure ? { renderFailed: true } : {}),
      review: {
        ready: step.gate.ready,
        draft: draftOf(ctx.forge.draftPolicy, step.gate.ready, open === undefined),
        autoMerge: step.gate.autoMerge,
        ...(change.autoMerge !== undefined ? { autoMergeAsked: change.autoMerge } : {}),
      },
      headCommit,
    };
    const { proposal, warnings: given = [], created, changed } = await ctx.forge.upsert(input);
    const warnings = [...(step.carried ? [carriedNote(step.carried)] : []), ...given];
    let action: JobAction = open ? change.updated : change.opened;
    // A proposal another run opened just now, exactly as this one would write it, is that run's:
    // unchanged here, whichever of the two won the push (one run reports it proposed, not both).
    if (!created && !changed && !renderChanged && (open === undefined || !pushNeeded)) action = 'unchanged';
    else if (pushNeeded || renderChanged || created || (changed && newHead)) {
      const failed = await postStatus(step, proposal, headCommit);
      if (failed) warnings.push(failed, await sayStatusMissing(step, { ...input, body: step.body(open, headCommit, changes, true).body }));
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

/** The commit on the branch: made by the forge (verified on GitHub) or pushed; another run's identical push is the proposal. */
async function pushOrPublish(step: Step, commit: string): Promise<Omit<Commit, 'commit'>> {
  const { ctx, ws, change } = step;
  if (ctx.forge.publishCommit) {
    const headCommit = await ctx.forge.publishCommit({
      target: change.target,
      dir: ws.dir,
      commit,
      // the commit's parent: the base, or the branch's tip when its commits are carried forward
      baseCommit: ws.parent ?? ws.baseCommit,
      expectedHead: ws.remoteHead,
      message: step.commitMessage,
      author: ctx.author,
    });
    return { headCommit, pushNeeded: true };
  }
  const pushed = await ws.push(step.remote);
  // Another run pushed this very proposal first: its commit is the proposal.
  return pushed === commit ? { headCommit: commit, pushNeeded: true } : { headCommit: pushed, pushNeeded: false };
}

/**
 * The body says its commit's status did not land: only then does a run with nothing new read the
 * commit's statuses (and post the missing one), so such a run makes one read per repository.
 */
async function sayStatusMissing(step: Step, input: ProposalInput): Promise<string> {
  try {
    await step.ctx.forge.upsert(input);
    return 'the next run posts it';
  } catch (error) {
    return message(error);
  }
}

/**
 * Porch's readiness, as a status on the pushed commit (on GitHub a commit status, context
 * "kdelta", on that commit: GitHub moves the pull request's head to it only later): a branch
 * protection that requires it holds back a proposal with conflicts, a failed render or an unmet
 * readiness gate. Returns why it did not land, if it did not: the proposal stands, and the next
 * run repairs it (ensureStatus).
 */
async function postStatus(step: Step, proposal: Proposal, headCommit: string): Promise<string | undefined> {
  try {
    await step.ctx.forge.setStatus(proposal, step.gate.status, headCommit);
    return undefined;
  } catch (error) {
    return message(error);
  }
}
