/**
 * A forge is where proposals (pull requests) live. The run pushes branches with git itself; the
 * forge only finds, records and closes the proposal for a branch. Two implementations (local and
 * GitHub) pass the same suite (`forge-suite.ts`).
 */

export type ProposalState = 'open' | 'closed' | 'merged';

/** Which proposal: one per head branch and base branch of a downstream repository. */
export interface ProposalTarget {
  /** The downstream Repository's name (the local forge's folder; messages). */
  readonly downstream: string;
  /** The downstream repository's URL or path. */
  readonly repo: string;
  /** `kdelta/<variant>`. */
  readonly head: string;
  readonly base: string;
}

export interface ProposalInput extends ProposalTarget {
  readonly title: string;
  /** Markdown, ending with the hidden metadata block (see report.ts). */
  readonly body: string;
  /** What the proposed content was computed from: equal fingerprints, equal content. */
  readonly fingerprint: string;
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
}

export interface UpsertResult {
  readonly proposal: Proposal;
  readonly created: boolean;
  /** False when the open proposal already said exactly this (nothing was written). */
  readonly changed: boolean;
}

export interface Forge {
  readonly name: string;
  /** The open proposal for `head` into `base`, if there is one. */
  find(target: ProposalTarget): Promise<Proposal | undefined>;
  /** Open a proposal, or update the open one for the same head and base. */
  upsert(input: ProposalInput): Promise<UpsertResult>;
  /** Close it (`merged`: the content reached the base branch). */
  close(proposal: Proposal, state?: 'closed' | 'merged'): Promise<Proposal>;
  /** Record a status on the proposal (a commit status on GitHub). */
  setStatus(proposal: Proposal, status: ProposalStatus): Promise<void>;
  /** Every proposal the forge knows, open or not. */
  list(): Promise<Proposal[]>;
}
