/**
 * The one rule for a proposal branch prefix, whichever way it is given (`--branch-prefix`,
 * RunSettings `spec.branchPrefix`, the Action's `branch-prefix` input): each caller reports the
 * problem in its own words (a flag, a field, an input) and this decides it.
 *
 * The prefix is what keeps a proposal's head apart from every branch a human works on: without one
 * a variant named `main` would be pushed straight onto the downstream's base branch, past review.
 */
export const DEFAULT_BRANCH_PREFIX = 'kdelta/';

const ALLOWED = /^[A-Za-z0-9._/-]+$/;

/** Why `prefix` cannot start proposal branch names; undefined when it can. */
export function branchPrefixProblem(prefix: string): string | undefined {
  if (prefix === '') {
    return `must not be empty: proposal branches would then be named after the variants alone, and one named like the base branch would bypass review (the default is "${DEFAULT_BRANCH_PREFIX}")`;
  }
  if (!ALLOWED.test(prefix)) return `"${prefix}" may hold only letters, digits, ".", "_", "-" and "/"`;
  if (/^[/.-]/.test(prefix)) return `"${prefix}" must not start with "/", "." or "-"`;
  // git check-ref-format's rules that a prefix can break on its own
  if (prefix.includes('..') || prefix.includes('//') || /(^|\/)\./.test(prefix) || prefix.includes('.lock/')) {
    return `"${prefix}" is not the start of a git branch name (no "..", "//", component starting with "." or ending in ".lock")`;
  }
  return undefined;
}
