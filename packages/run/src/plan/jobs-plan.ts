import { defaultCacheDir } from '@kdelta/git-source';
import type { JobContext } from '../context.js';
import type { Forge, ProposalTarget } from '../forges/forge.js';
import { findControlRepository, type ControlRepository } from '../control/control-repository.js';
import { jobKey, type DashboardTicks } from '../dashboard/dashboard.js';
import { RunError } from '../errors.js';
import { findRemovals, proposedRemovals, removalLabel, removalTarget, type Removal } from '../jobs/removal.js';
import { findRetiredDrafts, retiredLabel, type RetiredDraft } from '../jobs/retire.js';
import { findUpdatePlans, updateTarget, type UpdatePlan } from '../jobs/update.js';
import { variantTarget } from '../jobs/variant.js';
import { pool } from '../pool.js';
import { groupOf, groupTarget, shardKeyOf, type PolicyOf } from '../policy/group-names.js';
import { scopeToUpstreamRef, type UpstreamRef, type UpstreamScope } from '../preview/preview-scope.js';
import { findMergedRemovals, type MergedRemoval } from '../propose/settle.js';
import type { ResolvedSettings } from '../settings/settings.js';
import { describeCollision, findCollisions, type PlannedProposal } from './names.js';
import type { Plan, VariantPlan } from './plan.js';
import { removalGuard, type HeldRemoval } from './removal-guard.js';
import { storedRemovals, storeRemovals } from './removal-scan.js';
import { clearInMemory, scanContextOf, scanPlaceOf, type RemovalScanMemory, SCAN_HEX } from './scan-memory.js';
import { inShard } from './shard.js';
import { currentProposalOf, type VariantPin } from '../policy/variant-pin.js';

/**
 * Every job of a run, known before the first one runs: the variants of the plan, the control
 * repository's package updates, the packages of variants that are gone and the proposals they
 * left, the removal guard decided on the whole plan. Gates (gates/) then decide which of them
 * propose now.
 */

/** Several variants of one policy and one downstream repository and branch, proposed together. */
export interface ProposalGroup {
  /** `group-<policy>`: the proposal's branch after the prefix, and the name its commits and record carry. */
  readonly name: string;
  readonly policy: string;
  /** The downstream Repository's name, its URL and the base branch. */
  readonly repository: string;
  readonly url: string;
  readonly base: string;
  /** In name order; never empty (a group of one is still a group: its branch stays the same). */
  readonly members: readonly Extract<PlannedJob, { kind: 'variant' }>[];
}

/** One job of the run, before the gates and before it runs; `variant` and `downstream` name its result. */
export type PlannedJob =
  | {
      readonly kind: 'variant';
      readonly variant: string;
      readonly downstream: string;
      readonly plan: VariantPlan;
      /** An update policy's word on what it proposes (policy/policy-jobs.ts); absent: the variant's own revision. */
      readonly pin?: VariantPin | undefined;
      /** The separate proposal of a major release (branch `<prefix><variant>-major`). */
      readonly major?: boolean | undefined;
    }
  | {
      readonly kind: 'update';
      readonly variant: string;
      readonly downstream: string;
      readonly plan: UpdatePlan;
      readonly control: ControlRepository;
    }
  | { readonly kind: 'removal'; readonly variant: string; readonly downstream: string; readonly removal: Removal }
  | { readonly kind: 'retire'; readonly variant: string; readonly downstream: string; readonly draft: RetiredDraft }
  /** Variants of one policy and one downstream proposed together (policy/groups.ts); named after the group and its Repository. */
  | { readonly kind: 'group'; readonly variant: string; readonly downstream: string; readonly group: ProposalGroup };

export type JobKind = PlannedJob['kind'];

