import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isDirectory } from '@kdelta/kptfile-model';
import { parseDashboard } from '../dashboard/dashboard.js';
import { dashboardTarget } from '../dashboard/dashboard-run.js';
import { githubControlRepository } from '../dashboard/dashboard-stage.js';
import type { Forge, Proposal } from '../forges/forge.js';
import type { GitHubForgeOptions } from '../forges/github/github.js';
import { createLocalForge } from '../forges/local.js';
import { type ControlConfig, loadControl } from '../control/control.js';
import { repositoryUrl } from '../plan/plan.js';
import { DEFAULT_CONFIG_DIR } from '../run.js';
import { type CheckedSettings, type ForgeName, NO_SETTINGS, resolveSettings } from '../settings/settings.js';
import { message } from './result.js';
import type { RolloutReport } from './rollouts.js';

/** What `githubProposals` needs: the control resources' place and the connection to GitHub. */
export interface GitHubProposalsOptions {
  /** The control repository's work tree. */
  readonly cwd: string;
  /** The control resources' directory, relative to `cwd` (default `.kdelta`). */
  readonly config?: string | undefined;
  /** The connection (token, API and server URLs...) and the branch prefix, as a run's GitHub forge takes them. */
  readonly github?: GitHubForgeOptions | undefined;
}

/**
 * The pull requests of kdelta's branches in every Repository of the control resources that is
 * on the GitHub server (open, merged, closed by kdelta, or declined by a person), the newest of
 * each branch: what `kdelta proposals --forge github` lists. One paginated list per repository.
 */
export async function githubProposals(options: GitHubProposalsOptions): Promise<Proposal[]> {
  const config = options.config ?? DEFAULT_CONFIG_DIR;
  const control = await loadControl({ dir: resolve(options.cwd, config), display: config });
  return listOnGitHub(control, options.cwd, await githubForge(options.github ?? {}));
}

async function listOnGitHub(control: ControlConfig, cwd: string, forge: Forge): Promise<Proposal[]> {
  return forge.list(control.repositories.map((r) => ({ downstream: r.name, repo: repositoryUrl(r, cwd) })));
}

function githubForge(github: GitHubForgeOptions): Promise<Forge> {
  // loaded only here: listing the local forge's records never loads Octokit
  return import('../github.js').then((m) => m.createGitHubForge(github));
}

/** The fleet's rollouts and what kept them from being read. */
export interface ListedRollouts {
  readonly rollouts: readonly RolloutReport[];
  readonly warnings: readonly string[];
}

const NO_ROLLOUTS: ListedRollouts = { rollouts: [], warnings: [] };

/**
 * The fleet's rollouts as the last run reported them: its dashboard's data block holds them (one
 * place for both forges; alike in every shard's and mode's dashboard). The local forge: the
 * dashboard file among the records written last. GitHub: the control repository's dashboard issue
 * (of a run of every mode, else of the variants mode).
 */
async function localRollouts(dir: string, cwd: string): Promise<ListedRollouts> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /^dashboard(-[A-Za-z0-9._-]+)?\.md$/.test(n));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return NO_ROLLOUTS;
    throw error;
  }
  const dated = await Promise.all(names.map(async (n) => ({ n, at: (await stat(join(dir, n))).mtimeMs })));
  const newest = dated.sort((a, b) => b.at - a.at || (a.n < b.n ? -1 : 1))[0];
  if (!newest) return NO_ROLLOUTS;
  const forge = createLocalForge({ dir, displayRoot: cwd });
  const record = await forge.readDashboard!({ name: newest.n.slice(0, -'.md'.length), title: '', marker: '' });
  return { rollouts: record ? parseDashboard(record.body).rollouts : [], warnings: [] };
}

async function githubRollouts(cwd: string, forge: Forge, given: string | undefined): Promise<ListedRollouts> {
  try {
    const repository = given ?? (await githubControlRepository(cwd, forge));
    if (repository === undefined) return NO_ROLLOUTS;
    for (const mode of ['both', 'variants'] as const) {
      const record = await forge.readDashboard!(dashboardTarget(repository, mode, undefined));
      if (record) return { rollouts: parseDashboard(record.body).rollouts, warnings: [] };
    }
    return NO_ROLLOUTS;
  } catch (error) {
    return { rollouts: [], warnings: [`cannot read the rollouts from the dashboard: ${message(error)}`] };
  }
}

export interface ListProposalsOptions {
  /** The control repository's work tree. */
  readonly cwd: string;
  /** The control resources' directory, relative to `cwd` (default `.kdelta`). */
  readonly config?: string | undefined;
  /** The settings a door checked (forge, proposalsDir, branchPrefix): over RunSettings, as in a run. */
  readonly settings?: CheckedSettings | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** GitHub: the control repository (`owner/name`) whose dashboard issue holds the rollouts (default: the work tree's `origin` on the server). */
  readonly dashboardRepository?: string | undefined;
}

/**
 * The proposals of the forge a run with these settings would use: the door's settings, else
 * RunSettings, else the defaults (the run's one precedence), so `kdelta proposals` lists the
 * records or the branches `kdelta run` made. Without a config directory there is no RunSettings:
 * the local forge's records are listed by the door's settings alone.
 */
export async function listProposals(
  options: ListProposalsOptions,
): Promise<{ forge: ForgeName; proposals: Proposal[]; rollouts: readonly RolloutReport[]; warnings: readonly string[] }> {
  const config = options.config ?? DEFAULT_CONFIG_DIR;
  const door = options.settings ?? NO_SETTINGS;
  const dir = resolve(options.cwd, config);
  const control = door.values.forge === 'github' || (await isDirectory(dir)) ? await loadControl({ dir, display: config }) : undefined;
  const settings = resolveSettings(door, control?.settings ?? NO_SETTINGS, { config });
  if (settings.forge === 'github') {
    const github = { env: options.env ?? process.env, branchPrefix: settings.branchPrefix };
    // GitHub's pull requests are found through the control resources' Repositories: they must load
    const repositories = control ?? (await loadControl({ dir, display: config }));
    const forge = await githubForge(github);
    const proposals = await listOnGitHub(repositories, options.cwd, forge);
    // the dashboard issue is read only when a policy could have rollouts: a fleet without one makes no more requests
    const rollouts = repositories.policies.some((p) => p.rollout)
      ? await githubRollouts(options.cwd, forge, options.dashboardRepository)
      : NO_ROLLOUTS;
    return { forge: settings.forge, proposals, ...rollouts };
  }
  const dirOf = resolve(options.cwd, settings.proposalsDir);
  const local = createLocalForge({ dir: dirOf, displayRoot: options.cwd, branchPrefix: settings.branchPrefix });
  return { forge: settings.forge, proposals: await local.list(), ...(await localRollouts(dirOf, options.cwd)) };
}
