import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import type { ProposalTarget } from '../forges/forge.js';
import type { Decisions } from '../propose/proposal-body.js';
import type { GroupRecord, ProposalMetadata } from '../propose/proposal-metadata.js';
import type { RenderFailureReport } from './render.js';
import type { UpstreamChanges } from './upstream-changes.js';
import type { JobAction, JobOutcome, VariantResult } from '../report/result.js';
import type { Workspace } from '../propose/workspace.js';

/**
 * What a job wants proposed: where, from which inputs (the fingerprint), and how to prepare the
 * package once a workspace is checked out. Every job (variant, package update, removal) is a
 * producer of one; `propose` takes it the rest of the way.
 */
export interface Change {
  readonly target: ProposalTarget;
  /** What the proposed content is computed from: an open proposal with it needs nothing done. */
  readonly fingerprint: string;
  readonly kind: ProposalMetadata['kind'];
  /** The name the proposal records, carried by the trailer of its commits. */
  readonly variant: string;
  /** The package directory in the downstream repository. */
  readonly directory: string;
  /** Where the content comes from (a removal has none); `oldCommit` when known before checkout. */
  readonly upstream?: VariantResult['upstream'];
  /** The action a new proposal is reported as, and an update of the open one. */
  readonly opened: JobAction;
  readonly updated: JobAction;
  /**
   * The base branch's package already comes from this upstream commit, and only an update of it
   * could change it: with no proposal open there is nothing to check out.
   */
  readonly current?: boolean | undefined;
  /**
   * An update policy's word on auto-merge (undefined: none governs it, the forge's own setting
   * decides): true asks for it, false never turns it on. The review gate still decides whether the
   * content may merge without a person.
   */
  readonly autoMerge?: boolean | undefined;
  /** Names the job's scratch directory. */
  readonly scratchName: string;
  /** Prepare the package in the workspace; `{ done }` when the job ends there (not adopted, failed). */
  prepare(ws: Workspace): Promise<Prepared | { readonly done: JobOutcome }>;
}

/** A package prepared in the workspace, and what its proposal says about it. */
export interface Prepared {
  readonly title: string;
  /** The body's opening paragraph. */
  readonly summary: string;
  /** Between the commit message's title and its trailers (the upstream it comes from). */
  readonly commitDetail?: string | undefined;
  /** The upstream the proposal records (with the commit it updates from). */
  readonly upstream?: VariantResult['upstream'];
  readonly conflicts: readonly Conflict[];
  /**
   * Where a commit kdelta did not make, carried forward, changed a field the new proposal changes
   * too (origin: what kdelta last pushed; upstream: the new proposal, kept; local: the branch).
   */
  readonly clashes?: readonly Conflict[] | undefined;
  readonly resources: readonly ResourceReport[];
  readonly renderFailure?: RenderFailureReport | undefined;
  /** Readiness gates of the package not met. */
  readonly notReady?: readonly { readonly type: string; readonly message?: string | undefined }[] | undefined;
  /** The upstream's compare page between the old and the new commit. */
  readonly compareUrl?: string | undefined;
  /** What upstream changed since the package's lock: fields per resource, and its commits. */
  readonly upstreamChanges?: UpstreamChanges | undefined;
  /** Why an open proposal with nothing left to propose is closed (default: the downstream already has its content). */
  readonly closeReason?: string | undefined;
  /** Conflicts decided by a tick on the open proposal (not in `conflicts`), and ticks not applied. */
  readonly decisions?: Decisions | undefined;
  /** The package differs from the base branch's only in its Kptfile's upstream lock (jobs/lock-only.ts). */
  readonly lockOnly?: boolean | undefined;
  /** A group's proposal: its members and those left out (recorded in its metadata). */
  readonly group?: GroupRecord | undefined;
}
