import { lstat, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Conflict, parseYamlDocument, type ResourceReport } from '@kdelta/merge-core';
import { deleteRemoteBranch, hideCredentials, push, runGit, type Author, type RemoteRef, type SourceTrust } from '@kdelta/git-source';
import { PACKAGE_CONTEXT_FILE, PackageTree, packageContextConfigMap } from '@kdelta/kptfile-model';
import { renderPackage, resultLine, type RenderOutcome } from '@kdelta/fn-render';
import { applyPackageVariant, OWNER_ANNOTATION } from '@kdelta/variant-engine';
import type { Budget, BudgetReport } from './forge/budget.js';
import { STOP_LABEL, type Forge, type Proposal, type ProposalStatus, type ProposalTarget, type WriteOperation } from './forge/forge.js';
import { assertNoSymlinkIn, readPackageDir, splitBinary, writePackageDir } from './package-files.js';
import type { Shard } from './shard.js';
import { fingerprintOf, hashOf, resolveUpstream, type VariantPlan } from './plan.js';
import { CONTROL_ANNOTATION } from './ownership.js';
import {
  parseMetadataBlock,
  renderFailureLine,
  renderProposalBodies,
  type FileChange,
  type ProposalBodies,
  type ProposalMetadata,
  type RenderFailureReport,
} from './report.js';
import { RunError } from './errors.js';

// ---------------------------------------------------------------------------------------------
// The injected step: get or update the package (kpt's `pkg get` / `pkg update`).
// ---------------------------------------------------------------------------------------------

/** A symlink of a package: carried as a symlink (git's mode 120000), its target never followed. */
export interface SymlinkContent {
  readonly kind: 'symlink';
  readonly target: string;
}

/** An executable file (git's mode 100755, an `exec:` function's script): bytes and bit carried as they are. */
export interface ExecutableContent {
  readonly kind: 'executable';
  readonly bytes: Uint8Array;
}

/**
 * A file's content: text, bytes when it is not UTF-8 (kept byte for byte), an executable file or
 * a symlink. Only text is read by the variant's mutations and the render; the rest is carried.
 */
export type FileContent = string | Uint8Array | SymlinkContent | ExecutableContent;

/** What the mutations and the render never read: carried through a run untouched. */
export type CarriedContent = Exclude<FileContent, string>;

/** A package's files: path relative to the package directory (`/`-separated) → content. */
export type PackageFiles = ReadonlyMap<string, FileContent>;

export interface MaterializeInput {
  readonly variant: string;
  readonly upstream: {
    /** Repository URL or absolute path, as in the Repository's `spec.git.repo`. */
    readonly repo: string;
    /** Package directory in the upstream repository (no leading `/`; '' for the root). */
    readonly directory: string;
    /** The ref the variant names (tag, branch or commit): what the Kptfile's `upstream.git.ref` records. */
    readonly ref: string;
    /** The full commit `ref` resolved to: fetch exactly this one. */
    readonly commit: string;
  };
  readonly downstream: {
    /** The package's name (the Kptfile's `metadata.name`). */
    readonly package: string;
    /** The package as it is on the downstream's base branch; undefined the first time. */
    readonly local: PackageFiles | undefined;
  };
  /** Cache directory for upstream fetches (git-source's). */
  readonly cacheDir?: string | undefined;
  /** Directory a relative upstream repository is resolved against. */
  readonly cwd?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The repositories the user named (the control resources', the forge's): every repository the
   * package's content names is fetched under it. Absent: package-update's default.
   */
  readonly trust?: SourceTrust | undefined;
}

export interface MaterializeResult {
  /**
   * The whole package after get (first time) or update (3-way merge of the lock's commit, the
   * new upstream and `local`): every file, the Kptfile's `upstream` and `upstreamLock` set to
   * the input's ref and commit. The variant's mutations are applied after, by the run.
   */
  readonly files: PackageFiles;
  readonly conflicts: readonly Conflict[];
  /** What happened to each resource (empty for a first get). */
  readonly resources: readonly ResourceReport[];
  readonly lock: { readonly repo: string; readonly directory: string; readonly ref: string; readonly commit: string };
}

/** Get or update a package: throws on failure (the run reports it for that variant alone). */
export type Materialize = (input: MaterializeInput) => Promise<MaterializeResult>;

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

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
  readonly upstream?:
    | { readonly repo: string; readonly ref: string; readonly commit: string; readonly oldCommit?: string | undefined }
    | undefined;
  readonly fingerprint?: string | undefined;
  /** Why: for blocked, not-adopted, closed, deferred... */
  readonly message?: string | undefined;
  /** The proposal's whole body when this run wrote (or would write) it; the forge's copy may be shortened. */
  readonly body?: string | undefined;
  readonly error?: string | undefined;
  /** The render failed: the package was proposed unrendered, the proposal says why (not an error of the run). */
  readonly renderFailure?: RenderFailureReport | undefined;
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
}

