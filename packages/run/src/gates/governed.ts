import type { PlannedJob } from '../plan/jobs-plan.js';
import type { PolicyPlan, VariantPolicy } from '../policy/policy.js';

/**
 * The variants whose new proposal a job makes, each with its policy's decision, for the gates an
 * update policy drives: only what an `UpdatePolicy` governs is held. A removal, a retirement and
 * an update-mode job propose nothing new of a variant, so no policy holds them; a variant no policy
 * governs is left out at the cost of one map lookup.
 */
export function governedBy(job: PlannedJob, policies: PolicyPlan): readonly { readonly variant: string; readonly policy: VariantPolicy }[] {
  switch (job.kind) {
    case 'variant': {
      const policy = policies.byVariant.get(job.variant);
      return policy === undefined ? [] : [{ variant: job.variant, policy }];
    }
    // the gates are asked about each member of a group (gates.ts); here for completeness
    case 'group':
      return job.group.members.flatMap((m) => governedBy(m, policies));
    case 'update':
    case 'removal':
    case 'retire':
      return [];
    default:
      return job satisfies never;
  }
}
