import type { PlannedJob } from '../plan/jobs-plan.js';
import { policyAutoMerges } from './policy-plan.js';
import type { PolicyPlan, VariantPolicy } from './policy.js';
import { MAJOR_SUFFIX, type VariantPin } from './variant-pin.js';

/**
 * The policy plan carried into the jobs: a governed variant's job proposes the revision its policy
 * chose (not the latest release), and a major release its policy proposes on its own gets a job
 * of its own, on branch `<prefix><variant>-major`. A variant no policy governs keeps its job as it
 * is (nothing added, nothing read).
 */

/** The pin of a variant's job from its policy's decision. */
export function pinOf(decision: VariantPolicy): VariantPin {
  if (decision.downstream && 'invalid' in decision.downstream)
    return { kind: 'fail', code: 'downstream-policy-invalid', message: decision.downstream.invalid };
  const { target, current } = decision;
  if (target) return { kind: 'revision', ref: target.ref, commit: target.commit, reason: target.reason, autoMerge: decision.autoMerge };
  // nothing new is due: the job does what it does for an unchanged upstream (the variant's
  // mutations, a render), at the revision the base has
  if (current?.commit !== undefined) {
    const ref = current.ref ?? current.commit;
    const why = decision.why ? `: ${decision.why}` : '';
    return {
      kind: 'revision',
      ref,
      commit: current.commit,
      reason: `stays at ${ref} (policy ${decision.policy.name})${why}`,
      autoMerge: false,
    };
  }
  return { kind: 'wait', why: `policy ${decision.policy.name}: ${decision.why ?? 'no revision may be proposed yet'}` };
}

/**
 * The run's jobs with the policies' word: each governed variant's job pinned, and after it the job
 * of its separate major release when one is due. A variant named like another's major branch
 * (`web-major` beside `web`) makes that major job fail alone, with why.
 */
export function withPolicies(jobs: readonly PlannedJob[], policies: PolicyPlan, variants: ReadonlySet<string>): PlannedJob[] {
  if (policies.byVariant.size === 0) return [...jobs];
  const out: PlannedJob[] = [];
  for (const job of jobs) {
    const decision = job.kind === 'variant' ? policies.byVariant.get(job.variant) : undefined;
    if (job.kind !== 'variant' || !decision) {
      out.push(job);
      continue;
    }
    const pin = pinOf(decision);
    out.push({ ...job, pin });
    const major = decision.major;
    if (!major || pin.kind === 'fail') continue;
    const taken = variants.has(`${job.variant}${MAJOR_SUFFIX}`);
    out.push({
      ...job,
      downstream: `${job.downstream} (major)`,
      major: true,
      pin: taken
        ? {
            kind: 'fail',
            code: 'name-collision',
            message: `the separate proposal of major release ${major.ref} would use branch "${job.variant}${MAJOR_SUFFIX}", which variant "${job.variant}${MAJOR_SUFFIX}" has: rename that variant, or set separateMajor: false in policy ${decision.policy.name}`,
          }
        : {
            kind: 'revision',
            ref: major.ref,
            commit: major.commit,
            reason: major.reason,
            autoMerge: policyAutoMerges(decision.policy, major, job.plan),
          },
    });
  }
  return out;
}
