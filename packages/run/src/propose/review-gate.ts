import type { DraftPolicy, Proposal, ProposalStatus, ReviewDecision } from '../forges/forge.js';
import { renderFailureLine, type RenderFailureReport } from '../jobs/render.js';

/**
 * The review gate: from what a proposal holds, its status, whether it is ready for review (a
 * draft when not) and whether it may merge without a person. Decided here once, for every forge
 * and every kind of job; the forges only carry it out. Nothing merges that nobody reviewed: a
 * proposal with conflicts, a failed render, an unmet readiness gate or commits kdelta did not make
 * is never auto-merged.
 */

export type ReviewFacts =
  /** A proposal kdelta built (its commit is the branch's tip). */
  | {
      readonly kind: 'built';
      readonly conflicts: number;
      readonly renderFailure?: RenderFailureReport | undefined;
      /** The condition types of the package's readiness gates that are not met. */
      readonly notReady?: readonly string[] | undefined;
      /** The commits kdelta did not make that its commit is built on (carried forward). */
      readonly carried?: readonly string[] | undefined;
    }
  /** A branch whose tip is a commit kdelta did not make, left alone: nothing of it was checked. */
  | { readonly kind: 'left-alone'; readonly foreign: readonly string[] };

export interface ReviewGate extends ReviewDecision {
  /** The proposal's status (on GitHub a commit status, context `kdelta`, on its tip). */
  readonly status: ProposalStatus;
  /** Why it may not merge without a person (undefined: it may), for the line its body gets when auto-merge is turned off. */
  readonly held: string | undefined;
}

/** Commits named in a status description (GitHub keeps 140 characters of it). */
const NAMED_COMMITS = 3;

function commitsLine(commits: readonly string[]): string {
  const named = commits.slice(0, NAMED_COMMITS).map((c) => c.slice(0, 12));
  const more = commits.length > NAMED_COMMITS ? ` and ${commits.length - NAMED_COMMITS} more` : '';
  return `${commits.length} commit(s) kdelta did not make (${named.join(', ')}${more})`;
}

export function reviewGate(facts: ReviewFacts): ReviewGate {
  switch (facts.kind) {
    case 'left-alone': {
      const commits = commitsLine(facts.foreign);
      // kdelta checked nothing of the tip: no verdict on it (a required check waits), and no draft
      // change either, the branch being a person's now
      return {
        status: { state: 'pending', description: `${commits}: not checked by kdelta; review them` },
        ready: undefined,
        autoMerge: false,
        held: `the branch holds ${commits}`,
      };
    }
    case 'built': {
      const { conflicts, renderFailure } = facts;
      const notReady = facts.notReady ?? [];
      const carried = facts.carried ?? [];
      const failing: string[] = [];
      if (renderFailure) failing.push(renderFailureLine(renderFailure));
      if (conflicts > 0) failing.push(`${conflicts} conflict(s)${renderFailure ? '' : ' to review'}`);
      if (notReady.length > 0) failing.push(`readiness gate(s) not met (${notReady.join(', ')})`);
      const reasons = [...(carried.length > 0 ? [`the branch holds ${commitsLine(carried)}`] : []), ...failing];
      const ready = failing.length === 0;
      const held = reasons.length > 0 ? reasons.join('; ') : undefined;
      // the commits first: a description is cut at 140 characters, and they are what a reviewer must look at
      const prefix = carried.length > 0 ? `${commitsLine(carried)}; ` : '';
      const description = !ready
        ? `${prefix}${failing.join('; ')}: see the proposal${!renderFailure && notReady.length === 0 ? "'s conflict report" : ''}`
        : carried.length > 0
          ? `${prefix}no conflicts; review them (no auto-merge)`
          : 'no conflicts';
      return { status: { state: ready ? 'success' : 'failure', description }, ready, autoMerge: held === undefined, held };
    }
    default:
      return facts satisfies never;
  }
}

/**
 * Auto-merge is on (whoever turned it on: a person, or a run that could not turn it off) where the
 * gate holds it back: the run turns it off, and the body says why.
 */
export function autoMergeToTurnOff(open: Proposal | undefined, gate: ReviewGate): boolean {
  return open?.autoMerge === true && !gate.autoMerge;
}

/**
 * Whether the proposal is (or becomes) a draft, from its readiness and the forge's draft policy:
 * `conflicts`, a draft while not ready; `never`, never; `always`, opened as a draft and then left
 * as it is (a person may mark it ready). Readiness not known: left as it is.
 */
export function draftOf(policy: DraftPolicy | undefined, ready: boolean | undefined, opening: boolean): boolean | undefined {
  if (ready === undefined) return undefined;
  const what = policy ?? 'conflicts';
  switch (what) {
    case 'conflicts':
      return !ready;
    case 'never':
      return false;
    case 'always':
      return opening ? true : undefined;
    default:
      return what satisfies never;
  }
}
