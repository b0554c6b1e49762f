import type { Source } from '../control/control-source.js';

/**
 * Update policy and rollout waves: what a fleet may be proposed, when, how many at once, and in
 * which order its downstreams get a new upstream revision. One `UpdatePolicy` control resource
 * governs the variants its selector picks (at most one per variant); a cluster team's
 * `DownstreamPolicy` file in its own repository may only narrow it. The types here are the
 * contract between the folder's parts: policy-check.ts parses them, policy-plan.ts decides per
 * variant, the gates (gates/) hold jobs by them, the dashboard and the preview show them.
 */

export const POLICY_API_VERSION = 'kdelta.dev/v1alpha1';
export const UPDATE_POLICY_KIND = 'UpdatePolicy';
export const DOWNSTREAM_POLICY_KIND = 'DownstreamPolicy';
/** The Repository label that puts a downstream in a wave (the policy may name another). */
export const WAVE_LABEL = 'kdelta.dev/wave';
export const DEFAULT_WAVES: readonly string[] = ['canary', 'early', 'prod'];
/** Where a cluster team's narrowing lives: this path at the root of its downstream repository, on the Repository's branch. */
export const DOWNSTREAM_POLICY_FILE = '.kdelta/downstream-policy.yaml';

/** A semver step between the revision a downstream has and the one proposed. */
export type UpdateType = 'patch' | 'minor' | 'major';
export const UPDATE_TYPES: readonly UpdateType[] = ['patch', 'minor', 'major'];

/** `Mon-Fri 09:00-17:00`: days of the week (0 = Sunday) and a range of minutes of the day, in the schedule's time zone. */
export interface WeeklyWindow {
  readonly kind: 'weekly';
  readonly days: readonly number[];
  /** Minute of the day the window opens (0–1439). */
  readonly from: number;
  /** Minute of the day it closes, exclusive (1–1440); below `from`, the window runs past midnight. */
  readonly until: number;
  /** As written, for messages. */
  readonly text: string;
}

/** `cron: * 9-16 * * 1-5`: the minutes a five-field cron expression matches are open. */
export interface CronWindow {
  readonly kind: 'cron';
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  /** 0 = Sunday (7 is read as 0). */
  readonly daysOfWeek: readonly number[];
  /** cron's rule: with both day fields restricted, a day matching either is open. */
  readonly daysRestricted: { readonly month: boolean; readonly week: boolean };
  readonly text: string;
}

export type ScheduleWindow = WeeklyWindow | CronWindow;

/** When new proposals may be made: inside any of the windows, in the time zone (IANA name, default UTC). */
export interface Schedule {
  readonly timeZone: string;
  readonly windows: readonly ScheduleWindow[];
}

/** No new proposal from `from` until `until` (exclusive). */
export interface Freeze {
  readonly from: Date;
  readonly until: Date;
  readonly reason?: string | undefined;
}

/** A health signal: a commit status (its context) or a check run (its name), green on the commit that holds the merge. */
export interface HealthSignal {
  readonly name: string;
  /** Which GitHub object carries it; `any`: either. */
  readonly kind: 'status' | 'check-run' | 'any';
}

export interface RolloutSpec {
  /** The Repository label that names a downstream's wave (default {@link WAVE_LABEL}). */
  readonly label: string;
  /** The waves in order (default {@link DEFAULT_WAVES}). A downstream without the label is in the last. */
  readonly waves: readonly string[];
  /** How long after the last merge of a wave the next may start. */
  readonly soakMs: number;
  readonly health?: HealthSignal | undefined;
  /** Rollouts halted by hand in the policy itself (alike in every shard): revision (tag or commit) and why. */
  readonly halted: readonly { readonly revision: string; readonly reason: string }[];
  /** Rollouts advanced by hand past what they wait on, up to and including this wave. */
  readonly advanced: readonly { readonly revision: string; readonly wave: string }[];
}

/** Which variants a policy governs: every given criterion must match; an empty selector matches every variant. */
export interface PolicySelector {
  /** The PackageVariantSets whose variants it governs (by name). */
  readonly packageVariantSets?: readonly string[] | undefined;
  /** Variant names, `*` globs allowed. */
  readonly packageVariants?: readonly string[] | undefined;
  /** The upstream Repository (by name) and, optionally, package. */
  readonly upstream?: { readonly repo: string; readonly package?: string | undefined } | undefined;
  /** Labels the downstream Repository must have. */
  readonly downstreamLabels?: Readonly<Record<string, string>> | undefined;
}

