import type { Budget } from '../forges/budget.js';
import type { Forge } from '../forges/forge.js';
import { githubRepoOf } from '../forges/github/repo.js';
import { findControlRepository } from '../control/control-repository.js';
import { RunError } from '../errors.js';
import type { PlannedJob } from '../plan/jobs-plan.js';
import type { Shard } from '../plan/shard.js';
import type { RemovalScanMemory } from '../plan/scan-memory.js';
import type { DashboardReport, VariantResult } from '../report/result.js';
import type { RunMode } from '../settings/settings.js';
import type { RolloutStatus } from '../policy/policy.js';
import { rolloutReport } from '../report/rollouts.js';
import { jobKey, NO_TICKS, type DashboardTicks } from './dashboard.js';
import {
  dashboardRepositoryProblem,
  dashboardTarget,
  openDashboard,
  type DashboardOptions,
  type OpenedDashboard,
} from './dashboard-run.js';

/** The dashboard as the run holds it between its two edges: the ticks read, and what became of it so far. */
export interface RunDashboard {
  readonly ticks: DashboardTicks;
  readonly opened?: OpenedDashboard | undefined;
  /** The removal scans' answers it kept: only a dashboard kdelta keeps (its own issue on GitHub) is read. */
  readonly scans?: RemovalScanMemory | undefined;
  /** Not kept by this run, and why. */
  readonly skipped?: DashboardReport | undefined;
  readonly warnings: readonly string[];
}

/** `run()`'s `dashboard` option checked before anything is read: the repository it names, if any. */
export function dashboardRepositoryOption(option: DashboardOptions | false | undefined): string | undefined {
  const repository = option ? option.repository : undefined;
  const problem = repository !== undefined ? dashboardRepositoryProblem(repository) : undefined;
  if (problem) throw new RunError('invalid-option', `run option dashboard.repository: ${problem}`);
  return repository;
}

/** The dashboard stage's first half: its ticks are read once, before any job: they decide what this run does first. */
export async function readRunDashboard(input: {
  readonly keep: boolean;
  readonly forge: Forge;
  readonly budget: Budget | undefined;
  /** The dashboard's repository as given (`owner/name`), on GitHub. */
  readonly repository: string | undefined;
  readonly cwd: string;
  readonly mode: RunMode;
  readonly shard: Shard | undefined;
}): Promise<RunDashboard> {
  const { forge } = input;
  if (!input.keep) return { ticks: NO_TICKS, warnings: [] };
  const repository = forge.name === 'github' ? (input.repository ?? (await githubControlRepository(input.cwd, forge))) : undefined;
  if (forge.name === 'github' && repository === undefined) {
    return {
      ticks: NO_TICKS,
      skipped: {
        outcome: 'skipped',
        reason: 'the control repository on GitHub is not known: give it (--dashboard-repo owner/name; the Action gives GITHUB_REPOSITORY)',
        ticks: { retry: [], allowRemovals: [], repropose: [] },
      },
      warnings: [],
    };
  }
  const opened = await openDashboard(forge, dashboardTarget(repository, input.mode, input.shard), input.budget);
  if ('opened' in opened) return { ticks: opened.opened.ticks, opened: opened.opened, scans: opened.opened.scans, warnings: [] };
  return { ticks: NO_TICKS, skipped: opened.skipped, warnings: opened.warning ? [opened.warning] : [] };
}

/**
 * The dashboard stage's second half, after the last job: the results written once, with the ticks
 * the run acted on (retries of the jobs that ran, the removal set it let through, the declined
 * proposals proposed again).
 */
export async function writeRunDashboard(
  dashboard: RunDashboard,
  results: readonly VariantResult[],
  ran: readonly PlannedJob[],
  allowedRemovals: string | undefined,
  /** The fleet's rollouts (policies/): its "Rollouts" section. */
  rollouts: readonly RolloutStatus[] = [],
  /** The downstreams the run's removal scan knows have none (each shard's run scans them all). */
  scans?: RemovalScanMemory,
): Promise<{ report?: DashboardReport | undefined; warnings: readonly string[] }> {
  if (!dashboard.opened) return { report: dashboard.skipped, warnings: [] };
  const { ticks } = dashboard;
  // a group's members are retried (and ticked) one by one
  const retried = ran.flatMap((j) =>
    j.kind === 'retire' ? [] : (j.kind === 'group' ? j.group.members : [j]).map((m) => jobKey(m.variant, m.downstream)),
  );
  // a declined proposal's tick acts in its job (propose): known once the jobs ran
  const reproposed = [...ticks.repropose].filter((url) =>
    results.some((r) => r.reproposed === url || (r.proposal?.url === url && r.action !== 'declined')),
  );
  const written = await dashboard.opened.write(
    results,
    {
      retry: retried.filter((k) => ticks.retry.has(k)),
      allowRemovals: allowedRemovals !== undefined ? [allowedRemovals] : [],
      repropose: reproposed,
    },
    rollouts.map(rolloutReport),
    scans,
  );
  return { report: written.report, warnings: written.warning ? [written.warning] : [] };
}

/** The control repository as `owner/name` when its `origin` remote is on the forge's server. */
export async function githubControlRepository(cwd: string, forge: Forge): Promise<string | undefined> {
  const found = await findControlRepository(cwd);
  if (!found.ok || forge.serverUrl === undefined) return undefined;
  const repo = githubRepoOf(found.value.url, forge.serverUrl);
  return repo.ok ? `${repo.value.owner}/${repo.value.repo}` : undefined;
}
