import { defaultCacheDir, hideCredentials, listReleases, type RemoteRef } from '@kdelta/git-source';
import type { JobContext } from '../context.js';
import { pool } from '../pool.js';
import { resolveUpstream, type Plan, type VariantPlan } from '../plan/plan.js';
import { readDownstream, type DownstreamRead } from './downstream-state.js';
import { DOWNSTREAM_POLICY_MAX_BYTES, parseDownstreamPolicy } from './downstream-policy.js';
import { globMatch } from './glob.js';
import {
  DOWNSTREAM_POLICY_FILE,
  NO_POLICIES,
  type DownstreamPolicy,
  type PolicyPlan,
  type PolicyRevision,
  type UpdatePolicy,
  type VariantPolicy,
} from './policy.js';
import { chooseRevisions, releaseCandidates, type RevisionInput } from './revisions.js';
import { policyOf } from './select.js';
import { tagDates } from './tag-dates.js';
import { waveOf } from './waves.js';
import { rolloutSignalReads, rolloutStatuses, type RolloutHand } from './rollout.js';
import { readRolloutSignals } from './rollout-signals.js';

/**
 * The plan stage of the update policies: per governed variant its policy, wave, the team's
 * narrowing, what its downstream's base has, the revision it may be proposed (or why none), and
 * whether the policy lets it merge by itself. Decided on the whole plan (every variant, whichever
 * shard runs it), so that every shard decides alike; read only for governed variants: a fleet
 * without UpdatePolicies, or a variant none selects, costs nothing (no read, no request).
 */

export interface PolicyPlanInput {
  readonly plan: Plan;
  readonly policies: readonly UpdatePolicy[];
  /** The run's refs, heads and mirrors (one `ls-remote` per repository and run, shared with the jobs). */
  readonly ctx: Pick<JobContext, 'upstreamRefs' | 'heads' | 'mirror' | 'version' | 'cacheDir' | 'env' | 'signal' | 'forge'>;
  readonly now: Date;
  /** The rollouts a person halted or advanced on the dashboard (its ticks, and what it kept). */
  readonly hand?: RolloutHand | undefined;
  readonly concurrency: number;
}

/** The file of a team's narrowing as messages name it: `<Repository name>:.kdelta/downstream-policy.yaml`. */
export function teamFileOf(repository: string): string {
  return `${repository}:${DOWNSTREAM_POLICY_FILE}`;
}

