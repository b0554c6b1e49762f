import { PROPOSE_AGAIN_LABEL, type ClosedFacts, type ProposalState } from '../forges/forge.js';

/**
 * The protocol's decisions over what a forge reports: whether a proposal reached its base, and
 * how a closed one ended (merged, closed by kdelta, declined by a person). A forge reports facts
 * (its state, its head, its body, its labels) and carries out writes; it decides none of these,
 * so every forge ends a proposal the same way. Readiness and auto-merge are review-gate.ts's.
 */

/** The trailer on every commit kdelta makes: a branch with any other commit is a human's. */
export const COMMIT_TRAILER = 'Kdelta-Variant';

/** The trailer with the inputs' fingerprint on every commit kdelta makes: a squash merge keeps it in the base's history. */
export const FINGERPRINT_TRAILER = 'Kdelta-Fingerprint';

/** The base branch's history, as far as "reached the base" needs it (a scratch clone, a mirror). */
export interface BaseHistory {
  /** Whether `commit` is in the base branch. */
  contains(commit: string): Promise<boolean>;
  /** Whether a commit of the base branch touching `directory` ('' for any) has the message line `line`. */
  hasLine(line: string, directory: string): Promise<boolean>;
}

/** What a proposal proposed, and whether its branch is still there. */
export interface ProposedFacts {
  /** The commit it proposed: its branch's tip, or, the branch gone, the one its metadata names. */
  readonly commit: string | undefined;
  readonly fingerprint: string;
  /** Its branch no longer exists (a forge deletes it on merge, a person on decline). */
  readonly branchGone: boolean;
  /** The package's directory ('' when not known: any commit of the base). */
  readonly directory: string;
}

/**
 * Whether what a proposal proposed reached its base: merged (its commit is in the base), or,
 * once its branch is gone, squashed (a commit of the base carries its fingerprint trailer, as
 * squash merges keep the messages). A squash is looked for only once the branch is gone: a
 * branch still there is still the proposal, and the look costs a walk of the base's history.
 */
export async function reachedBase(history: BaseHistory, proposed: ProposedFacts): Promise<boolean> {
  if (proposed.commit !== undefined && (await history.contains(proposed.commit))) return true;
  if (!proposed.branchGone || proposed.fingerprint === '') return false;
  return history.hasLine(`${FINGERPRINT_TRAILER}: ${proposed.fingerprint}`, proposed.directory);
}

/**
 * A closed proposal's state: `merged` when merged (by the forge, or recorded so by kdelta),
 * `closed` when kdelta closed it, `declined` when a person closed it unmerged (unless it is
 * labelled to propose again); a body that is not kdelta's tells nothing: `closed`.
 */
export function closedState(facts: ClosedFacts): Exclude<ProposalState, 'open'> {
  if (facts.merged) return 'merged';
  const by = facts.closedBy;
  if (by === undefined) return 'closed';
  switch (by.by) {
    case 'kdelta':
      return by.state;
    case 'person':
      return facts.labels.includes(PROPOSE_AGAIN_LABEL) ? 'closed' : 'declined';
    default:
      return by satisfies never;
  }
}
