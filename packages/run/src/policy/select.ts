import { ControlError, describeSource, type ControlIssue } from '../control/control-source.js';
import type { VariantPlan } from '../plan/variant-plan.js';
import { globMatchAny } from './glob.js';
import type { PolicySelector, UpdatePolicy } from './policy.js';
import { waveOf } from './waves.js';

/**
 * Which UpdatePolicy governs a variant: the one whose selector matches it. Every criterion a
 * selector gives must match (an empty selector matches every variant); at most one policy may
 * match a variant, checked once for the whole plan by `checkPolicies`.
 */

export function selects(selector: PolicySelector, variant: VariantPlan): boolean {
  const { packageVariantSets, packageVariants, upstream, downstreamLabels } = selector;
  if (packageVariantSets && (variant.set === undefined || !packageVariantSets.includes(variant.set))) return false;
  if (packageVariants && !globMatchAny(packageVariants, variant.name)) return false;
  if (upstream) {
    if (variant.upstream.repository.name !== upstream.repo) return false;
    if (upstream.package !== undefined && variant.upstream.package !== upstream.package) return false;
  }
  if (downstreamLabels) {
    const labels = variant.downstream.repository.labels;
    for (const [k, v] of Object.entries(downstreamLabels)) if (labels[k] !== v) return false;
  }
  return true;
}

/** The policy that governs `variant`, or undefined (the variant behaves as if there were no policies). */
export function policyOf(variant: VariantPlan, policies: readonly UpdatePolicy[]): UpdatePolicy | undefined {
  if (policies.length === 0) return undefined;
  const found = policies.filter((p) => selects(p.selector, variant));
  if (found.length > 1) throw new ControlError([overlap(found[0]!, found[1]!, [variant.name])]);
  return found[0];
}

function overlap(first: UpdatePolicy, second: UpdatePolicy, variants: readonly string[]): ControlIssue {
  const shown = variants.slice(0, 3).map((v) => `"${v}"`);
  const more = variants.length > 3 ? ` and ${variants.length - 3} more` : '';
  return {
    source: second.source,
    field: 'spec.selector',
    message: `selects variant${variants.length > 1 ? 's' : ''} ${shown.join(', ')}${more}, which UpdatePolicy "${first.name}" (${describeSource(first.source)}) selects too: at most one policy governs a variant (narrow one of the selectors)`,
  };
}

/**
 * The plan's policies are consistent, or a ControlError with every problem: two policies selecting
 * one variant (one issue per pair of policies, naming both documents and the variants), a
 * downstream Repository whose wave label no governing policy lists. Decided on the whole plan, so
 * every shard agrees. Without policies it costs nothing.
 */
export function checkPolicies(
  plan: { readonly variants: readonly VariantPlan[] },
  policies: readonly UpdatePolicy[],
  /** The control files' texts (ControlConfig.texts), so that each problem names its line. */
  texts?: ReadonlyMap<string, string>,
): void {
  if (policies.length === 0) return;
  const issues: ControlIssue[] = [];
  const overlaps = new Map<string, { first: UpdatePolicy; second: UpdatePolicy; variants: string[] }>();
  for (const variant of plan.variants) {
    const found = policies.filter((p) => selects(p.selector, variant));
    for (let i = 1; i < found.length; i++) {
      const key = `${policies.indexOf(found[0]!)} ${policies.indexOf(found[i]!)}`;
      let o = overlaps.get(key);
      if (!o) overlaps.set(key, (o = { first: found[0]!, second: found[i]!, variants: [] }));
      o.variants.push(variant.name);
    }
    if (found.length !== 1) continue;
    try {
      waveOf(variant, found[0]!);
    } catch (error) {
      if (!(error instanceof ControlError)) throw error;
      issues.push(...error.issues);
    }
  }
  for (const o of overlaps.values()) issues.push(overlap(o.first, o.second, o.variants));
  if (issues.length > 0) throw new ControlError(issues, texts);
}