/** The run's jobs in the order they run: variants, package updates, removals, retired drafts. */
export interface JobsPlan {
  /** A preview of an upstream ref: the Repository and the commit its variants run at. */
  readonly scope: UpstreamScope | undefined;
  readonly jobs: readonly PlannedJob[];
  /** Removals that would share a branch, a record or a directory with another proposal: each fails alone, with why. */
  readonly collided: ReadonlyMap<Removal, string>;
  /** Merged removal proposals, found now so that the run's total counts them, recorded after the jobs. */
  readonly merged: readonly MergedRemoval[];
  /** The removal guard's decision (removal-guard.ts): this run's removals and closings it held back, and why. */
  readonly guard: {
    readonly held: readonly HeldRemoval[];
    readonly message?: string | undefined;
    /** The dashboard tick that let the removals through (cleared by this run). */
    readonly allowedBy?: string | undefined;
  };
  /** The downstreams this run knows have no removals, and at which commit: for the dashboard to keep. */
  readonly scans: RemovalScanMemory;
  readonly warnings: readonly string[];
}

export interface JobsPlanInput {
  readonly plan: Plan;
  /** The run's mirrors, heads and forge; its branch prefix, cache, signal and control repository. */
  readonly ctx: JobContext;
  readonly settings: Pick<ResolvedSettings, 'mode' | 'shard' | 'concurrency' | 'maxRemovals'>;
  /** The dashboard's ticks: the jobs a person asked to retry go first. */
  readonly ticks: DashboardTicks;
  /** The control repository's work tree. */
  readonly cwd: string;
  /** The removal scans' answers the dashboard kept: read when the cache has none. */
  readonly scans?: RemovalScanMemory | undefined;
  readonly upstreamRef?: UpstreamRef | undefined;
  /** The update policy governing a variant (none: no variant is grouped). */
  readonly policyOf?: PolicyOf | undefined;
}

