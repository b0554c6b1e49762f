import { serverTokenWarnings } from './control/server-tokens.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Forge } from './forges/forge.js';
import { loadControl } from './control/control.js';
import { findControlIdentity, findControlRecord } from './control/ownership.js';
import { createJobContext, inRunDirectory, interrupted, openForge, type GitHubConnection } from './context.js';
import { dashboardRepositoryOption, readRunDashboard, writeRunDashboard } from './dashboard/dashboard-stage.js';
import type { DashboardOptions } from './dashboard/dashboard-run.js';
import type { Gate } from './gates/gate.js';
import { applyGates, GATES } from './gates/gates.js';
import type { Materialize } from './jobs/materialize.js';
import { runJobs, type RunProgress } from './jobs/run-jobs.js';
import { planJobs } from './plan/jobs-plan.js';
import { groupJobs } from './policy/groups.js';
import { planPolicies } from './policy/policy-plan.js';
import { withPolicies } from './policy/policy-jobs.js';
import { policyOf } from './policy/select.js';
import { planRun, type VariantPlan } from './plan/plan.js';
import type { Shard } from './plan/shard.js';
import type { UpstreamRef } from './preview/preview-scope.js';
import type { RunReport } from './report/result.js';
import { runReport } from './report/run-report.js';
import type { Author } from '@kdelta/git-source';
import { DEFAULT_BRANCH_PREFIX } from './settings/branch-prefix.js';
import {
  type CheckedSettings,
  DEFAULT_AUTHOR,
  DEFAULT_CONCURRENCY,
  normaliseSettings,
  overSettings,
  resolveSettings,
  type RunMode,
} from './settings/settings.js';
import { optionSettings } from './settings/settings-sources.js';

export const KDELTA_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

import { DEFAULT_CONFIG_DIR } from './control/control.js';
export { DEFAULT_CONFIG_DIR };
export { DEFAULT_AUTHOR, DEFAULT_BRANCH_PREFIX, DEFAULT_CONCURRENCY, type RunMode, type RunProgress };

export interface RunOptions {
  /** The control repository's work tree: relative paths are resolved against it. */
  readonly cwd: string;
  /**
   * The settings as a door (the CLI's flags, the Action's inputs) read and checked them: taken as
   * they are, over the loose options below, which a library caller may give instead (checked here
   * by the same rules).
   */
  readonly settings?: CheckedSettings | undefined;
  /** Config directory (default `.kdelta`). */
  readonly config?: string | undefined;
  /** A forge, or `local` (default): proposals as files under `proposalsDir`. */
  readonly forge?: Forge | 'local' | 'github' | undefined;
  /** The github forge's pull request options and connection (used when forge is 'github'). */
  readonly github?: GitHubConnection | undefined;
  /** Proposal branches are `<branchPrefix><variant>` (default `kdelta/`). */
  readonly branchPrefix?: string | undefined;
  /**
   * Content-creating API requests this run may make (github forge; default 400, GitHub's ~500 an
   * hour less a margin). When spent, the variants left are reported as 'deferred'.
   */
  readonly budget?: number | undefined;
  /**
   * Removals this run may newly make for gone variants (default 5): packages to delete or orphan
   * and open proposals to close, counted on the whole plan (alike in every shard), removal
   * proposals already open left out (plan/removal-guard.ts). When more are due it makes none of
   * them, does every other job, and reports each as failed (`removals-held`).
   */
  readonly maxRemovals?: number | undefined;
  /** The local forge's directory (default `<config>/proposals`). */
  readonly proposalsDir?: string | undefined;
  readonly mode?: RunMode | undefined;
  /** Compute everything, write nothing (no push, no proposal). */
  readonly dryRun?: boolean | undefined;
  /**
   * A preview of an upstream ref (preview.ts): only the variants of that upstream run, pinned to
   * the ref's commit; no package update or removal is looked for. Use with `dryRun`.
   */
  readonly upstreamRef?: UpstreamRef | undefined;
  readonly shard?: Shard | string | undefined;
  readonly concurrency?: number | undefined;
  /** Gets or updates a package (default: package-update'''s get and 3-way update). */
  readonly materialize?: Materialize | undefined;
  /** Render the Kptfile pipeline after the mutations (default true). */
  readonly render?: boolean | undefined;
  /** Let the pipelines' `exec:` functions run (default false: such a render fails, and is reported). */
  readonly allowExec?: boolean | undefined;
  /**
   * The container images the pipelines may run (patterns, see fn-render's `imageAllowed`; default:
   * kpt's function catalogues). A preview of an upstream ref (`upstreamRef`) runs none unless given.
   */
  readonly allowedImages?: readonly string[] | undefined;
  /**
   * Let package content (a nested Kptfile) name upstream repositories on this machine (default:
   * `KDELTA_ALLOW_LOCAL_UPSTREAMS=1` in `env`, else refused: their files would be pushed).
   */
  readonly allowLocalUpstreams?: boolean | undefined;
  /** Whole hosts that get the run's credentials (the older form of `credentialRepositories`). */
  readonly credentialHosts?: readonly string[] | undefined;
  /**
   * More repositories that get the run's credentials when package content names them (besides
   * `KDELTA_CREDENTIAL_REPOSITORIES`): `owner/repo`, `owner/*`, `host/path/repo`, a URL, or a
   * whole host written as one (git-source's `parseRepositoryPattern`).
   */
  readonly credentialRepositories?: readonly string[] | undefined;
  readonly author?: Author | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** git-source's cache of upstream repositories. */
  readonly cacheDir?: string | undefined;
  readonly onProgress?: ((event: RunProgress) => void) | undefined;
  /**
   * Stops the run: no job starts after it, a running job stops at its next step, and the git
   * processes of this process are ended; the run then rejects with a RunError `interrupted`, its
   * work directories removed. Proposals already made stay as they are (each is whole).
   */
  readonly signal?: AbortSignal | undefined;
  /** Recorded in fingerprints and proposals (default: this package's version). */
  readonly version?: string | undefined;
  /**
   * The fleet dashboard (default: kept, except in a dry run): an issue of the control repository
   * on GitHub, `<proposalsDir>/dashboard.md` on the local forge; `false`: none.
   */
  readonly dashboard?: DashboardOptions | false | undefined;
  /** The gates every planned job passes before it proposes (default {@link GATES}, none today). */
  readonly gates?: readonly Gate[] | undefined;
  /** The run's clock, which the gates read (default: the system's). */
  readonly now?: (() => Date) | undefined;
}

