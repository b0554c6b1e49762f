import type { Conflict } from '@kdelta/merge-core';
import { updateTree } from '@kdelta/package-update';
import type { FileContent, PackageFiles } from '../jobs/file-content.js';
import type { Proposal } from '../forges/forge.js';
import { RunError } from '../errors.js';
import { withProvenanceOf } from '../jobs/materialize.js';
import { packageFilesOf, packageTreeOf } from '../jobs/package-files.js';
import type { CarriedCommit } from './proposal-body.js';
import { parseMetadataBlock } from './proposal-metadata.js';
import type { BranchCommit, BranchTouches, Workspace } from './workspace.js';

/**
 * A human's commits on a proposal branch are carried forward: when the proposal's inputs move (a
 * new upstream commit, a changed variant: its fingerprint), the new proposal is built from the
 * base branch as always, so its conflicts are those of the downstream's own package, whatever the
 * branch already took from upstream. The human's commits are then applied on top as a 3-way step
 * of their own: its origin is the content kdelta last pushed, one side the new proposal, the other
 * the branch's tip; where the tip and the new proposal changed the same field, that is a clash,
 * reported apart from the upstream conflicts. The result is one more commit on top of the tip, so
 * the branch only moves forward and nobody's commit is rewritten.
 *
 * Only commits that change nothing but the package are carried: a commit that reaches outside it
 * (a workflow, a merge of an unrelated history) would ride into the base under kdelta's proposal.
 */

export type CarryDecision =
  /** Not a carry: the branch is built from the base as always (and a human's branch is left alone there). */
  | { readonly kind: 'none' }
  /** Build from the base, then carry `carried` forward from the tip; `pushed` is kdelta's last commit on the branch. */
  | { readonly kind: 'carry'; readonly pushed: string; readonly carried: readonly CarriedCommit[] }
  /** A human's branch (its commits `foreign`) that cannot be carried: left alone, for this reason. */
  | { readonly kind: 'left-alone'; readonly reason: string; readonly foreign: readonly BranchCommit[] }
  /** A branch whose commits change files outside the package: never carried, nothing pushed. */
  | { readonly kind: 'outside'; readonly outside: OutsidePackage; readonly foreign: readonly BranchCommit[] };

/** What a branch changes outside its package: the commits that do (and their paths), and the branch as a whole. */
export interface OutsidePackage {
  readonly commits: readonly {
    readonly sha: string;
    readonly name: string;
    readonly email: string;
    /** It starts a history unrelated to the base's. */
    readonly unrelated: boolean;
    readonly paths: readonly string[];
  }[];
  /** The paths outside the package the branch as a whole changes. */
  readonly net: readonly string[];
}

export interface CarryInput {
  /** The open proposal of the branch. */
  readonly open: Proposal | undefined;
  /** The change's fingerprint now. */
  readonly fingerprint: string;
  /** The package directory in the downstream repository. */
  readonly directory: string;
  /** The workspace, checked out at the base and not yet written. */
  readonly ws: Workspace;
  /** The branch's commits kdelta did not make. */
  readonly foreign: () => Promise<readonly BranchCommit[]>;
}

/**
 * Whether a branch holds commits kdelta did not make (`foreign`): such a branch is a human's, a
 * carry or not, and nothing a person did not review on it should land by itself.
 */
export function holdsForeignCommits(decision: CarryDecision): boolean {
  switch (decision.kind) {
    case 'none':
      return false;
    case 'carry':
      return decision.carried.length > 0;
    case 'left-alone':
    case 'outside':
      return decision.foreign.length > 0;
    default:
      return decision satisfies never;
  }
}

