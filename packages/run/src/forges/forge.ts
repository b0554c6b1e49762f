import type { Author } from '@kdelta/git-source';

/**
 * A forge is where proposals (pull requests) live. The run pushes branches with git itself
 * (unless the forge makes the commit, see `publishCommit`); the forge finds, records and closes
 * the proposal for a branch. Two implementations (local and GitHub) pass the same suite
 * (`forge-suite.ts`).
 */

/** `declined`: closed unmerged by a person (the local forge: its branch deleted); not proposed again as it was. */
export type ProposalState = 'open' | 'closed' | 'merged' | 'declined';

/** Which proposal: one per head branch and base branch of a downstream repository. */
export interface ProposalTarget {
  /** The downstream Repository's name (the local forge's folder; messages). */
  readonly downstream: string;
  /** The downstream repository's URL or path. */
  readonly repo: string;
  /** `<branch prefix><variant>` (default prefix `kdelta/`). */
  readonly head: string;
  readonly base: string;
}

export interface ProposalInput extends ProposalTarget {
  readonly title: string;
  /** Markdown, ending with the hidden metadata block (the run's proposal-body.ts writes it; a forge never reads it). */
  readonly body: string;
  /** What the proposed content was computed from: equal fingerprints, equal content. */
  readonly fingerprint: string;
  /** Conflicts in the proposed content, as a forge records them (what they mean for review is `review`). */
  readonly conflicts?: number | undefined;
  /** The package's render failed: the content is unrendered (recorded; what it means for review is `review`). */
  readonly renderFailed?: boolean | undefined;
  /**
   * Ready for review and free to merge without a person, as the protocol decided it (review-gate.ts);
   * the forge only carries it out. Absent: never auto-merged, the draft state left as it is.
   */
  readonly review?: ReviewDecision | undefined;
  /**
   * The commit the run pushed (or published) on the head branch for this proposal. GitHub moves a
   * pull request's head to a push asynchronously: what belongs on the proposed commit (its status,
   * a merge at that commit) uses this one, never the head the forge reads back.
   */
  readonly headCommit?: string | undefined;
}

/**
 * What "not ready" means for drafts (the GitHub forge's `draft` option): `conflicts`, a draft while
 * not ready; `always`, opened as a draft whatever it holds; `never`, never a draft.
 */
export type DraftPolicy = 'always' | 'never' | 'conflicts';

/** What the run decided about review (review-gate.ts): every forge carries it out, none decides it. */
export interface ReviewDecision {
  /** Ready for review (undefined: not known, a branch left alone). */
  readonly ready?: boolean | undefined;
  /**
   * A draft: true opens (or turns) it into one, false marks it ready for review; undefined leaves
   * it as it is. The run decides it from `ready` and the forge's `draftPolicy` (review-gate.ts).
   */
  readonly draft?: boolean | undefined;
  /** May merge without a person (GitHub's auto-merge, when the run asks for it); false turns it off. */
  readonly autoMerge: boolean;
  /**
   * An update policy's word (undefined: none governs the proposal, the forge's own auto-merge
   * setting decides): true turns auto-merge on where `autoMerge` allows it, even without that
   * setting; false never turns it on (one a person turned on stays, unless `autoMerge` is false).
   */
  readonly autoMergeAsked?: boolean | undefined;
}

export interface ProposalStatus {
  readonly state: 'pending' | 'success' | 'failure';
  readonly description: string;
}

export interface Proposal extends ProposalInput {
  /** Stable id: a number on GitHub, `<downstream>/<variant>` locally. */
  readonly id: string;
  readonly state: ProposalState;
  /** Where a reviewer reads it (a URL, or the record's path). */
  readonly url: string;
  readonly status?: ProposalStatus | undefined;
  /** Labels on it (a human adds `kdelta:stop` to make kdelta leave it alone). */
  readonly labels?: readonly string[] | undefined;
  /** A draft: not ready for review. */
  readonly draft?: boolean | undefined;
  /** Auto-merge is on (whoever turned it on): it merges once its required checks pass. */
  readonly autoMerge?: boolean | undefined;
  /** When it was opened (ISO 8601), when the forge knows: the policies' "new per hour" counts it. */
  readonly createdAt?: string | undefined;
}

