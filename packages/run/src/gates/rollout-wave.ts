import type { Plan, VariantPlan } from '../plan/plan.js';
import { waveAllows } from '../policy/rollout.js';
import { PASS, type Gate, type GateDecision } from './gate.js';
import { governedBy } from './governed.js';

/**
 * Rollout waves: a governed variant's job proposes its revision only when the rollout reached its
 * wave (the wave before it merged, soaked and green, or advanced by hand), and never while the
 * rollout is halted. Decided on the whole plan's rollouts (policy/rollout.ts), alike in every
 * shard; a variant no rollout policy governs passes without a look at anything.
 */
export const rolloutWave: Gate = {
  name: 'rollout-wave',
  decide(job, { policies, plan }): GateDecision {
    // a job proposing several variants (a group) is held when any of them is
    for (const { variant, policy } of governedBy(job, policies)) {
      // what the job proposes anew: the policy's revision, or the separate major release; a job
      // that stays at what its base has proposes nothing new and is never held
      const revision = job.kind === 'variant' && job.major ? policy.major : policy.target;
      if (!policy.policy.rollout || !revision) continue;
      const v = variantsOf(plan).get(variant);
      if (!v) continue;
      const upstream = `${v.upstream.repository.name}/${v.upstream.package}`;
      const decision = waveAllows({ policy, upstream, revision, rollouts: policies.rollouts });
      if (!decision.pass) return decision;
    }
    return PASS;
  },
};

/** The plan's variants by name, made once per plan (the gate is asked once per job). */
const byPlan = new WeakMap<Plan, ReadonlyMap<string, VariantPlan>>();
function variantsOf(plan: Plan): ReadonlyMap<string, VariantPlan> {
  let map = byPlan.get(plan);
  if (!map) byPlan.set(plan, (map = new Map(plan.variants.map((v) => [v.name, v]))));
  return map;
}