/** Whether to carry the branch's foreign commits forward, and from which commit of kdelta's. */
export async function carryForward(input: CarryInput): Promise<CarryDecision> {
  const { open, ws } = input;
  const none = { kind: 'none' } as const;
  // nothing moved (the same fingerprint): a human's branch is left exactly as it is
  if (!open || open.fingerprint === input.fingerprint || !ws.remoteHead || !ws.onBranchTip) return none;
  const meta = parseMetadataBlock(open.body);
  // a removal, or a proposal that does not say what it was built from: nothing to carry onto
  if (!meta?.upstream?.commit) return none;
  const foreign = await input.foreign();
  if (foreign.length === 0) return none;
  // merged: what is new goes to a new proposal, built from the base
  if (await ws.isAncestor(ws.remoteHead, ws.baseCommit)) return none;
  if (!ws.branchTouches || !ws.readPackageAt) return { kind: 'left-alone', reason: 'what its commits change cannot be read here', foreign };
  const outside = outsidePackage(await ws.branchTouches(), input.directory);
  if (outside) return { kind: 'outside', outside, foreign };
  // The 3-way step's origin is what kdelta last pushed: the commit the proposal names, when it is
  // on the branch and is not one of the commits kdelta did not make.
  const pushed = meta.headCommit;
  if (foreign.some((c) => c.sha === pushed) || !(await ws.isAncestor(pushed, ws.remoteHead)))
    return {
      kind: 'left-alone',
      reason: `the commit its proposal names as kdelta's (${pushed.slice(0, 12)}) is not kdelta's on the branch`,
      foreign,
    };
  // oldest first, as they were made
  return { kind: 'carry', pushed, carried: [...foreign].reverse().map(carriedCommit) };
}

/** Whether `path` (repository-relative) lies in the package directory `directory` ('' is the whole repository). */
function inPackage(path: string, directory: string): boolean {
  return directory === '' || path === directory || path.startsWith(`${directory}/`);
}

/**
 * What the branch changes outside the package `directory`, or undefined when it changes nothing
 * there. Every commit of the branch counts, kdelta's too (a commit can claim to be kdelta's), and
 * so does the branch as a whole (a merge can undo the base's change by keeping its own side); a
 * commit with no parent brings a history unrelated to the base's, wherever its files are.
 */
export function outsidePackage(touches: BranchTouches, directory: string): OutsidePackage | undefined {
  const commits = touches.commits
    .map((c) => ({ sha: c.sha, name: c.name, email: c.email, unrelated: c.root, paths: c.paths.filter((p) => !inPackage(p, directory)) }))
    .filter((c) => c.unrelated || c.paths.length > 0);
  const net = touches.net.filter((p) => !inPackage(p, directory));
  return commits.length > 0 || net.length > 0 ? { commits, net } : undefined;
}

/** How many paths a message names per commit. */
const PATHS_NAMED = 5;

/** The message of a branch refused for what it changes outside the package. */
export function outsideMessage(outside: OutsidePackage, head: string, directory: string): string {
  const paths = (ps: readonly string[]) =>
    ps.length <= PATHS_NAMED ? ps.join(', ') : `${ps.slice(0, PATHS_NAMED).join(', ')} and ${ps.length - PATHS_NAMED} more`;
  const named = outside.commits.map((c) => {
    const what = [c.unrelated ? 'a history unrelated to the base' : '', c.paths.length > 0 ? paths(c.paths) : ''].filter(Boolean);
    return `${c.sha.slice(0, 12)} by ${c.name} <${c.email}> (${what.join(': ')})`;
  });
  const whole = outside.net.length > 0 ? `; as a whole it changes ${paths(outside.net)}` : '';
  const where = directory === '' ? 'the repository' : `the package directory ${directory}`;
  return `branch ${head} holds commit(s) that change files outside ${where}${named.length > 0 ? `: ${named.join(', ')}` : ''}${whole}; kdelta carries only commits inside the package, so the variant is blocked and nothing is pushed: remove those commits from the branch (or delete it) to let kdelta update it`;
}