/** A health signal on a commit as the forge reports it (a commit status or a check run of that name). */
export interface CommitSignal {
  readonly state: 'success' | 'failure' | 'pending' | 'missing';
  /** Where a person reads it (the status's target URL, the check run's page). */
  readonly url?: string | undefined;
  readonly description?: string | undefined;
}

/** The label that tells kdelta to leave a proposal alone. */
export const STOP_LABEL = 'kdelta:stop';

/** On a pull request a person closed (declined), the label that undoes the decline: the next run proposes again. */
export const PROPOSE_AGAIN_LABEL = 'kdelta:propose-again';

/** How a closed proposal ended, as a forge reports it; the protocol decides its state from these (propose/protocol.ts). */
export interface ClosedFacts {
  /** The forge merged it (GitHub's merge button), or kdelta recorded it merged this run. */
  readonly merged: boolean;
  /** Who closed it, as its body says: kdelta (and as what), a person, or unknown (not a body of kdelta's). */
  readonly closedBy: { readonly by: 'kdelta'; readonly state: 'closed' | 'merged' } | { readonly by: 'person' } | undefined;
  readonly labels: readonly string[];
}

export interface UpsertResult {
  readonly proposal: Proposal;
  readonly created: boolean;
  /** False when the open proposal already said exactly this (nothing was written). */
  readonly changed: boolean;
  /** What did not work out but did not stop the proposal (a reviewer that cannot be requested...). */
  readonly warnings?: readonly string[] | undefined;
}

/** A commit the forge makes itself (GitHub: through its API, so GitHub marks it verified). */
export interface PublishCommitInput {
  readonly target: ProposalTarget;
  /**
   * A work tree holding `commit`, whose only parent is `baseCommit`: the base branch's commit, or
   * the branch's tip when the commits on it are carried forward (then `expectedHead`).
   */
  readonly dir: string;
  readonly commit: string;
  readonly baseCommit: string;
  /** Where the branch is now (undefined: it must not exist); a branch someone moved is not overwritten. */
  readonly expectedHead: string | undefined;
  readonly message: string;
  readonly author: Author;
}

/** What a job's writes may cost in forge requests, to reserve them from the run's budget up front. */
export type WriteOperation =
  /** `autoMergeAsked`: an update policy's word on auto-merge (ReviewDecision), which may cost a request. */
  | { readonly kind: 'upsert'; readonly created: boolean; readonly autoMergeAsked?: boolean | undefined }
  | { readonly kind: 'close' }
  | { readonly kind: 'push'; readonly files: number }
  | { readonly kind: 'delete-branch' }
  /** The proposal's status on its new head commit. */
  | { readonly kind: 'status' }
  /** The run's dashboard, created or rewritten. */
  | { readonly kind: 'dashboard' };

/** Which dashboard: one per control repository (and per shard or mode of a run). */
export interface DashboardTarget {
  /** The control repository as the forge names it (GitHub: `owner/name`); the local forge keeps its file beside its records. */
  readonly repository?: string | undefined;
  /** A file name's stem (local forge): `dashboard`, `dashboard-shard-1-of-4`. */
  readonly name: string;
  /** The title (GitHub): with the marker, what finds it again. */
  readonly title: string;
  /** A hidden marker the body carries (an HTML comment): an issue without it is a person's, never rewritten. */
  readonly marker: string;
}

/** The dashboard as the forge keeps it. */
export interface DashboardRecord {
  /** The number, or the file's path. */
  readonly id: string;
  readonly body: string;
  /** Where a person reads it (the URL, the file's path). */
  readonly url: string;
}