/**
 * `kdelta run`: control resources → variants → one job each → proposals. Bad control resources
 * throw a ControlError before anything is read from or written to a repository; after that,
 * every variant ends as a result value and the run itself does not throw for one of them.
 *
 * The stages, in order: settings → control → plan → gates → jobs (each through propose) →
 * dashboard → report. Each is a function of its folder; this is only their order.
 */
export async function run(options: RunOptions): Promise<RunReport> {
  const { cwd, signal } = options;
  const config = options.config ?? DEFAULT_CONFIG_DIR;
  // settings: a bad option stops the run before anything is read
  const optionValues = normaliseSettings(
    optionSettings({ ...options, forge: typeof options.forge === 'string' ? options.forge : undefined }),
  );
  const dashboardRepository = dashboardRepositoryOption(options.dashboard);
  // control: the control resources, the variants they make, and the settings they add
  const control = await loadControl({ dir: resolve(cwd, config), display: config });
  const plan = planRun(control, { cwd });
  // a door's checked settings over the loose options; then the one precedence over RunSettings (settings.ts)
  const door = options.settings ? overSettings(options.settings, optionValues) : optionValues;
  const settings = resolveSettings(door, control.settings, { config });
  const env = options.env ?? process.env;
  const forgeGiven = typeof options.forge === 'object' ? options.forge : undefined;
  const { forge, budget } = await openForge({ forge: forgeGiven, settings, cwd, github: options.github, env });
  const controlId = await findControlIdentity(cwd, resolve(cwd, config));
  const controlRecord = await findControlRecord(cwd);
  return inRunDirectory(signal, async (runDir) => {
    // dashboard, first half: its ticks decide what this run does first
    const keepDashboard = !settings.dryRun && !options.upstreamRef && options.dashboard !== false;
    const { mode, shard } = settings;
    const dashboard = await readRunDashboard({ keep: keepDashboard, forge, budget, repository: dashboardRepository, cwd, mode, shard });
    const { ticks } = dashboard;
    const version = options.version ?? KDELTA_VERSION;
    const { materialize, render, cacheDir } = options;
    const previewing = options.upstreamRef !== undefined;
    const shared = { cwd, control, settings, forge, budget, env, controlId, controlRecord, ticks, runDir, version, previewing };
    const ctx = createJobContext({ ...shared, materialize, render, cacheDir, signal });
    // plan: every job of the run, before the first push
    const governing = (variant: VariantPlan) => policyOf(variant, control.policies);
    const planned = await planJobs({
      plan,
      ctx,
      settings,
      ticks,
      cwd,
      upstreamRef: options.upstreamRef,
      policyOf: governing,
      scans: dashboard.scans,
    });
    // the update policies, decided on the whole plan; a governed variant's job proposes what its
    // policy chose, and the variants of a policy that groups are proposed together
    const now = options.now?.() ?? new Date();
    const policies = await planPolicies({
      plan,
      policies: control.policies,
      ctx,
      now,
      concurrency: settings.concurrency,
      hand: ticks.rollouts,
    });
    // a preview proposes the upstream ref it is given, whatever a policy would choose
    const pinned = previewing ? planned.jobs : withPolicies(planned.jobs, policies, new Set(plan.variants.map((v) => v.name)));
    const jobs = groupJobs(pinned, governing);
    // gates: which of them propose now. A preview of an upstream ref shows what the ref would do to
    // every downstream, each wave included (the gates decide when a proposal is made, not what it
    // holds); a preview of the control resources shows what the next run would do, holds included.
    const gated = await applyGates(previewing ? [] : (options.gates ?? GATES), {
      now,
      dryRun: settings.dryRun,
      settings,
      ticks,
      jobs,
      plan,
      policies,
      forge,
    });
    // jobs: each through the propose protocol
    const results = await runJobs(planned, gated, ctx, { concurrency: settings.concurrency, onProgress: options.onProgress });
    // an aborted run reports nothing: the jobs it stopped would read as failures of their own
    if (signal?.aborted) throw interrupted(signal);
    // dashboard, second half: the results, once
    const written = await writeRunDashboard(dashboard, results, gated.jobs, planned.guard.allowedBy, policies.rollouts, planned.scans);
    // report
    const warnings = [
      ...plan.warnings,
      ...serverTokenWarnings(ctx.trust),
      ...dashboard.warnings,
      ...planned.warnings,
      ...policies.warnings,
      ...written.warnings,
    ];
    return runReport({ version, settings, results, warnings, budget, dashboard: written.report, scope: planned.scope, policies });
  });
}
