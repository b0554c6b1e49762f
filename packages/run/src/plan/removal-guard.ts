import { jobKey, removalSetKey } from '../dashboard/dashboard.js';
import { removalLabel, type Removal } from '../jobs/removal.js';
import { retiredLabel, type RetiredDraft } from '../jobs/retire.js';
import { settingNames, settingRow } from '../settings/setting-table.js';

/**
 * The removal guard: more removals due than a run may propose is likelier a selector or label
 * typo than a fleet being retired, so none of them is proposed and the run says how to allow
 * them. What it counts is what the run would newly do to the fleet because variants are gone:
 * packages to remove (or orphan) and open proposals of gone variants to close (closing one deletes
 * its branch, and the decisions ticked on it). It counts them on the whole plan, which every shard
 * computes alike, so `--shard k/n` holds exactly what an unsharded run holds; and it leaves out
 * the removals already proposed (open, or declined from the same inputs), whose jobs write nothing
 * new, so a set of removals once allowed is not held again while its proposals wait for review.
 */

export interface RemovalGuardInput {
  /** The removals due in the whole plan: every downstream's, whichever shard runs their job. */
  readonly removals: readonly Removal[];
  /** The open proposals of gone variants to close, in the whole plan. */
  readonly drafts: readonly RetiredDraft[];
  /** The removals whose proposal is made already (jobs/removal.ts `proposedRemovals`): not counted. */
  readonly proposed: ReadonlySet<Removal>;
  /** max-removals. */
  readonly max: number;
  /** The "allow these removals" boxes ticked on the dashboard (their keys). */
  readonly allowed: ReadonlySet<string>;
  /** Whether a gone variant's job is this run's (its `--shard`). */
  readonly mine: (variant: string) => boolean;
}

/** A job the guard held back: reported failed, code `removals-held`. */
export interface HeldRemoval {
  readonly variant: string;
  /** The Repository's name. */
  readonly repository: string;
  /** `<Repository>/<package>`, as the job's result names it. */
  readonly downstream: string;
}

export interface RemovalGuardDecision {
  /** What the guard counted: the whole plan's new removals and closings. */
  readonly count: number;
  /** This run's removals to propose, and open proposals to close (none of them new when the guard holds). */
  readonly removals: Removal[];
  readonly drafts: RetiredDraft[];
  /** This run's removals and closings held back, each reported failed with `message`. */
  readonly held: HeldRemoval[];
  readonly message?: string | undefined;
  /** The guard holds removals of other shards only: this shard's run says so. */
  readonly warning?: string | undefined;
  /** The dashboard tick that let them through (cleared by this run). */
  readonly allowedBy?: string | undefined;
}

interface Counted {
  readonly variant: string;
  readonly repository: string;
  readonly downstream: string;
  /** What it does: remove the package, drop its ownership, or close the gone variant's open proposal. */
  readonly does: Removal['policy'] | 'close';
}

/** Whether the run proposes the removals due, and which of them it holds back: decided once, on the whole plan. */
export function removalGuard(input: RemovalGuardInput): RemovalGuardDecision {
  const counted: Counted[] = [
    ...input.removals
      .filter((r) => !input.proposed.has(r))
      .map((r) => ({ variant: r.variant, repository: r.repository, downstream: removalLabel(r), does: r.policy })),
    ...input.drafts.map((d) => ({ variant: d.variant, repository: d.repository, downstream: retiredLabel(d), does: 'close' as const })),
  ];
  const removals = input.removals.filter((r) => input.mine(r.variant));
  const drafts = input.drafts.filter((d) => input.mine(d.variant));
  const count = counted.length;
  if (count <= input.max) return { count, removals, drafts, held: [] };
  const keyOf = (c: Counted) => jobKey(c.variant, c.downstream);
  const mine = counted.filter((c) => input.mine(c.variant));
  // The tick names the set a dashboard showed: the whole plan's, or (a dashboard per shard) this shard's part of it.
  const allowedBy = [removalSetKey(counted.map(keyOf)), removalSetKey(mine.map(keyOf))].find((k) => input.allowed.has(k));
  if (allowedBy !== undefined) return { count, removals, drafts, held: [], allowedBy };
  const message = heldMessage(counted, input.max, input.proposed.size);
  return {
    count,
    // what is proposed already is kept up to date; nothing new is done
    removals: removals.filter((r) => input.proposed.has(r)),
    drafts: [],
    held: mine.map(({ variant, repository, downstream }) => ({ variant, repository, downstream })),
    message,
    ...(mine.length === 0 ? { warning: `the removal guard holds the removals of other shards: ${message}` } : {}),
  };
}

/** Why the removals were held back, and the two ways on: fix the control resources, or allow them. */
function heldMessage(counted: readonly Counted[], max: number, proposed: number): string {
  const variants = counted
    .map((c) => `${c.variant} (${c.downstream}, ${c.does === 'close' ? 'close its open proposal' : c.does})`)
    .join(', ');
  const closings = counted.filter((c) => c.does === 'close').length;
  const what =
    closings > 0
      ? ` (${counted.length - closings} packages to remove or orphan, ${closings} open proposals of gone variants to close)`
      : '';
  const notCounted = proposed > 0 ? ` ${proposed} removals already proposed are not counted.` : '';
  return (
    `${counted.length} removals are due${what}, more than ${settingRow('maxRemovals').input} (${max}): none was proposed.${notCounted} Variants gone: ${variants}. ` +
    `If the control resources are wrong (a selector or a label that no longer selects a repository removes its variants), fix them; ` +
    `if these variants were removed on purpose, allow their removal with ${settingNames('maxRemovals', counted.length)}`
  );
}