export interface Forge {
  readonly name: string;
  /** The forge's server (`https://github.com`): a host the run's credentials may go to. */
  readonly serverUrl?: string | undefined;
  /**
   * The forge itself records a proposal merged into its base as merged (GitHub closes a merged
   * pull request), so the run need not look for merged removal proposals (see run/settle.ts).
   */
  readonly tracksMerges?: boolean;
  /** What "not ready" means for drafts on this forge, as configured (absent: `conflicts`). */
  readonly draftPolicy?: DraftPolicy | undefined;
  /** The open proposal for `head` into `base`, if there is one. */
  find(target: ProposalTarget): Promise<Proposal | undefined>;
  /** Open a proposal, or update the open one for the same head and base. */
  upsert(input: ProposalInput): Promise<UpsertResult>;
  /** Close it (`merged`: the content reached the base branch). */
  close(proposal: Proposal, state?: 'closed' | 'merged' | 'declined'): Promise<Proposal>;
  /**
   * The declined proposal for `head` into `base`, if the last one was declined (no method: the
   * forge keeps no declines, and every run proposes what is due).
   */
  declined?(target: ProposalTarget): Promise<Proposal | undefined>;
  /**
   * Record a status on the proposal (a commit status on GitHub, on `commit`: the one the run
   * pushed; without it, the commit the forge last saw for the proposal).
   */
  setStatus(proposal: Proposal, status: ProposalStatus, commit?: string): Promise<void>;
  /**
   * Post `status` on `commit` (the proposal's commit, as the run knows it) when that commit has no
   * status of kdelta's yet (a run that stopped between its push and its status); true when it did.
   */
  ensureStatus?(proposal: Proposal, status: ProposalStatus, commit: string): Promise<boolean>;
  /**
   * Every proposal the forge knows, open or not: on GitHub those of the repositories it has seen in
   * this run, and of `repositories` (the local forge keeps them all in one place and ignores it).
   */
  list(repositories?: readonly { readonly downstream: string; readonly repo: string }[]): Promise<Proposal[]>;
  /**
   * Where the forge keeps the proposal of a target, when that is not simply its repository and
   * head branch (the local forge's record file): two targets with one record overwrite each other.
   */
  recordOf?(target: ProposalTarget): string;
  /** The request cost of a write (no method: writes are free, as for local files). */
  writeCost?(op: WriteOperation): number;
  /** Make the branch's commit through the forge instead of a git push; returns the commit it made. */
  publishCommit?(input: PublishCommitInput): Promise<string>;
  /** The token git should use for a repository URL (only for the forge's own server). */
  gitToken?(url: string): string | undefined;
  /** What `gitToken(url)` is, for the message when it is refused ("the `token` input", "GITHUB_TOKEN"). */
  gitTokenName?(url: string): string | undefined;
  /** Make sure `gitToken(url)` has a current token for the repository (a GitHub App's, minted per owner). */
  prepareGitToken?(url: string): Promise<void>;
  /**
   * The run's dashboard (an issue of the control repository, a file beside the records), when
   * there is one: the forge keeps no dashboards without this method and `writeDashboard`.
   */
  readDashboard?(target: DashboardTarget): Promise<DashboardRecord | undefined>;
  /** Write the dashboard: `existing` (as read) rewritten, or a new one made; returns it as written. */
  writeDashboard?(target: DashboardTarget, body: string, existing: DashboardRecord | undefined): Promise<DashboardRecord>;
  /** A link to the changes of `upstreamRepo` from `from` to `to`, when the forge hosts it. */
  compareUrl?(upstreamRepo: string, from: string, to: string): string | undefined;
  /** A link to commit `sha` of `upstreamRepo`, when the forge hosts it. */
  commitUrl?(upstreamRepo: string, sha: string): string | undefined;
  /**
   * The health signal `signal.name` on `commit` of a downstream repository (a rollout wave's
   * health): GitHub's commit status or check run; the local forge's, a status a person set
   * (`kdelta status`). No method: the forge has no signals, and a policy naming one waits.
   */
  commitSignal?(
    repo: { readonly downstream: string; readonly repo: string },
    commit: string,
    signal: { readonly name: string; readonly kind: 'status' | 'check-run' | 'any' },
  ): Promise<CommitSignal>;
}
