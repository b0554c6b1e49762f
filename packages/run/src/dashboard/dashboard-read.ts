import { join, resolve } from 'node:path';
import type { DashboardRecord, DashboardTarget } from '../forges/forge.js';
import type { GitHubForgeOptions } from '../forges/github/github.js';
import { createLocalForge } from '../forges/local.js';
import type { Shard } from '../plan/shard.js';
import { RunError } from '../errors.js';
import { dashboardTarget } from './dashboard-run.js';
import { DEFAULT_CONFIG_DIR } from '../control/control.js';
import { githubControlRepository } from './dashboard-stage.js';
import type { RunMode } from '../settings/settings.js';

/** Which dashboard `kdelta dashboard` and `kdelta decide --dashboard` read: the one a run with these settings keeps. */
export interface FleetDashboardOptions {
  /** The control repository's work tree. */
  readonly cwd: string;
  /** The control resources' directory, relative to `cwd` (default `.kdelta`). */
  readonly config?: string | undefined;
  readonly forge: 'local' | 'github';
  /** The local forge's records (default `<config>/proposals`): its dashboard is a file among them. */
  readonly proposalsDir?: string | undefined;
  /** GitHub: the control repository, `owner/name` (default: the work tree's `origin` on the server). */
  readonly repository?: string | undefined;
  /** The run's mode and shard: each keeps a dashboard of its own. */
  readonly mode?: RunMode | undefined;
  readonly shard?: Shard | undefined;
  /** GitHub: the connection, as a run's GitHub forge takes it. */
  readonly github?: GitHubForgeOptions | undefined;
}

export interface FleetDashboard {
  readonly target: DashboardTarget;
  /** The dashboard as last written; undefined when no run has kept one yet. */
  readonly record: DashboardRecord | undefined;
  /** The local forge: the dashboard's file (absolute), which `kdelta decide --dashboard` ticks. */
  readonly file?: string | undefined;
}

/** Read the fleet dashboard where a run with these settings keeps it. Writes nothing. */
export async function readFleetDashboard(options: FleetDashboardOptions): Promise<FleetDashboard> {
  const config = options.config ?? DEFAULT_CONFIG_DIR;
  if (options.forge === 'local') {
    const target = dashboardTarget(undefined, options.mode ?? 'both', options.shard);
    const dir = resolve(options.cwd, options.proposalsDir ?? join(config, 'proposals'));
    const record = await createLocalForge({ dir, displayRoot: options.cwd }).readDashboard!(target);
    return { target, record, file: join(dir, `${target.name}.md`) };
  }
  // loaded only here: the local forge never loads Octokit
  const forge = (await import('../github.js')).createGitHubForge(options.github ?? {});
  const repository = options.repository ?? (await githubControlRepository(options.cwd, forge));
  if (repository === undefined)
    throw new RunError(
      'invalid-option',
      'the control repository on GitHub is not known: give it as owner/name (--dashboard-repo), or run in a clone whose origin is on the GitHub server',
    );
  const target = dashboardTarget(repository, options.mode ?? 'both', options.shard);
  return { target, record: await forge.readDashboard!(target) };
}
