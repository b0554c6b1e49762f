/**
 * What a governed variant's job is told by its policy, and which proposal branches belong to a
 * current variant: a leaf, so that the jobs and the plan read it without importing the policy plan.
 */

/** What a governed variant's job proposes, as policy-plan.ts decided it. */
export type VariantPin =
  /** This revision; with `autoMerge`, the policy asks for auto-merge (the review gate still decides on the content). */
  | {
      readonly kind: 'revision';
      readonly ref: string;
      readonly commit: string;
      readonly reason: string;
      readonly autoMerge: boolean;
    }
  /** No revision it may have and no package yet: nothing is proposed this run (`why` says what it waits on). */
  | { readonly kind: 'wait'; readonly why: string }
  /** The job fails with this code (a team's file that widens the fleet's policy, a branch another variant has). */
  | { readonly kind: 'fail'; readonly code: string; readonly message: string };

/** The suffix of a separate major release's branch: `<prefix><variant>-major`. */
export const MAJOR_SUFFIX = '-major';

/**
 * Whether a proposal branch's name (the part after the prefix) is a current variant's: its own
 * branch, or the separate major one of a variant that has one. Anything else of the prefix is a
 * gone variant's (removal and retire detection).
 */
export function currentProposalOf(name: string, variants: ReadonlySet<string>): boolean {
  return variants.has(name) || (name.endsWith(MAJOR_SUFFIX) && variants.has(name.slice(0, -MAJOR_SUFFIX.length)));
}