export async function planPolicies(input: PolicyPlanInput): Promise<PolicyPlan> {
  const { plan, policies, ctx, now } = input;
  if (policies.length === 0) return NO_POLICIES;
  const governed = plan.variants.flatMap((v) => {
    const policy = policyOf(v, policies);
    return policy ? [{ variant: v, policy }] : [];
  });
  if (governed.length === 0) return NO_POLICIES;
  const warnings: string[] = [];
  const cacheRoot = ctx.cacheDir ?? defaultCacheDir(ctx.env);

  // what each downstream's base holds: one read per repository and branch, kept by commit
  const byDownstream = new Map<string, { url: string; branch: string; repository: string; directories: Set<string>; mergedAt: boolean }>();
  for (const { variant: v, policy } of governed) {
    const key = `${v.downstream.url}\0${v.downstream.branch}`;
    const d = byDownstream.get(key) ?? {
      url: v.downstream.url,
      branch: v.downstream.branch,
      repository: v.downstream.repository.name,
      directories: new Set<string>(),
      mergedAt: false,
    };
    d.directories.add(v.downstream.directory);
    // a soak counts from the merge: found only where a rollout needs it
    if (policy.rollout) d.mergedAt = true;
    byDownstream.set(key, d);
  }
  const reads = new Map<string, DownstreamRead | { readonly unreadable: string } | undefined>();
  await pool([...byDownstream], input.concurrency, ctx.signal, async ([key, d]) => {
    try {
      const commit = (await ctx.heads(d.url)).get(d.branch);
      if (commit === undefined) return void reads.set(key, undefined); // no branch yet: no package, no team file
      const read = await readDownstream({
        url: d.url,
        branch: d.branch,
        commit,
        directories: [...d.directories].sort(),
        mergedAt: d.mergedAt,
        version: ctx.version,
        cacheRoot,
        mirror: () => ctx.mirror(d.url),
        env: ctx.env,
      });
      reads.set(key, read);
    } catch (error) {
      const why = `Repository "${d.repository}" (${hideCredentials(d.url)}): cannot read what its branch "${d.branch}" holds for the update policies: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
      warnings.push(why);
      reads.set(key, { unreadable: why });
    }
  });

  // the team's file, parsed once per repository and policy (whether it narrows depends on the fleet's)
  const teams = new Map<string, DownstreamPolicy | { readonly invalid: string } | undefined>();
  const teamOf = (
    v: VariantPlan,
    policy: UpdatePolicy,
    read: DownstreamRead,
  ): DownstreamPolicy | { readonly invalid: string } | undefined => {
    const key = `${v.downstream.url}\0${v.downstream.branch}\0${policy.name}`;
    if (!teams.has(key)) teams.set(key, parseTeam(read, v.downstream.repository.name, policy));
    const team = teams.get(key);
    // the packages the team speaks for (default: every package of its repository)
    if (team && !('invalid' in team) && team.packages && !team.packages.some((p) => globMatch(p, v.downstream.package))) return undefined;
    return team;
  };

  const byVariant = new Map<string, VariantPolicy>();
  await pool(governed, input.concurrency, ctx.signal, async ({ variant: v, policy }) => {
    const read = reads.get(`${v.downstream.url}\0${v.downstream.branch}`);
    const unreadable = read !== undefined && 'unreadable' in read ? read.unreadable : undefined;
    const state = read !== undefined && !('unreadable' in read) ? read : undefined;
    const downstream = state ? teamOf(v, policy, state) : undefined;
    const team = downstream && !('invalid' in downstream) ? downstream : undefined;
    const wave = waveOf(v, policy, team);
    const current = state?.states.get(v.downstream.directory);
    const base = {
      policy,
      ...(wave ? { wave: { name: wave.name, index: wave.index } } : {}),
      ...(downstream ? { downstream } : {}),
      ...(current ? { current } : {}),
    };
    const invalid = downstream && 'invalid' in downstream ? downstream.invalid : wave?.invalid;
    if (invalid !== undefined) {
      // a team's file that widens (or cannot be read) stops what is new for its variants: the team fixes it
      byVariant.set(v.name, { ...base, downstream: { invalid }, why: invalid, autoMerge: false });
      return;
    }
    if (unreadable !== undefined) {
      byVariant.set(v.name, { ...base, why: unreadable, autoMerge: false });
      return;
    }
    let refs: readonly RemoteRef[];
    try {
      refs = await ctx.upstreamRefs(v.upstream.url);
    } catch (error) {
      // the job asks again and fails with the message of its own
      byVariant.set(v.name, { ...base, why: error instanceof Error ? error.message.split('\n')[0] : String(error), autoMerge: false });
      return;
    }
    const choice = await chooseFor(v, policy, team, current, refs, { ctx, cacheRoot, now });
    byVariant.set(v.name, {
      ...base,
      ...(choice.target ? { target: choice.target } : {}),
      ...(choice.major ? { major: choice.major } : {}),
      ...(choice.why ? { why: choice.why } : {}),
      autoMerge: choice.target ? policyAutoMerges(policy, choice.target, v) : false,
    });
  });
  // the rollouts: a health signal is read only where a rollout waits on it
  const rollout = { byVariant, variants: plan.variants, now };
  const read = await readRolloutSignals(ctx.forge, rolloutSignalReads(rollout));
  const rollouts = rolloutStatuses({ ...rollout, signals: read.signals, hand: input.hand });
  return { byVariant, rollouts, warnings: [...warnings, ...read.warnings] };
}

/** Whether the policy lets a proposal of `revision` merge without a person (the review gate still decides on its content). */
export function policyAutoMerges(policy: UpdatePolicy, revision: PolicyRevision, variant: VariantPlan): boolean {
  const auto = policy.autoMerge;
  if (!auto || revision.updateType === undefined || !auto.updateTypes.has(revision.updateType)) return false;
  return auto.upstreams === undefined || auto.upstreams.includes(variant.upstream.repository.name);
}

/**
 * The revision for one variant. One following releases (no revision, or highest-semver) gets the
 * policy's choice among the package's releases; one pinned to a revision keeps it (the policy's
 * schedule, freezes, limits and waves still apply to it).
 */
async function chooseFor(
  v: VariantPlan,
  policy: UpdatePolicy,
  team: DownstreamPolicy | undefined,
  current: RevisionInput['current'],
  refs: readonly RemoteRef[],
  run: { ctx: PolicyPlanInput['ctx']; cacheRoot: string; now: Date },
): Promise<{ target?: PolicyRevision; major?: PolicyRevision; why?: string }> {
  const follows = v.upstream.policy === 'highest-semver' || v.upstream.revision === undefined;
  if (!follows) {
    const resolved = resolveUpstream(v, refs);
    if (!resolved.ok) return { why: resolved.error };
    return { target: { ref: resolved.value.ref, commit: resolved.value.commit, reason: resolved.value.reason } };
  }
  const input: RevisionInput = {
    releases: listReleases(refs, { packagePath: v.upstream.package, prereleases: v.upstream.prereleases }),
    current,
    policy,
    team,
    package: `${v.upstream.repository.name}/${v.upstream.package || '.'}`,
    now: run.now,
  };
  const age = Math.max(policy.minimumReleaseAgeMs, team?.minimumReleaseAgeMs ?? 0);
  // the tags' dates are read (from the upstream's mirror) only when a release waits on its age
  const candidates = age > 0 ? releaseCandidates(input) : [];
  if (candidates.length === 0) return chooseRevisions(input);
  const dates = await tagDates({
    url: v.upstream.url,
    tags: candidates.map((r) => ({ tag: r.tag, commit: r.commit })),
    cacheRoot: run.cacheRoot,
    mirror: () => run.ctx.mirror(v.upstream.url),
    env: run.ctx.env,
  });
  return chooseRevisions({ ...input, dates });
}

function parseTeam(
  read: DownstreamRead,
  repository: string,
  policy: UpdatePolicy,
): DownstreamPolicy | { readonly invalid: string } | undefined {
  const file = teamFileOf(repository);
  if (!read.team) return undefined;
  if ('tooLarge' in read.team)
    return {
      invalid: `${file}: refused: ${read.team.tooLarge} bytes, more than ${DOWNSTREAM_POLICY_MAX_BYTES} (a team's policy is a few lines)`,
    };
  const parsed = parseDownstreamPolicy(read.team.text, { file, fleet: policy });
  return parsed.ok ? parsed.value : { invalid: parsed.errors.join('; ') };
}