// ---------------------------------------------------------------------------------------------
// What jobs share in one run
// ---------------------------------------------------------------------------------------------

/** A bare clone of a downstream repository, made once per run. */
export interface Mirror {
  readonly dir: string;
  /** Branch name → commit, as cloned. */
  readonly heads: ReadonlyMap<string, string>;
}

export interface JobContext {
  readonly version: string;
  readonly dryRun: boolean;
  readonly forge: Forge;
  readonly materialize: Materialize;
  /** Run the package's Kptfile pipeline after the mutations, as Porch renders after every change. */
  readonly render: boolean;
  /** Let `exec:` functions of the pipelines run (`--allow-exec`): each is any program on the runner. */
  readonly allowExec?: boolean | undefined;
  readonly author: Author;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The repositories the user named: see {@link MaterializeInput.trust}. */
  readonly trust?: SourceTrust | undefined;
  readonly cacheDir?: string | undefined;
  /** Proposal branches are `<branchPrefix><variant>` (default `kdelta/`). */
  readonly branchPrefix: string;
  /** Content-creating requests this run may still make (a forge that counts them). */
  readonly budget?: Budget | undefined;
  /** A fresh scratch directory for one job. */
  scratch(name: string): Promise<string>;
  upstreamRefs(url: string): Promise<readonly RemoteRef[]>;
  mirror(url: string): Promise<Mirror>;
  /** A repository's branches (name → commit) as the remote has them now, without a clone. */
  heads(url: string): Promise<ReadonlyMap<string, string>>;
  /** This run's control repository (`controlIdentity`): recorded on the packages it writes. */
  readonly control?: string | undefined;
  /** Aborted: the run is stopping (a signal); each job stops at its next {@link checkpoint}. */
  readonly signal?: AbortSignal | undefined;
}

/** The run was stopped (RunOptions.signal): what run() rejects with. */
export function interrupted(signal: AbortSignal): RunError {
  const reason = signal.reason instanceof Error ? signal.reason.message : typeof signal.reason === 'string' ? signal.reason : '';
  return new RunError('interrupted', `the run was interrupted${reason && !/aborted/i.test(reason) ? ` (${reason})` : ''}`);
}

/**
 * Between two steps of a job or a run: one turn of the event loop, so that a signal that arrived
 * during the synchronous work before (a merge, a render) is handled now and not after the whole
 * run, then stop when the run was aborted.
 */
export async function checkpoint(signal: AbortSignal | undefined): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (signal?.aborted) throw interrupted(signal);
}

/** The trailer on every commit kdelta makes: a branch with any other commit is a human's. */
export const COMMIT_TRAILER = 'Kdelta-Variant';
/** On the downstream Kptfile, next to the owner annotation: what to do when the variant is gone. */
export const DELETION_POLICY_ANNOTATION = 'kdelta.dev/deletion-policy';

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function downstreamLabel(plan: VariantPlan): string {
  return `${plan.downstream.repository.name}/${plan.downstream.package}`;
}

export async function git(dir: string, args: string[]): Promise<string> {
  return (await runGit(args, { cwd: dir })).stdout;
}

// ---------------------------------------------------------------------------------------------
// Kptfile annotations
// ---------------------------------------------------------------------------------------------

export function kptfileAnnotations(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  const v = parseYamlDocument(text).toJS() as { metadata?: { annotations?: Record<string, string> } } | null;
  return v?.metadata?.annotations ?? {};
}

export function lockCommit(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const v = parseYamlDocument(text).toJS() as { upstreamLock?: { git?: { commit?: string } } } | null;
  return v?.upstreamLock?.git?.commit;
}

/** Set (or with undefined, remove) annotations on a Kptfile, keeping its layout and comments. */
export function setKptfileAnnotations(text: string, annotations: Record<string, string | undefined>): string {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) throw new RunError('invalid-kptfile', `Kptfile: ${doc.errors[0]!.message.split('\n')[0]}`);
  for (const [k, v] of Object.entries(annotations)) {
    if (v === undefined) {
      if (doc.hasIn(['metadata', 'annotations', k])) doc.deleteIn(['metadata', 'annotations', k]);
    } else if (doc.getIn(['metadata', 'annotations', k]) !== v) {
      doc.setIn(['metadata', 'annotations', k], v);
    }
  }
  const anns = doc.getIn(['metadata', 'annotations']) as { items?: unknown[] } | undefined;
  if (anns && Array.isArray(anns.items) && anns.items.length === 0) doc.deleteIn(['metadata', 'annotations']);
  return doc.toString();
}

// ---------------------------------------------------------------------------------------------
// Proposing: shared by variants and removals
// ---------------------------------------------------------------------------------------------

export interface Workspace {
  readonly dir: string;
  readonly baseCommit: string;
  /** The branch on the remote, if it exists. */
  readonly remoteHead: string | undefined;
}