/** The plan stage: every job of the run and the proposals they would make, collisions checked before the first push. */
export async function planJobs(input: JobsPlanInput): Promise<JobsPlan> {
  const { plan, ctx, ticks } = input;
  const { mode, shard, maxRemovals } = input.settings;
  const { branchPrefix, control: controlId, signal } = ctx;
  const policyOf: PolicyOf = input.policyOf ?? (() => undefined);
  const warnings: string[] = [];
  const scope: UpstreamScope | undefined = input.upstreamRef
    ? await scopeToUpstreamRef(plan.variants, input.upstreamRef, ctx.upstreamRefs)
    : undefined;
  const variants = retriedFirst(
    // a group's members run in one shard: the group's
    mode === 'updates' ? [] : (scope?.variants ?? plan.variants).filter((v) => inShard(shardKeyOf(v, policyOf), shard)),
    (v) => jobKey(v.name, variantLabel(v)),
    ticks,
  );
  // Update mode: the control repository's own packages with an upstream.
  let updates: UpdatePlan[] = [];
  let control: ControlRepository | undefined;
  if (mode !== 'variants' && !scope) {
    const found = await findControlRepository(input.cwd);
    if (!found.ok) warnings.push(`update mode skipped: ${found.reason}`);
    else {
      control = found.value;
      try {
        const c = control;
        updates = retriedFirst(
          (await findUpdatePlans(await ctx.mirror(control.url), control, warnings)).filter((u) => inShard(u.name, shard)),
          (u) => jobKey(u.name, updateLabel(c, u)),
          ticks,
        );
      } catch (error) {
        warnings.push(
          `update mode skipped: cannot read the control repository (${control.url}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
      }
    }
  }
  // Packages of variants that are gone, found before any job runs: every proposal of the run is
  // known before the first push, so two that would overwrite each other stop it first.
  const names = new Set(plan.variants.map((v) => v.name));
  // a group's branch is a current proposal's, not a gone variant's
  const groups = new Map<string, Set<string>>();
  for (const v of plan.variants) {
    const group = groupOf(v, policyOf)?.name;
    if (group !== undefined) groups.set(v.downstream.url, (groups.get(v.downstream.url) ?? new Set()).add(group));
  }
  let removals: Removal[] = [];
  let drafts: RetiredDraft[] = [];
  const clear = new Map<string, string>();
  if (mode !== 'updates' && !scope) {
    const cacheRoot = ctx.cacheDir ?? defaultCacheDir(ctx.env);
    const known = { cacheRoot, remembered: input.scans, clear };
    const found = await pool(plan.downstreams, input.settings.concurrency, signal, async (d) => {
      const downstream = { repository: d.repository.name, url: d.url, branch: d.repository.branch, directory: d.repository.directory };
      try {
        const removed = await removalsOf(ctx, known, downstream, names, controlId);
        // a gone variant's proposal that was never merged: closed (one whose package is on the
        // base is a removal's). Only a proposal branch of no current variant needs a clone.
        const gone = [...(await ctx.heads(d.url)).keys()].some(
          (h) =>
            h.startsWith(branchPrefix) &&
            h !== downstream.branch &&
            !currentProposalOf(h.slice(branchPrefix.length), names) &&
            !groups.get(d.url)?.has(h.slice(branchPrefix.length)),
        );
        const retired = gone ? await findRetiredDrafts(ctx, await ctx.mirror(d.url), downstream, names, controlId, groups.get(d.url)) : [];
        const removing = new Set(removed.map((r) => r.variant));
        return { removals: removed, drafts: retired.filter((r) => !removing.has(r.variant)) };
      } catch (error) {
        return {
          removals: [],
          drafts: [],
          warning: `Repository "${d.repository.name}" (${d.url}): cannot look for packages of removed variants: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        };
      }
    });
    for (const f of found) {
      removals.push(...f.removals);
      drafts.push(...f.drafts);
      if (f.warning) warnings.push(f.warning);
    }
  }
  // The removal guard, decided on the whole plan (alike in every shard): this shard's part of it runs.
  const guard = removalGuard({
    removals,
    drafts,
    proposed: removals.length + drafts.length > maxRemovals ? await proposedRemovals(ctx, removals) : new Set(),
    max: maxRemovals,
    allowed: ticks.allowRemovals,
    mine: (variant) => inShard(variant, shard),
  });
  ({ removals, drafts } = guard);
  const { held } = guard;
  if (guard.warning) warnings.push(guard.warning);
  const collided = checkCollisions({ variants, updates, control, removals, branchPrefix, forge: ctx.forge, policyOf });
  removals = removals.filter((r) => !collided.has(r));
  // merged removals: no job meets them again (the package is gone from the base branch)
  let merged: MergedRemoval[] = [];
  if (mode !== 'updates' && !scope && !ctx.forge.tracksMerges) {
    const handled = new Set([...removals, ...held, ...drafts].map((r) => `${r.repository} ${branchPrefix}${r.variant}`));
    const downstreamUrls = new Set(plan.downstreams.map((d) => d.url));
    merged = await findMergedRemovals(ctx, downstreamUrls, handled, (v) => !names.has(v) && inShard(v, shard));
  }
  removals = retriedFirst(removals, (r) => jobKey(r.variant, removalLabel(r)), ticks);
  const jobs: PlannedJob[] = [
    ...variants.map((v) => ({ kind: 'variant' as const, variant: v.name, downstream: variantLabel(v), plan: v })),
    ...(control
      ? updates.map((u) => ({ kind: 'update' as const, variant: u.name, downstream: updateLabel(control!, u), plan: u, control: control! }))
      : []),
    ...removals.map((r) => ({ kind: 'removal' as const, variant: r.variant, downstream: removalLabel(r), removal: r })),
    ...drafts.map((d) => ({ kind: 'retire' as const, variant: d.variant, downstream: retiredLabel(d), draft: d })),
  ];
  const scans = { context: scanContextOf({ variants: names, control: controlId, version: ctx.version }), clear };
  return { scope, jobs, collided, merged, guard: { held, message: guard.message, allowedBy: guard.allowedBy }, warnings, scans };
}

/**
 * The removals of one downstream: from the last run's answer when the branch is at the commit it
 * was found at (nothing cloned): the cache's, else the dashboard's "none here"; else from a
 * mirror, the answer kept for the next run. Each "none here" is noted in `known.clear`.
 */
