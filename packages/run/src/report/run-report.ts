import { hideCredentials } from '@kdelta/git-source';
import type { Budget } from '../forges/budget.js';
import type { UpstreamScope } from '../preview/preview-scope.js';
import type { ResolvedSettings } from '../settings/settings.js';
import type { PolicyPlan } from '../policy/policy.js';
import type { DashboardReport, RunReport, VariantResult } from './result.js';
import { rolloutReport } from './rollouts.js';

/** The report stage: what `run()` resolves to, from its results and what its stages said. */
export function runReport(input: {
  readonly version: string;
  readonly settings: Pick<ResolvedSettings, 'dryRun' | 'mode' | 'shard'>;
  readonly results: readonly VariantResult[];
  readonly warnings: readonly string[];
  readonly budget: Budget | undefined;
  readonly dashboard: DashboardReport | undefined;
  readonly scope: UpstreamScope | undefined;
  /** The update policies' decisions: each governed variant's wave, the fleet's rollouts. */
  readonly policies?: PolicyPlan | undefined;
}): RunReport {
  const { scope, policies } = input;
  const rollouts = policies?.rollouts ?? [];
  const results = policies && policies.byVariant.size > 0 ? input.results.map((r) => withWave(r, policies)) : input.results;
  return {
    version: input.version,
    dryRun: input.settings.dryRun,
    mode: input.settings.mode,
    shard: input.settings.shard,
    results,
    warnings: input.warnings.map((w) => hideCredentials(w)),
    failed: results.filter((r) => r.error !== undefined).length,
    ...(input.budget ? { budget: input.budget.report() } : {}),
    ...(input.dashboard ? { dashboard: input.dashboard } : {}),
    ...(rollouts.length > 0 ? { rollouts: rollouts.map(rolloutReport) } : {}),
    ...(scope ? { upstreamRef: { repository: scope.repository, url: scope.url, ref: scope.ref, commit: scope.commit } } : {}),
  };
}

/** A variant's result with its rollout wave (the preview groups by it), when a policy with waves governs it. */
function withWave(r: VariantResult, policies: PolicyPlan): VariantResult {
  const vp = policies.byVariant.get(r.variant);
  if (!vp?.wave || !vp.policy.rollout) return r;
  return { ...r, wave: { name: vp.wave.name, index: vp.wave.index } };
}
