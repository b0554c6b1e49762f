import { repositoryIdentity } from '@kdelta/git-source';
import type { ProposalTarget } from '../forges/forge.js';
import type { PlannedJob } from '../plan/jobs-plan.js';
import type { VariantPlan } from '../plan/plan.js';
import type { UpdatePolicy } from './policy.js';

/**
 * Grouping (`group: repository` in an UpdatePolicy): the governed variants of one policy whose
 * downstream is one repository and base branch are proposed together, on one branch with one
 * proposal. Decided here, once, in the plan stage: which variants form a group, what the group is
 * called, which shard runs it. Pure: the policies come in as `policyOf`.
 */

/** The policy that governs a variant, if any (at most one does). */
export type PolicyOf = (variant: VariantPlan) => UpdatePolicy | undefined;

export type VariantJob = Extract<PlannedJob, { kind: 'variant' }>;

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
  readonly members: readonly VariantJob[];
}

export type GroupJob = Extract<PlannedJob, { kind: 'group' }>;

/** The name of a policy's group proposal in a repository: its branch is `<prefix>group-<policy>`. */
export function groupName(policy: string): string {
  return `group-${policy}`;
}

/** The group a variant is proposed in, when its policy groups by repository: its name and what makes it one. */
export function groupOf(variant: VariantPlan, policyOf: PolicyOf): { readonly name: string; readonly key: string } | undefined {
  const policy = policyOf(variant);
  if (policy?.group !== 'repository') return undefined;
  const name = groupName(policy.name);
  // two spellings of one URL are one repository
  return { name, key: `${name} ${repositoryIdentity(variant.downstream.url)} ${variant.downstream.branch}` };
}

/**
 * What decides a variant's shard: its group's key when it is grouped (every member of a group runs
 * in the shard that runs the group), else its name.
 */
export function shardKeyOf(variant: VariantPlan, policyOf: PolicyOf): string {
  return groupOf(variant, policyOf)?.key ?? variant.name;
}

/** Where a group's proposal goes: branch `<prefix>group-<policy>` of the repository, into its branch. */
export function groupTarget(group: Pick<ProposalGroup, 'name' | 'repository' | 'url' | 'base'>, branchPrefix: string): ProposalTarget {
  return { downstream: group.repository, repo: group.url, head: `${branchPrefix}${group.name}`, base: group.base };
}

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