async function removalsOf(
  ctx: JobContext,
  known: { cacheRoot: string; remembered: RemovalScanMemory | undefined; clear: Map<string, string> },
  downstream: { repository: string; url: string; branch: string; directory: string },
  variants: ReadonlySet<string>,
  control: string | undefined,
): Promise<Removal[]> {
  const { cacheRoot } = known;
  const commit = (await ctx.heads(downstream.url)).get(downstream.branch);
  if (commit === undefined) return []; // no branch, no package
  const key = { ...downstream, variants, control, version: ctx.version };
  const noted = (at: string, removals: Removal[]): Removal[] => {
    if (removals.length === 0) known.clear.set(scanPlaceOf(key), at.slice(0, SCAN_HEX));
    return removals;
  };
  const stored = await storedRemovals(cacheRoot, { ...key, commit });
  if (stored) return noted(commit, stored);
  if (clearInMemory(known.remembered, { ...key, commit })) {
    await storeRemovals(cacheRoot, { ...key, commit }, []);
    return noted(commit, []);
  }
  const mirror = await ctx.mirror(downstream.url);
  const removals = await findRemovals(mirror, downstream, variants, control);
  const scanned = mirror.heads.get(downstream.branch);
  if (scanned === undefined) return removals;
  await storeRemovals(cacheRoot, { ...key, commit: scanned }, removals);
  return noted(scanned, removals);
}

/**
 * Proposals that would share a branch, a forge record or a package directory. Between variants
 * and package updates (the control resources) it is a plan error: nothing runs. A removal is read
 * from a downstream's content, so one that collides fails alone (the map: why), not the run.
 */
function checkCollisions(input: {
  variants: readonly VariantPlan[];
  updates: readonly UpdatePlan[];
  control: ControlRepository | undefined;
  removals: readonly Removal[];
  branchPrefix: string;
  forge: Forge;
  policyOf: PolicyOf;
}): Map<Removal, string> {
  const { branchPrefix, forge } = input;
  const planned: PlannedProposal[] = [
    ...input.variants.map((v) => {
      const group = groupOf(v, input.policyOf);
      const { repository, url, branch } = v.downstream;
      return {
        label: `variant "${v.name}"${group ? ` (in proposal ${group.name})` : ''}`,
        target: group
          ? groupTarget({ name: group.name, repository: repository.name, url, base: branch }, branchPrefix)
          : variantTarget(v, branchPrefix),
        directory: v.downstream.directory,
        ...(group ? { group: group.key } : {}),
      };
    }),
    ...(input.control
      ? input.updates.map((u) => ({
          label: `package update "${u.name}" (${u.directory || '.'})`,
          target: updateTarget(u, input.control!, branchPrefix),
          directory: u.directory,
        }))
      : []),
  ];
  const recordOf = forge.recordOf
    ? (t: ProposalTarget) => {
        try {
          return forge.recordOf!(t);
        } catch {
          return undefined; // a name no record can have: that job fails on its own
        }
      }
    : undefined;
  const planError = findCollisions(planned, recordOf);
  if (planError.length > 0) throw new RunError('name-collision', planError.map(describeCollision).join('\n'));
  const byRemoval = new Map<PlannedProposal, Removal>();
  for (const r of input.removals) {
    byRemoval.set(
      {
        label: `the removal of package "${r.directory || '.'}" (variant "${r.variant}" is gone)`,
        target: removalTarget(r, branchPrefix),
        directory: r.directory,
      },
      r,
    );
  }
  const out = new Map<Removal, string>();
  for (const c of findCollisions([...planned, ...byRemoval.keys()], recordOf)) {
    const r = byRemoval.get(c.second);
    if (r && !out.has(r)) out.set(r, `${describeCollision(c)}: left alone`);
  }
  return out;
}

/** A variant's downstream as its result names it: `<Repository>/<package>`. */
export function variantLabel(v: VariantPlan): string {
  return `${v.downstream.repository.name}/${v.downstream.package}`;
}

/** A package update's downstream as its result names it: `<control repository>/<directory>`. */
function updateLabel(control: ControlRepository, u: UpdatePlan): string {
  return `${control.name}/${u.directory || '.'}`;
}

/** The jobs a person asked to retry (the dashboard's ticks) first, the others after in their order. */
function retriedFirst<T>(jobs: readonly T[], keyOf: (job: T) => string, ticks: DashboardTicks): T[] {
  if (ticks.retry.size === 0) return [...jobs];
  return [...jobs.filter((j) => ticks.retry.has(keyOf(j))), ...jobs.filter((j) => !ticks.retry.has(keyOf(j)))];
}