/** The package after the carried commits are applied to the new proposal, and the fields where they clash with it. */
export interface Carried {
  readonly files: Map<string, FileContent>;
  /** origin: what kdelta last pushed; upstream: the new proposal (kept); local: the branch's tip. */
  readonly clashes: readonly Conflict[];
}

/**
 * The carried commits applied to the new proposal: a 3-way merge (kpt's resource-merge) whose
 * origin is what kdelta last pushed, whose upstream is the new proposal and whose local side is
 * the branch's tip. Where both changed a field, the new proposal's value is kept and the clash is
 * reported: a reviewer sees what a commit on the branch set and what replaced it.
 */
export function applyCarried(input: {
  readonly pushed: PackageFiles | undefined;
  readonly proposal: PackageFiles;
  readonly tip: PackageFiles | undefined;
  readonly source: string;
}): Carried {
  const tree = (files: PackageFiles | undefined, side: string) => packageTreeOf(files ?? new Map(), `${input.source} (${side})`);
  const local = tree(input.tip, 'the branch');
  const out = updateTree('resource-merge', {
    local: local.package(),
    updated: tree(input.proposal, 'this update').package(),
    origin: tree(input.pushed, "kdelta's last commit").package(),
    relPackagePath: '/',
    isRoot: true,
  });
  const files = packageFilesOf(local);
  // Where the package comes from is the new proposal's (the merge of a Kptfile leaves its
  // upstream and lock to the update, as kpt's does): a commit on the branch does not hold it back.
  const [kptfile, fresh] = [files.get('Kptfile'), input.proposal.get('Kptfile')];
  if (typeof kptfile === 'string' && typeof fresh === 'string')
    files.set('Kptfile', withProvenanceOf(kptfile, fresh, `${input.source}/Kptfile`));
  return { files, clashes: out.conflicts.map(({ package: _, ...c }) => ({ ...c, message: clashMessage(c) })) };
}

const shown = (v: unknown) => (v === undefined ? '(absent)' : typeof v === 'string' ? v : JSON.stringify(v));

/** A clash said in the words of a carry: the branch's commit, this update. */
function clashMessage(c: Conflict): string {
  const { origin, upstream, local } = c.values;
  const kept = c.winner === 'upstream' ? "this update's value is kept" : "the branch's value is kept";
  return `a commit on the branch changed ${c.path} ${shown(origin)}→${shown(local)} and this update changes it to ${shown(upstream)}; ${kept}`;
}

/**
 * The carry, done: the new proposal (prepared in `ws` on the base) applied on the branch's tip
 * with the carried commits. Returns the workspace on the tip, holding the result, and the
 * clashes; or why the branch cannot be carried (left alone).
 */
export async function carryOnto(
  ws: Workspace,
  decision: Extract<CarryDecision, { kind: 'carry' }>,
  directory: string,
): Promise<{ readonly ws: Workspace; readonly clashes: readonly Conflict[] } | { readonly reason: string }> {
  if (!ws.onBranchTip || !ws.readPackageAt)
    throw new RunError('internal', 'internal: a carry needs a workspace that can move to the branch');
  const proposal = (await ws.readPackage(directory)) ?? new Map<string, FileContent>();
  const pushed = await ws.readPackageAt(decision.pushed, directory);
  const tip = await ws.onBranchTip();
  const onTip = await tip.readPackage(directory);
  // a package the branch removed or unmade is not merged into: a person decides what it becomes
  if (typeof onTip?.get('Kptfile') !== 'string')
    return { reason: `its ${directory ? `${directory}/` : ''}Kptfile is gone or is not a file` };
  const carried = applyCarried({ pushed, proposal, tip: onTip, source: directory || '/' });
  await tip.writePackage(directory, carried.files);
  return { ws: tip, clashes: carried.clashes };
}

function carriedCommit(c: BranchCommit): CarriedCommit {
  return { sha: c.sha, name: c.name, subject: c.body.split('\n', 1)[0]!.trim() };
}