export interface UpdatePolicy {
  readonly name: string;
  readonly source: Source;
  readonly selector: PolicySelector;
  /** The semver steps that may be proposed (default all three). */
  readonly updateTypes: ReadonlySet<UpdateType>;
  /** Revisions never proposed: tag names or versions, `*` globs allowed (`v2.*`, `1.4.0`). */
  readonly ignore: readonly string[];
  /** A release younger than this (its tag's date) is not proposed yet (0: none). */
  readonly minimumReleaseAgeMs: number;
  /** A major release is its own proposal, beside an open minor or patch one (default true). */
  readonly separateMajor: boolean;
  readonly schedule?: Schedule | undefined;
  readonly freezes: readonly Freeze[];
  /** At most this many open proposals of the policy's variants, and this many new ones in an hour. */
  readonly limits: { readonly openProposals?: number | undefined; readonly perHour?: number | undefined };
  /** `repository`: the packages of one downstream repository in one proposal. */
  readonly group: 'none' | 'repository';
  /** Auto-merge for these update types (from these upstream Repositories, when named): never with conflicts, carried commits or a failed render. */
  readonly autoMerge?: { readonly updateTypes: ReadonlySet<UpdateType>; readonly upstreams?: readonly string[] | undefined } | undefined;
  readonly rollout?: RolloutSpec | undefined;
}

/**
 * A cluster team's narrowing, read from {@link DOWNSTREAM_POLICY_FILE} of its repository: it may
 * only narrow what reaches it (checked against the fleet's policy when read).
 */
export interface DownstreamPolicy {
  /** `<Repository name>:.kdelta/downstream-policy.yaml` (the file, as errors name it). */
  readonly file: string;
  /** The downstream packages it speaks for (globs; default every package of the repository). */
  readonly packages?: readonly string[] | undefined;
  /** Nothing new is proposed (until the date, when given). */
  readonly pause?: { readonly until?: Date | undefined; readonly reason?: string | undefined } | undefined;
  readonly ignore: readonly string[];
  /** A subset of the fleet's update types. */
  readonly updateTypes?: ReadonlySet<UpdateType> | undefined;
  /** Its own window: new proposals only when both the fleet's and this one are open. */
  readonly schedule?: Schedule | undefined;
  /** Its own wave: the same as the fleet's or a later one. */
  readonly wave?: string | undefined;
  /** Longer than the fleet's minimum release age. */
  readonly minimumReleaseAgeMs?: number | undefined;
}

/** A revision a variant may be proposed: the ref, its commit, why, and its semver step from what the downstream has. */
export interface PolicyRevision {
  readonly ref: string;
  readonly commit: string;
  readonly reason: string;
  readonly updateType?: UpdateType | undefined;
}

/** What a variant's downstream base branch holds of its package, read at the base's commit. */
export interface DownstreamState {
  readonly baseCommit: string;
  /** The package's Kptfile upstream ref and lock commit (none: no package yet). */
  readonly ref?: string | undefined;
  readonly commit?: string | undefined;
  /** When the base branch took that lock commit (the merge a soak time counts from). */
  readonly mergedAt?: Date | undefined;
}

/** The policy's decision for one variant, made once per run in the plan stage (policy-plan.ts). */
export interface VariantPolicy {
  readonly policy: UpdatePolicy;
  /** Its wave (rollouts only): the fleet's label, or the team's later one. */
  readonly wave?: { readonly name: string; readonly index: number } | undefined;
  /** The team's narrowing, when its repository has one; `invalid`: the file's errors (nothing new is proposed there). */
  readonly downstream?: DownstreamPolicy | { readonly invalid: string } | undefined;
  readonly current?: DownstreamState | undefined;
  /** The revision this run may propose (undefined: none is due or allowed; `why` says which). */
  readonly target?: PolicyRevision | undefined;
  /** A major release proposed as its own proposal (separateMajor), besides `target`. */
  readonly major?: PolicyRevision | undefined;
  readonly why?: string | undefined;
  /** The policy lets `target` merge without a person (the review gate still refuses conflicts, carried commits, a failed render). */
  readonly autoMerge: boolean;
}

/** One upstream revision on its way through the waves of a policy. */
export interface RolloutStatus {
  readonly policy: string;
  /** The upstream package (`<Repository>/<package>`). */
  readonly upstream: string;
  readonly revision: string;
  readonly commit: string;
  /** Each wave in order: how many of its variants are due this revision and how many have it merged. */
  readonly waves: readonly { readonly name: string; readonly variants: number; readonly merged: number }[];
  /** The index of the last wave that has it everywhere (-1: none yet). */
  readonly reached: number;
  /** The wave it is proposed to now (the first not done). */
  readonly proposing?: string | undefined;
  /** What the next wave waits on, in words ("merge of web in repo-a", "soak until 2026-12-01T10:00Z", "status flux on repo-a"). */
  readonly waitingOn: readonly string[];
  readonly soakUntil?: Date | undefined;
  /** Halted: by a failed health signal (which, where) or by hand; said in words. */
  readonly halted?: string | undefined;
  /** Advanced by hand to this wave. */
  readonly advancedTo?: string | undefined;
}

/** Every policy decision of a run: alike in every shard (decided on the whole plan). */
export interface PolicyPlan {
  readonly byVariant: ReadonlyMap<string, VariantPolicy>;
  readonly rollouts: readonly RolloutStatus[];
  readonly warnings: readonly string[];
}

export const NO_POLICIES: PolicyPlan = { byVariant: new Map(), rollouts: [], warnings: [] };
