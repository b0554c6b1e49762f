import { repositoryIdentity } from '@kdelta/git-source';
import type { ProposalTarget } from '../forges/forge.js';
import type { VariantPlan } from '../plan/variant-plan.js';
import type { UpdatePolicy } from './policy.js';

/**
 * What a group of variants is called and where its proposal goes (`group: repository` in an
 * UpdatePolicy): a leaf, so that the plan stage names groups without importing how jobs are grouped
 * (groups.ts).
 */

/** The policy that governs a variant, if any (at most one does). */
export type PolicyOf = (variant: VariantPlan) => UpdatePolicy | undefined;

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
export function groupTarget(
  group: { readonly name: string; readonly repository: string; readonly url: string; readonly base: string },
  branchPrefix: string,
): ProposalTarget {
  return { downstream: group.repository, repo: group.url, head: `${branchPrefix}${group.name}`, base: group.base };
}