export async function checkout(ctx: JobContext, url: string, base: string, head: string, name: string): Promise<Workspace> {
  const mirror = await ctx.mirror(url);
  const baseCommit = mirror.heads.get(base);
  if (!baseCommit) throw new RunError('branch-missing', `branch "${base}" does not exist in ${url}`);
  const dir = await ctx.scratch(name);
  await runGit(['clone', '--quiet', '--shared', '--no-tags', '--branch', base, '--', mirror.dir, dir]);
  return { dir, baseCommit, remoteHead: mirror.heads.get(head) };
}

async function changedFiles(ws: Workspace, directory: string): Promise<FileChange[]> {
  // The scratch clone holds only this job's edits: stage everything (a pathspec naming a directory
  // that was deleted whole would not match anything).
  await git(ws.dir, ['add', '--all']);
  const out = await git(ws.dir, ['diff', '--cached', '--name-status', '--no-renames', 'HEAD', '--', directory || '.']);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [s, path] = line.split('\t') as [string, string];
      return { status: s === 'A' ? 'added' : s === 'D' ? 'deleted' : 'modified', path };
    });
}

/** Whether a commit is one kdelta made: its author and the trailer of its message. */
function madeByKdelta(ctx: JobContext, email: string | undefined, body: string | undefined): boolean {
  return email === ctx.author.email && new RegExp(`^${COMMIT_TRAILER}: `, 'm').test(body ?? '');
}

/**
 * The commits of the remote branch kdelta did not make: those not on base without the trailer or
 * by another author, and, when the branch has no commit of its own, its tip unless kdelta made it
 * (a human's branch that points into the base branch is still a human's).
 */
async function foreignCommits(ctx: JobContext, ws: Workspace): Promise<string[]> {
  if (!ws.remoteHead) return [];
  const format = '--format=%H%x1f%an%x1f%ae%x1f%B%x1e';
  let log = await git(ws.dir, ['log', format, ws.remoteHead, `^${ws.baseCommit}`, '--']);
  if (log.trim() === '') log = await git(ws.dir, ['log', format, '-1', ws.remoteHead, '--']);
  const out: string[] = [];
  for (const entry of log.split('\x1e')) {
    const [sha, name, email, body] = entry.trim().split('\x1f');
    if (sha && !madeByKdelta(ctx, email, body)) out.push(`${sha.slice(0, 12)} by ${name} <${email}>`);
  }
  return out;
}

async function isAncestor(dir: string, commit: string, of: string): Promise<boolean> {
  try {
    await runGit(['merge-base', '--is-ancestor', commit, of], { cwd: dir });
    return true;
  } catch {
    return false;
  }
}

/** A branch with commits kdelta did not make: left alone, and said so. */
function blockedBy(foreign: readonly string[], target: ProposalTarget, open: Proposal | undefined): Proposed {
  return {
    action: 'blocked',
    writes: false,
    proposal: open ? proposalRef(open) : undefined,
    message: `branch ${target.head} has ${foreign.length} commit(s) kdelta did not make (${foreign.join(', ')}): left alone; merge or delete it to let kdelta update it`,
  };
}

export interface ProposeInput {
  readonly target: ProposalTarget;
  /** Conflicts in the proposed content. */
  readonly conflicts: number;
  readonly ws: Workspace;
  readonly open: Proposal | undefined;
  readonly directory: string;
  readonly title: string;
  readonly commitMessage: string;
  readonly fingerprint: string;
  readonly body: (headCommit: string, changes: FileChange[]) => ProposalBodies;
  /** The render failed: the readiness status says so, and the forge never auto-merges it. */
  readonly renderFailure?: RenderFailureReport | undefined;
}

export type Proposed = Pick<VariantResult, 'action' | 'writes' | 'proposal' | 'message' | 'body'>;

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

export const DEFERRED_MESSAGE = "the run's API write budget is spent: the next run continues";

const costOf = (ctx: JobContext, op: WriteOperation) => ctx.forge.writeCost?.(op) ?? 0;

/** Reserve a job's writes from the run's budget; undefined: the budget cannot cover them (defer the job). */
function reserve(ctx: JobContext, cost: number): (() => void) | undefined {
  if (!ctx.budget) return () => {};
  return ctx.budget.reserve(cost);
}

/** The status a proposal's head commit gets: conflicts and a failed render are for a reviewer to look at. */
export function readiness(conflicts: number, renderFailure?: RenderFailureReport): ProposalStatus {
  if (renderFailure) {
    const also = conflicts > 0 ? `; ${conflicts} conflict(s)` : '';
    return { state: 'failure', description: `${renderFailureLine(renderFailure)}${also}: see the proposal` };
  }
  return conflicts > 0
    ? { state: 'failure', description: `${conflicts} conflict(s) to review: see the proposal's conflict report` }
    : { state: 'success', description: 'no conflicts' };
}

const MAX_RESULT_LINES = 10;
const MAX_LINE = 300;

