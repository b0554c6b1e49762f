import type { Budget } from '../budget.js';
import type { ClosedFacts, DraftPolicy, Forge } from '../forge.js';
import type { ForgeClock, GitHubAppCredentials } from './auth.js';

/** The GitHub forge's options: what a run sets (its settings) and how the forge is assembled (its door, tests). */

export type { DraftPolicy };
export type AutoMergeMethod = 'merge' | 'squash' | 'rebase';

/** The pull request options of a run (the Action's inputs, the CLI's flags, RunSettings' `spec.github`). */
export interface GitHubRunOptions {
  /** Default: env GITHUB_TOKEN, else GH_TOKEN. */
  readonly token?: string | undefined;
  /** Default: env GITHUB_API_URL, else https://api.github.com. */
  readonly apiUrl?: string | undefined;
  /** Default: env GITHUB_SERVER_URL, else https://github.com. */
  readonly serverUrl?: string | undefined;
  /** Default: env GITHUB_GRAPHQL_URL, else derived from apiUrl (`…/api/v3` → `…/api/graphql`, else `<apiUrl>/graphql`). */
  readonly graphqlUrl?: string | undefined;
  /**
   * Authenticate as this GitHub App (an installation token per owner of the repositories) instead
   * of `token`. Default: env KDELTA_GITHUB_APP_ID (or KDELTA_GITHUB_APP_CLIENT_ID) and
   * KDELTA_GITHUB_APP_PRIVATE_KEY, when set.
   */
  readonly app?: GitHubAppCredentials | undefined;
  /** What the token is, for the message when GitHub refuses it (default: where it came from). */
  readonly tokenName?: string | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly assignees?: readonly string[] | undefined;
  readonly reviewers?: readonly string[] | undefined;
  readonly teamReviewers?: readonly string[] | undefined;
  /** Default 'conflicts': a proposal the run finds not ready (conflicts, a failed render, an unmet readiness gate) is opened as a draft. */
  readonly draft?: DraftPolicy | undefined;
  /** Only ever enabled where the run allows it (review-gate.ts: nothing a person must review first). */
  readonly autoMerge?: false | AutoMergeMethod | undefined;
  /** Commits made through the API (GitHub marks them verified) instead of git push. */
  readonly signedCommits?: boolean | undefined;
}

/** How the client reaches GitHub: where, as whom, how fast, within which budget. */
export interface GitHubClientOptions {
  readonly token?: string | undefined;
  readonly apiUrl?: string | undefined;
  readonly serverUrl?: string | undefined;
  readonly graphqlUrl?: string | undefined;
  readonly app?: GitHubAppCredentials | undefined;
  readonly tokenName?: string | undefined;
  /** Where defaults come from (GITHUB_TOKEN, GH_TOKEN, GITHUB_API_URL, GITHUB_SERVER_URL). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Counts content-creating requests. */
  readonly budget?: Budget | undefined;
  /**
   * Octokit spaces write requests a second apart as GitHub asks, and waits `retry-after`
   * seconds after a secondary rate limit; tests against a local server shorten both.
   */
  readonly pacing?:
    | {
        readonly writeSpacing?: boolean;
        readonly retryAfterUnitMs?: number;
        /** Content-creating requests a minute at most (default 80, GitHub's secondary limit). */
        readonly writesPerMinute?: number;
      }
    | undefined;
  /** Time, for pacing and token renewal (tests move it instead of sleeping). */
  readonly clock?: ForgeClock | undefined;
  /** Each new installation token, as soon as it exists (the Action masks it). */
  readonly onToken?: ((token: string) => void) | undefined;
}

export interface GitHubForgeOptions extends GitHubRunOptions, GitHubClientOptions {
  /** Heads this forge lists (default `kdelta/`). */
  readonly branchPrefix?: string | undefined;
  /**
   * Reads the fingerprint a body carries itself (the run's metadata block): such a body is stored
   * as it is, the fingerprint once. Without it, or for a body that carries none, the forge keeps
   * the fingerprint in a hidden marker of its own at the end of the body.
   */
  readonly fingerprintIn?: ((body: string) => string | undefined) | undefined;
  /**
   * Tells kdelta's own closes from a person's: `mark` writes into a body, in the request that
   * closes the pull request, that kdelta closed it; `read` reads that back. With it, a pull
   * request a person closed unmerged is declined (`declined(target)`, `list()`); without it the
   * forge keeps no declines.
   */
  readonly closes?: CloseMarks | undefined;
}

/** Who closed a pull request, as its body says (the run's metadata block), and what that makes it (the run's protocol). */
export interface CloseMarks {
  mark(body: string, state: 'closed' | 'merged'): string;
  /** `person`: a body of kdelta's that kdelta did not close; undefined: not a body of kdelta's. */
  read(body: string): ClosedFacts['closedBy'];
  /** The protocol's decision from the facts the forge reads (propose/protocol.ts): the forge only reports them. */
  stateOf(facts: ClosedFacts): 'closed' | 'merged' | 'declined';
}

export interface GitHubForge extends Forge {
  readonly serverUrl: string;
  readonly apiUrl: string;
  /** Requests made: reads (GET) and writes (everything else, GraphQL mutations). */
  readonly requests: { readonly reads: number; readonly writes: number };
}
