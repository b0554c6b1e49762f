import { parseYamlDocument } from '@kdelta/merge-core';
import type { Proposal } from './forge/forge.js';
import { lockCommit } from './kptfile-annotations.js';
import { parseMetadataBlock, type CarriedCommit } from './proposal-body.js';
import type { BranchCommit, Workspace } from './workspace.js';

/**
 * A human's commits on a proposal branch are carried forward: when the proposal's inputs move (a
 * new upstream commit, a changed variant: its fingerprint), the update is built on the branch's
 * tip instead of the base. The merge's local side is the package as the branch holds it, the
 * human's edits included; its origin is the upstream commit the branch was last built from, as
 * the proposal's metadata records it; the result is one more commit on top of the tip, so the
 * branch only moves forward and nobody's commit is rewritten.
 */

export type CarryDecision =
  /** Not a carry: the branch is built from the base as always (and a human's branch is left alone there). */
  | { readonly kind: 'none' }
  /** Build on the tip (`ws`), carrying `carried` forward. */
  | { readonly kind: 'carry'; readonly ws: Workspace; readonly carried: readonly CarriedCommit[] }
  /** A human's branch (its commits `foreign`) that cannot be carried: left alone, for this reason. */
  | { readonly kind: 'left-alone'; readonly reason: string; readonly foreign: readonly BranchCommit[] };

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

/** Whether to carry the branch's foreign commits forward, and the workspace to build on. */
export async function carryForward(input: CarryInput): Promise<CarryDecision> {
  const { open, ws } = input;
  const none = { kind: 'none' } as const;
  // nothing moved (the same fingerprint): a human's branch is left exactly as it is
  if (!open || open.fingerprint === input.fingerprint || !ws.remoteHead || !ws.onBranchTip) return none;
  const built = parseMetadataBlock(open.body)?.upstream?.commit;
  // a removal, or a proposal that does not say what it was built from: no origin to merge from
  if (!built) return none;
  const foreign = await input.foreign();
  if (foreign.length === 0) return none;
  // merged: what is new goes to a new proposal, built from the base
  if (await ws.isAncestor(ws.remoteHead, ws.baseCommit)) return none;
  const tip = await ws.onBranchTip();
  const kptfile = await tip.readFile(input.directory, 'Kptfile');
  const path = `${input.directory ? `${input.directory}/` : ''}Kptfile`;
  if (typeof kptfile !== 'string') return { kind: 'left-alone', reason: `its ${path} is gone or is not a file`, foreign };
  const lock = safeLockCommit(kptfile);
  if (lock === undefined) return { kind: 'left-alone', reason: `its ${path} has no readable upstreamLock to merge from`, foreign };
  // The merge's origin is the Kptfile's lock: the commit the branch was built from, whatever an
  // edit on the branch made of it.
  if (lock !== built) await tip.writeFile(input.directory, 'Kptfile', withLockCommit(kptfile, built));
  // oldest first, as they were made
  return { kind: 'carry', ws: tip, carried: [...foreign].reverse().map(carriedCommit) };
}

function safeLockCommit(kptfile: string): string | undefined {
  try {
    return lockCommit(kptfile);
  } catch {
    return undefined;
  }
}

function withLockCommit(kptfile: string, commit: string): string {
  const doc = parseYamlDocument(kptfile);
  doc.setIn(['upstreamLock', 'git', 'commit'], commit);
  return doc.toString();
}

function carriedCommit(c: BranchCommit): CarriedCommit {
  return { sha: c.sha, name: c.name, subject: c.body.split('\n', 1)[0]!.trim() };
}