function shortText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * What a proposal says of a failed render: the failing function (the last one that ran, when it
 * failed), its Kptfile field, its message and a few of its results, each cut short.
 */
export function renderFailureOf(outcome: Extract<RenderOutcome, { ok: false }>, directory: string): RenderFailureReport {
  const { error } = outcome;
  const last = outcome.results[outcome.results.length - 1];
  const failing = last && last.exitCode !== 0 ? last : undefined;
  const lines = (failing?.results ?? []).map(resultLine);
  if (lines.length === 0 && failing?.stderr) lines.push(...failing.stderr.trim().split('\n').slice(-3));
  const kptfile = [directory, error.package, 'Kptfile'].filter(Boolean).join('/');
  return {
    ...(error.function !== undefined ? { function: error.function } : {}),
    ...(error.field !== undefined ? { field: error.field } : {}),
    kptfile,
    message: shortText(error.message, 1000),
    results: [
      ...lines.slice(0, MAX_RESULT_LINES).map((l) => shortText(l, MAX_LINE)),
      ...(lines.length > MAX_RESULT_LINES ? [`…and ${lines.length - MAX_RESULT_LINES} more`] : []),
    ],
  };
}

export function proposalRef(p: Proposal): VariantResult['proposal'] {
  return { id: p.id, url: p.url, state: p.state, head: p.head, base: p.base };
}

/**
 * The commit message and the bodies with every URL's credentials left out: they are pushed and
 * published, and a Repository's `spec.git.repo` may carry credentials.
 */
