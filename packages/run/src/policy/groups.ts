import type { PlannedJob, ProposalGroup } from '../plan/jobs-plan.js';
import { groupOf, type PolicyOf } from './group-names.js';

export type { ProposalGroup } from '../plan/jobs-plan.js';

/**
 * Grouping (`group: repository` in an UpdatePolicy): the governed variants of one policy whose
 * downstream is one repository and base branch are proposed together, on one branch with one
 * proposal. Decided here, once, in the plan stage: which variants form a group, what the group is
 * called, which shard runs it. Pure: the policies come in as `policyOf`.
 */

export type VariantJob = Extract<PlannedJob, { kind: 'variant' }>;

export type GroupJob = Extract<PlannedJob, { kind: 'group' }>;

/**
 * The jobs with the variant jobs of each group made one job of kind `group`, where its first
 * member was; every other job as it is. A variant no policy groups costs nothing here.
 */
export function groupJobs(jobs: readonly PlannedJob[], policyOf: PolicyOf): PlannedJob[] {
  const groups = new Map<string, { name: string; policy: string; members: VariantJob[] }>();
  const out: (PlannedJob | string)[] = [];
  for (const job of jobs) {
    // a major release its policy proposes on its own stays its own proposal
    const group = job.kind === 'variant' && !job.major ? groupOf(job.plan, policyOf) : undefined;
    if (job.kind !== 'variant' || group === undefined) {
      out.push(job);
      continue;
    }
    const found = groups.get(group.key);
    if (found) found.members.push(job);
    else {
      groups.set(group.key, { name: group.name, policy: policyOf(job.plan)!.name, members: [job] });
      out.push(group.key);
    }
  }
  return out.map((entry) => {
    if (typeof entry !== 'string') return entry;
    const { name, policy, members } = groups.get(entry)!;
    const first = members[0]!.plan.downstream;
    const group: ProposalGroup = {
      name,
      policy,
      repository: first.repository.name,
      url: first.url,
      base: first.branch,
      members: [...members].sort((a, b) => (a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : 0)),
    };
    return { kind: 'group' as const, variant: name, downstream: group.repository, group };
  });
}
