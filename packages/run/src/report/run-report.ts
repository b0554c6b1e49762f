import { hideCredentials } from '@kdelta/git-source';
import type { Budget } from '../forges/budget.js';
import type { UpstreamScope } from '../preview/preview-scope.js';
import type { ResolvedSettings } from '../settings/settings.js';
import type { RolloutStatus } from '../policy/policy.js';
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
  /** The fleet's rollouts (policies/), alike in every shard. */
  readonly rollouts?: readonly RolloutStatus[] | undefined;
}): RunReport {
  const { results, scope } = input;
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
    ...(input.rollouts && input.rollouts.length > 0 ? { rollouts: input.rollouts.map(rolloutReport) } : {}),
    ...(scope ? { upstreamRef: { repository: scope.repository, url: scope.url, ref: scope.ref, commit: scope.commit } } : {}),
  };
}