function withoutCredentialsIn(input: ProposeInput): ProposeInput {
  return {
    ...input,
    commitMessage: hideCredentials(input.commitMessage),
    body: (headCommit, changes) => {
      const bodies = input.body(headCommit, changes);
      return { ...bodies, body: hideCredentials(bodies.body), full: hideCredentials(bodies.full) };
    },
  };
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

/**
 * The package in `ws` differs from the base (or not): push the branch and open or update the
 * proposal, close one no longer needed, or stop at a branch a human has written on.
 */
export async function propose(
  ctx: JobContext,
  given: ProposeInput,
  newAction: JobAction,
  updatedAction: JobAction = 'updated',
): Promise<Proposed> {
  const input = withoutCredentialsIn(given);
  const { ws, target } = input;
  // Whatever the prefix and the names: a proposal's head is never the branch it proposes into.
  if (target.head === target.base) {
    throw new RunError(
      'head-is-base',
      `the proposal branch "${target.head}" is the base branch of ${target.downstream}: nothing is pushed to it (choose another branch prefix or variant name)`,
    );
  }
  const stop = stopped(input.open, target.head);
  if (stop) return stop;
  await checkpoint(ctx.signal);
  const token = ctx.forge.gitToken?.(target.repo);
  let open = input.open;
  const changes = await changedFiles(ws, input.directory);
  let mergedOpen: Proposal | undefined;
  if (open && changes.length > 0 && ws.remoteHead !== undefined && (await isAncestor(ws.dir, ws.remoteHead, ws.baseCommit))) {
    // The open proposal was merged and there is something new since: it is recorded as merged
    // and the new content is a new proposal (a merged pull request cannot be reopened).
    mergedOpen = open;
    open = undefined;
  }
  if (changes.length === 0) {
    if (!open) return { action: 'up-to-date', writes: false };
    const merged = ws.remoteHead !== undefined && (await isAncestor(ws.dir, ws.remoteHead, ws.baseCommit));
    // closing deletes the branch: not one a human has written on
    const foreign = merged ? [] : await foreignCommits(ctx, ws);
    if (foreign.length > 0) return blockedBy(foreign, target, open);
    if (ctx.dryRun) return { action: merged ? 'up-to-date' : 'closed', writes: true, proposal: proposalRef(open) };
    const release = reserve(ctx, costOf(ctx, { kind: 'close' }) + (merged ? 0 : costOf(ctx, { kind: 'delete-branch' })));
    if (!release) return { action: 'deferred', writes: false, proposal: proposalRef(open), message: DEFERRED_MESSAGE };
    try {
      const closed = await ctx.forge.close(open, merged ? 'merged' : 'closed');
      if (!merged && ws.remoteHead) {
        await deleteRemoteBranch({
          dir: ws.dir,
          remote: target.repo,
          branch: target.head,
          expectedHead: ws.remoteHead,
          env: ctx.env,
          ...(token ? { token } : {}),
        });
      }
      return {
        action: merged ? 'up-to-date' : 'closed',
        writes: true,
        proposal: proposalRef(closed),
        message: merged ? 'the proposal was merged' : 'the downstream already has this content',
      };
    } finally {
      release();
    }
  }
  const foreign = await foreignCommits(ctx, ws);
  if (foreign.length > 0) return blockedBy(foreign, target, open);
  // Committed as staged by changedFiles, on the scratch clone's base: the branch exists only on the
  // remote (pushed from HEAD). Each git process costs a fork of this one: as few as will do.
  const { name, email } = ctx.author;
  await runGit(['commit', '--quiet', '--no-verify', '-m', input.commitMessage], {
    cwd: ws.dir,
    env: { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email },
  });
  // our commit and tree, then, when the branch exists, its tree and its parents (in this order)
  const remote = ws.remoteHead ? [`${ws.remoteHead}^{tree}`, `${ws.remoteHead}^@`] : [];
  const [commit, ourTree, theirTree, ...theirParents] = (await git(ws.dir, ['rev-parse', 'HEAD', 'HEAD^{tree}', ...remote]))
    .trim()
    .split('\n');
  if (!commit) throw new RunError('internal', 'internal: changes were staged but nothing was committed');
  let headCommit = commit;
  let pushNeeded = true;
  // The branch already holds exactly this content on this base: keep it (no push, refs identical).
  if (ws.remoteHead && ourTree === theirTree && theirParents.length === 1 && theirParents[0] === ws.baseCommit) {
    headCommit = ws.remoteHead;
    pushNeeded = false;
  }
  if (!pushNeeded) {
    const bodies = input.body(headCommit, changes);
    const unchanged =
      open !== undefined && open.body === bodies.body && open.title === input.title && open.fingerprint === input.fingerprint;
    if (unchanged && open) return { action: 'unchanged', writes: false, proposal: proposalRef(open) };
  }
  const action: JobAction = open ? updatedAction : newAction;
  const renderChanged = open !== undefined && Boolean(parseMetadataBlock(open.body)?.renderFailed) !== Boolean(input.renderFailure);
  if (ctx.dryRun) {
    return { action, writes: true, proposal: open ? proposalRef(open) : undefined, body: input.body(headCommit, changes).full };
  }
  // Every write this job may make is reserved before the first: it writes all of them or none.
  const cost =
    (mergedOpen ? costOf(ctx, { kind: 'close' }) : 0) +
    (pushNeeded ? costOf(ctx, { kind: 'push', files: changes.length }) : 0) +
    (pushNeeded || renderChanged ? costOf(ctx, { kind: 'status' }) : 0) +
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
        baseCommit: ws.baseCommit,
        expectedHead: ws.remoteHead,
        message: input.commitMessage,
        author: ctx.author,
      });
    } else if (pushNeeded) {
      await push({
        dir: ws.dir,
        remote: target.repo,
        branch: target.head,
        expectedHead: ws.remoteHead ?? null,
        localRef: 'HEAD',
        env: ctx.env,
        ...(token ? { token } : {}),
      });
    }
    const bodies = input.body(headCommit, changes);
    const { proposal, warnings } = await ctx.forge.upsert({
      ...target,
      title: input.title,
      body: bodies.body,
      fingerprint: input.fingerprint,
      conflicts: input.conflicts,
      ...(input.renderFailure ? { renderFailed: true } : {}),
    });
    // Porch's readiness, as a status on the new head commit (on GitHub a commit status, context
    // "kdelta"): a branch protection that requires it holds back a proposal with conflicts or a
    // failed render. The same commit gets a new status when only the render's outcome changed.
    if (pushNeeded || renderChanged) await ctx.forge.setStatus(proposal, readiness(input.conflicts, input.renderFailure));
    return {
      action,
      writes: true,
      proposal: proposalRef(proposal),
      body: bodies.full,
      ...(warnings && warnings.length > 0 ? { message: warnings.join('; ') } : {}),
    };
  } finally {
    release();
  }
}

/**
 * Porch renders after the clone or update and the mutations: package context and injected values
 * reach the resources only through the pipeline. A package without one comes back as it is; a
 * failing one is reported, and the package is proposed as it stood before the render.
 */
export async function renderFiles(
  ctx: JobContext,
  files: ReadonlyMap<string, string>,
  directory: string,
  cwd: string,
): Promise<{ ok: true; files: Map<string, string> } | { ok: false; failure: RenderFailureReport }> {
  const tree = PackageTree.fromFiles(files);
  tree.source = directory;
  const rendered = await renderPackage(tree, { env: ctx.env, cwd, allowExec: ctx.allowExec === true });
  return rendered.ok ? { ok: true, files: rendered.tree.allFiles() } : { ok: false, failure: renderFailureOf(rendered, directory) };
}

// ---------------------------------------------------------------------------------------------
// One variant
// ---------------------------------------------------------------------------------------------

/** Run one variant to its result. Never throws: a failure is this variant's result. */
export async function runVariantJob(plan: VariantPlan, ctx: JobContext): Promise<VariantResult> {
  const base = { variant: plan.name, downstream: downstreamLabel(plan), dryRun: ctx.dryRun, conflicts: [], conflictCount: 0 };
  try {
    return { ...base, ...(await variantJob(plan, ctx)) };
  } catch (error) {
    return { ...base, action: 'failed', writes: false, error: message(error) };
  }
}

