import { waveAllows } from '../policy/rollout.js';
import { PASS, type Gate } from './gate.js';

/**
 * Rollout waves: a governed variant's job proposes its revision only when the rollout reached its
 * wave (the wave before it merged, soaked and green, or advanced by hand), and never while the
 * rollout is halted. Decided on the whole plan's rollouts (policy/rollout.ts), alike in every
 * shard; a variant no rollout policy governs passes without a look at anything.
 */
export const rolloutWave: Gate = {
  name: 'rollout-wave',
  decide(job, { policies }) {
    if (job.kind !== 'variant') return PASS;
    const policy = policies.byVariant.get(job.variant);
    // what the job proposes anew: the policy's revision, or the separate major release; a job that
    // stays at what its base has proposes nothing new and is never held
    const revision = job.major ? policy?.major : policy?.target;
    if (!policy?.policy.rollout || !revision) return PASS;
    const upstream = `${job.plan.upstream.repository.name}/${job.plan.upstream.package}`;
    const decision = waveAllows({ policy, upstream, revision, rollouts: policies.rollouts });
    return decision.pass ? PASS : decision;
  },
};
