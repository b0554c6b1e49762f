import type { Budget } from '../forges/budget.js';
import type { DashboardRecord, DashboardTarget, Forge } from '../forges/forge.js';
import {
  dashboardEntries,
  NO_TICKS,
  parseDashboard,
  renderDashboard,
  type DashboardTicks,
  type FieldMemory,
  type ParsedDashboard,
} from './dashboard.js';
import { message, type DashboardReport, type VariantResult } from '../report/result.js';
import type { RolloutReport } from '../report/rollouts.js';

export type { DashboardReport };
import type { RunMode } from '../settings/settings.js';
import type { Shard } from '../plan/shard.js';
import type { RemovalScanMemory } from '../plan/scan-memory.js';

/**
 * A run's dashboard, at the edges of the run: read once before the first job (its ticks decide
 * what the run does), written once after the last, only when its text changed and only when
 * nobody changed it since it was read (a tick that arrived meanwhile stays for the next run).
 */

/** `run()`'s option: where the dashboard lives, or `false` for none. */
export interface DashboardOptions {
  /**
   * The control repository on GitHub, `owner/name` (the Action gives GITHUB_REPOSITORY; default:
   * the control work tree's `origin` remote when it is on the forge's server). The local forge
   * keeps its dashboard beside its records and ignores it.
   */
  readonly repository?: string | undefined;
}

const SLUG = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\/[A-Za-z0-9._-]+$/;

/** What is wrong with a dashboard repository as given, or undefined. */
export function dashboardRepositoryProblem(repository: string): string | undefined {
  return SLUG.test(repository) && !/\/\.\.?$/.test(repository)
    ? undefined
    : `the dashboard's repository must be owner/name, as GitHub names it (got ${JSON.stringify(repository)})`;
}

/** One dashboard per part of the fleet a run sees: a shard or a mode sees only some of it. */
export function dashboardTarget(repository: string | undefined, mode: RunMode, shard: Shard | undefined): DashboardTarget {
  const parts = [...(mode === 'both' ? [] : [mode]), ...(shard ? [`shard ${shard.index}/${shard.count}`] : [])];
  const name = ['dashboard', ...(mode === 'both' ? [] : [mode]), ...(shard ? [`shard-${shard.index}-of-${shard.count}`] : [])].join('-');
  return {
    repository,
    name,
    title: `kdelta dashboard${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`,
    marker: `<!-- kdelta-dashboard: ${name} -->`,
  };
}

export interface OpenedDashboard {
  readonly ticks: DashboardTicks;
  /** The removal scans' answers it kept (read when the run's cache has none). */
  readonly scans?: RemovalScanMemory | undefined;
  /**
   * Write the run's results (after every job) and the fleet's rollouts, only when the text changed
   * and nobody changed it since it was read.
   */
  write(
    results: readonly VariantResult[],
    acted: DashboardReport['ticks'],
    rollouts?: readonly RolloutReport[],
    scans?: RemovalScanMemory,
  ): Promise<{ report: DashboardReport; warning?: string }>;
}

/** How a person ticks a box in the local forge's file. */
const LOCAL_TICK = 'In this file, tick a box by writing `- [x]` for `- [ ]`.';

/** Read the dashboard before the run's jobs; a forge that keeps none, or one that cannot be read, gives no ticks. */
export async function openDashboard(
  forge: Forge,
  target: DashboardTarget,
  budget: Budget | undefined,
): Promise<{ opened: OpenedDashboard } | { skipped: DashboardReport; warning?: string }> {
  const none = { retry: [], allowRemovals: [], repropose: [] };
  if (!forge.readDashboard || !forge.writeDashboard) {
    return { skipped: { outcome: 'skipped', reason: `the ${forge.name} forge keeps no dashboard`, ticks: none } };
  }
  const read = forge.readDashboard.bind(forge);
  const writeTo = forge.writeDashboard.bind(forge);
  let seen: DashboardRecord | undefined;
  try {
    seen = await read(target);
  } catch (error) {
    const reason = `cannot read the dashboard: ${message(error)}`;
    return {
      skipped: { outcome: 'skipped', reason, ticks: none },
      warning: `${reason}; the run goes on without it (it needs issues: write on the control repository, or turn it off)`,
    };
  }
  // Its one write is set aside before the first job: a run whose budget runs out still says so on it.
  const hold = budget ? budget.reserve(forge.writeCost?.({ kind: 'dashboard' }) ?? 0) : () => {};
  if (!hold) {
    const reason = "the run's write budget cannot cover the dashboard's write: not kept by this run";
    return { skipped: { outcome: 'skipped', url: seen?.url, reason, ticks: none }, warning: reason };
  }
  const parsed: ParsedDashboard = seen ? parseDashboard(seen.body) : { ticks: NO_TICKS, memory: new Map() as FieldMemory, rollouts: [] };
  return {
    opened: {
      ticks: parsed.ticks,
      scans: parsed.scans,
      async write(results, acted, rollouts, scans) {
        const body = renderDashboard({
          rollouts,
          title: target.title,
          marker: target.marker,
          entries: dashboardEntries(results, parsed.memory),
          tickHow: forge.name === 'local' ? LOCAL_TICK : undefined,
          hand: parsed.ticks.rollouts,
          scans,
        });
        try {
          if (seen && seen.body === body) return { report: { outcome: 'unchanged', url: seen.url, ticks: acted } };
          // Someone ticked or edited it during the run: their change stays, for the next run to read.
          const now = await read(target);
          if ((now?.body ?? undefined) !== (seen?.body ?? undefined)) {
            const reason = 'the dashboard changed while the run went on: left as it is, for the next run to read and rewrite';
            return { report: { outcome: 'raced', url: now?.url ?? seen?.url, reason, ticks: acted }, warning: reason };
          }
          const written = await writeTo(target, body, now);
          return { report: { outcome: now ? 'updated' : 'created', url: written.url, ticks: acted } };
        } catch (error) {
          const reason = `cannot write the dashboard: ${message(error)}`;
          return { report: { outcome: 'skipped', url: seen?.url, reason, ticks: acted }, warning: reason };
        } finally {
          hold();
        }
      },
    },
  };
}