type JobOutcome = Omit<VariantResult, 'variant' | 'downstream' | 'dryRun' | 'conflicts' | 'conflictCount'> &
  Partial<Pick<VariantResult, 'conflicts' | 'conflictCount'>>;

/** Where a variant's proposal goes: branch `<prefix><variant>` of its downstream, into the Repository's branch. */
export function variantTarget(plan: VariantPlan, branchPrefix: string): ProposalTarget {
  return {
    downstream: plan.downstream.repository.name,
    repo: plan.downstream.url,
    head: `${branchPrefix}${plan.name}`,
    base: plan.downstream.branch,
  };
}

async function variantJob(plan: VariantPlan, ctx: JobContext): Promise<JobOutcome> {
  const resolved = resolveUpstream(plan, await ctx.upstreamRefs(plan.upstream.url));
  if (!resolved.ok) return { action: 'failed', writes: false, error: resolved.error };
  const up = resolved.value;
  const fingerprint = fingerprintOf(plan, up.commit, ctx.version);
  const target = variantTarget(plan, ctx.branchPrefix);
  const upstreamInfo = { repo: plan.upstream.url, ref: up.ref, commit: up.commit };
  // The forge first: a repository it cannot serve fails here, before anything is cloned.
  const open = await ctx.forge.find(target);
  // the branches as they are now (one ls-remote per downstream and run): the fast no-op clones nothing
  const heads = await ctx.heads(plan.downstream.url);
  const stop = stopped(open, target.head);
  if (stop) return { ...stop, fingerprint };
  const meta = open ? parseMetadataBlock(open.body) : undefined;
  // Fast no-op: the open proposal was computed from exactly these inputs, on this base, and its
  // branch is where it left it. Nothing is fetched, nothing is written.
  // A proposal whose render failed is always rendered again: what failed may work now (a fixed
  // function, a container runtime, --allow-exec); when it fails the same way nothing is written.
  if (
    open &&
    meta &&
    !meta.renderFailed &&
    open.fingerprint === fingerprint &&
    heads.get(target.head) === meta.headCommit &&
    heads.get(target.base) === meta.baseCommit
  ) {
    return {
      action: 'unchanged',
      writes: false,
      proposal: proposalRef(open),
      fingerprint,
      upstream: { ...upstreamInfo, oldCommit: meta.upstream?.oldCommit },
      conflictCount: meta.conflicts,
    };
  }

  await checkpoint(ctx.signal);
  const ws = await checkout(ctx, plan.downstream.url, target.base, target.head, plan.name);
  const pkgDir = join(ws.dir, plan.downstream.directory);
  await assertNoSymlinkIn(ws.dir, plan.downstream.directory, plan.downstream.url);
  const local = await readPackageDir(pkgDir);
  const kptfileContent = local?.get('Kptfile');
  const kptfile = typeof kptfileContent === 'string' ? kptfileContent : undefined;
  if (local && kptfile === undefined) {
    return {
      action: 'failed',
      writes: false,
      error: `${plan.downstream.directory} exists in ${plan.downstream.url} and is not a kpt package (no Kptfile): left alone`,
    };
  }
  const owner = kptfileAnnotations(kptfile)[OWNER_ANNOTATION];
  const spec = plan.variant.spec ?? {};
  if (local && owner !== plan.name && spec.adoptionPolicy !== 'adoptExisting') {
    return {
      action: 'not-adopted',
      writes: false,
      fingerprint,
      message: `package ${plan.downstream.directory} exists ${owner ? `and belongs to variant "${owner}"` : 'and belongs to no variant'}; adoptionPolicy adoptNone leaves it alone`,
    };
  }
  const oldCommit = lockCommit(kptfile);
  let files: Map<string, string>;
  let binary: Map<string, CarriedContent>;
  let conflicts: readonly Conflict[] = [];
  let resources: readonly ResourceReport[] = [];
  if (!local || oldCommit !== up.commit) {
    const m = await ctx.materialize({
      variant: plan.name,
      upstream: { repo: plan.upstream.url, directory: plan.upstream.directory, ref: up.ref, commit: up.commit },
      downstream: { package: plan.downstream.package, local },
      cacheDir: ctx.cacheDir,
      env: ctx.env,
      trust: ctx.trust,
    });
    await checkpoint(ctx.signal);
    ({ text: files, binary } = splitBinary(m.files));
    conflicts = m.conflicts;
    resources = m.resources;
    // Porch, creating a package in a deployment repository, gives it its package context when it has none
    const deployment = (plan.downstream.repository.object.spec as { deployment?: unknown } | undefined)?.deployment === true;
    if (!local && deployment && !files.has(PACKAGE_CONTEXT_FILE))
      files.set(PACKAGE_CONTEXT_FILE, packageContextConfigMap(plan.downstream.package));
  } else {
    // Same upstream commit as the lock: the update would change nothing, only the mutations may.
    ({ text: files, binary } = splitBinary(local));
  }
  const applied = applyPackageVariant(PackageTree.fromFiles(files).package(), plan.variant, {
    objects: plan.objects,
    packageName: plan.downstream.package,
  });
  if (!applied.ok) {
    return {
      action: 'failed',
      writes: false,
      fingerprint,
      error: `${applied.file ? `${applied.file}: ` : ''}${applied.errors.join('; ')}`,
    };
  }
  for (const [path, text] of applied.changed) files.set(path, text);
  const kpt = files.get('Kptfile');
  if (kpt === undefined)
    throw new RunError('not-a-package', `the package from ${plan.upstream.url} ${plan.upstream.directory} has no Kptfile`);
  // The control repository is recorded with a new package or a new upstream commit: a package
  // that only lacks the record gets no proposal of its own for it.
  const recordControl =
    ctx.control !== undefined && (!local || oldCommit !== up.commit || CONTROL_ANNOTATION in kptfileAnnotations(kptfile));
  files.set(
    'Kptfile',
    setKptfileAnnotations(kpt, {
      [OWNER_ANNOTATION]: plan.name,
      [DELETION_POLICY_ANNOTATION]: spec.deletionPolicy ?? 'delete',
      ...(recordControl ? { [CONTROL_ANNOTATION]: ctx.control } : {}),
    }),
  );
  let renderFailure: RenderFailureReport | undefined;
  await checkpoint(ctx.signal);
  if (ctx.render) {
    const rendered = await renderFiles(ctx, files, plan.downstream.directory, ws.dir);
    if (rendered.ok) files = rendered.files;
    else renderFailure = rendered.failure;
  }
  await checkpoint(ctx.signal);
  await writePackageDir(pkgDir, new Map<string, FileContent>([...files, ...binary]));

  const upstream = { ...upstreamInfo, oldCommit: local ? oldCommit : undefined };
  const title = local
    ? `kdelta: update ${plan.downstream.package} (${plan.name}) to ${up.ref}`
    : `kdelta: add ${plan.downstream.package} (${plan.name}) from ${up.ref}`;
  const proposed = await propose(
    ctx,
    {
      target,
      ws,
      open,
      directory: plan.downstream.directory,
      title,
      fingerprint,
      conflicts: conflicts.length,
      renderFailure,
      commitMessage: `${title}\n\nUpstream: ${plan.upstream.url} ${plan.upstream.directory || '/'} at ${up.ref} (${up.commit})\n\n${COMMIT_TRAILER}: ${plan.name}\nKdelta-Fingerprint: ${fingerprint}\n`,
      body: (headCommit, changes) =>
        renderProposalBodies({
          title,
          compareUrl: oldCommit && local ? ctx.forge.compareUrl?.(plan.upstream.url, oldCommit, up.commit) : undefined,
          summary: local
            ? `Updates package \`${plan.downstream.directory}\` from \`${oldCommit?.slice(0, 12) ?? '(no lock)'}\` to \`${up.ref}\` (\`${up.commit.slice(0, 12)}\`) and re-applies variant \`${plan.name}\`.`
            : `Adds package \`${plan.downstream.directory}\` from \`${up.ref}\` (\`${up.commit.slice(0, 12)}\`) with variant \`${plan.name}\` applied.`,
          downstream: { repo: plan.downstream.url, branch: plan.downstream.branch, directory: plan.downstream.directory },
          changes,
          resources,
          conflicts,
          renderFailure,
          notReady: applied.unmetGates,
          metadata: {
            version: ctx.version,
            variant: plan.name,
            fingerprint,
            headCommit,
            baseCommit: ws.baseCommit,
            upstream,
            conflicts: conflicts.length,
            kind: 'variant',
            ...(renderFailure ? { renderFailed: true } : {}),
          } satisfies ProposalMetadata,
        }),
    },
    'proposed',
  );
  return { ...proposed, fingerprint, upstream, conflicts, conflictCount: conflicts.length, ...(renderFailure ? { renderFailure } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Variants that are gone
// ---------------------------------------------------------------------------------------------

/** A package on a downstream's base branch owned by a variant no longer in the control resources. */
export interface Removal {
  readonly variant: string;
  readonly repository: string;
  readonly url: string;
  readonly branch: string;
  /** The package directory in the downstream repository. */
  readonly directory: string;
  readonly policy: 'delete' | 'orphan';
}

/**
 * Every owned package of a mirrored downstream whose owner is not among `variants`, leaving out
 * the packages another control repository than `control` recorded as its own.
 */
export async function findRemovals(
  mirror: Mirror,
  downstream: { repository: string; url: string; branch: string; directory: string },
  variants: ReadonlySet<string>,
  control?: string,
): Promise<Removal[]> {
  if (!mirror.heads.has(downstream.branch)) return [];
  const scope = downstream.directory ? [downstream.directory] : [];
  const paths = (await git(mirror.dir, ['ls-tree', '-r', '--name-only', downstream.branch, '--', ...scope]))
    .split('\n')
    .filter((p) => p === 'Kptfile' || p.endsWith('/Kptfile'));
  const out: Removal[] = [];
  for (const path of paths) {
    const text = await git(mirror.dir, ['show', `${downstream.branch}:${path}`]);
    let annotations: Record<string, string>;
    try {
      annotations = kptfileAnnotations(text);
    } catch {
      continue; // not ours to judge: an unreadable Kptfile is no variant's package
    }
    const owner = annotations[OWNER_ANNOTATION];
    if (!owner || variants.has(owner)) continue;
    const writer = annotations[CONTROL_ANNOTATION];
    if (writer !== undefined && writer !== control) continue; // another control repository's variant
    out.push({
      variant: owner,
      repository: downstream.repository,
      url: downstream.url,
      branch: downstream.branch,
      directory: path === 'Kptfile' ? '' : path.slice(0, -'/Kptfile'.length),
      policy: annotations[DELETION_POLICY_ANNOTATION] === 'orphan' ? 'orphan' : 'delete',
    });
  }
  return out;
}

export function removalTarget(removal: Removal, branchPrefix: string): ProposalTarget {
  return { downstream: removal.repository, repo: removal.url, head: `${branchPrefix}${removal.variant}`, base: removal.branch };
}

/** Propose removing a gone variant's package (delete) or its ownership (orphan). Never throws. */
export async function runRemovalJob(removal: Removal, ctx: JobContext): Promise<VariantResult> {
  const base = {
    variant: removal.variant,
    downstream: `${removal.repository}/${removal.directory.split('/').pop() ?? ''}`,
    dryRun: ctx.dryRun,
    conflicts: [],
    conflictCount: 0,
  };
  try {
    const target = removalTarget(removal, ctx.branchPrefix);
    const fingerprint = hashOf({
      removal: removal.policy,
      directory: removal.directory,
      variant: removal.variant,
      version: ctx.version,
    }).slice(0, 32);
    const open = await ctx.forge.find(target);
    const ws = await checkout(ctx, removal.url, removal.branch, target.head, `remove-${removal.variant}`);
    const pkgDir = join(ws.dir, removal.directory);
    await assertNoSymlinkIn(ws.dir, removal.directory, removal.url);
    if (removal.policy === 'delete') {
      await rm(pkgDir, { recursive: true, force: true });
    } else {
      // a Kptfile that is a symlink is never read or written through
      if ((await lstat(join(pkgDir, 'Kptfile'))).isSymbolicLink())
        throw new RunError('symlinked-package', `${removal.directory}/Kptfile in ${removal.url} is a symlink: left alone`);
      const kptfile = await readFile(join(pkgDir, 'Kptfile'), 'utf8');
      await writeFile(
        join(pkgDir, 'Kptfile'),
        setKptfileAnnotations(kptfile, { [OWNER_ANNOTATION]: undefined, [DELETION_POLICY_ANNOTATION]: undefined }),
      );
    }
    const what =
      removal.policy === 'delete'
        ? `remove ${removal.directory || 'the root package'}`
        : `stop managing ${removal.directory || 'the root package'}`;
    const title = `kdelta: ${what} (variant ${removal.variant} is gone)`;
    const summary =
      removal.policy === 'delete'
        ? `PackageVariant \`${removal.variant}\` is no longer in the control resources and its deletionPolicy is \`delete\`: this removes package \`${removal.directory}\`.`
        : `PackageVariant \`${removal.variant}\` is no longer in the control resources and its deletionPolicy is \`orphan\`: this keeps package \`${removal.directory}\` and removes only the ownership annotation.`;
    const proposed = await propose(
      ctx,
      {
        target,
        ws,
        open,
        directory: removal.directory,
        title,
        fingerprint,
        conflicts: 0,
        commitMessage: `${title}\n\n${COMMIT_TRAILER}: ${removal.variant}\nKdelta-Fingerprint: ${fingerprint}\n`,
        body: (headCommit, changes) =>
          renderProposalBodies({
            title,
            summary,
            downstream: { repo: removal.url, branch: removal.branch, directory: removal.directory },
            changes,
            resources: [],
            conflicts: [],
            metadata: {
              version: ctx.version,
              variant: removal.variant,
              fingerprint,
              headCommit,
              baseCommit: ws.baseCommit,
              conflicts: 0,
              kind: removal.policy === 'delete' ? 'removal' : 'orphan',
            },
          }),
      },
      removal.policy === 'delete' ? 'removal-proposed' : 'orphan-proposed',
      removal.policy === 'delete' ? 'removal-proposed' : 'orphan-proposed',
    );
    return { ...base, ...proposed, fingerprint };
  } catch (error) {
    return { ...base, action: 'failed', writes: false, error: message(error) };
  }
}
