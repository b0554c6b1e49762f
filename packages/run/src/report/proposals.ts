import { resolve } from 'node:path';
import { isDirectory } from '@kdelta/kptfile-model';
import type { Proposal } from '../forges/forge.js';
import type { GitHubForgeOptions } from '../forges/github/github.js';
import { createLocalForge } from '../forges/local.js';
import { type ControlConfig, loadControl } from '../control/control.js';
import { repositoryUrl } from '../plan/plan.js';
import { DEFAULT_CONFIG_DIR } from '../run.js';
import { type CheckedSettings, type ForgeName, NO_SETTINGS, resolveSettings } from '../settings/settings.js';

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
  return listOnGitHub(control, options.cwd, options.github ?? {});
}

async function listOnGitHub(control: ControlConfig, cwd: string, github: GitHubForgeOptions): Promise<Proposal[]> {
  // loaded only here: listing the local forge's records never loads Octokit
  const forge = (await import('../github.js')).createGitHubForge(github);
  return forge.list(control.repositories.map((r) => ({ downstream: r.name, repo: repositoryUrl(r, cwd) })));
}

export interface ListProposalsOptions {
  /** The control repository's work tree. */
  readonly cwd: string;
  /** The control resources' directory, relative to `cwd` (default `.kdelta`). */
  readonly config?: string | undefined;
  /** The settings a door checked (forge, proposalsDir, branchPrefix): over RunSettings, as in a run. */
  readonly settings?: CheckedSettings | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * The proposals of the forge a run with these settings would use: the door's settings, else
 * RunSettings, else the defaults (the run's one precedence), so `kdelta proposals` lists the
 * records or the branches `kdelta run` made. Without a config directory there is no RunSettings:
 * the local forge's records are listed by the door's settings alone.
 */
export async function listProposals(options: ListProposalsOptions): Promise<{ forge: ForgeName; proposals: Proposal[] }> {
  const config = options.config ?? DEFAULT_CONFIG_DIR;
  const door = options.settings ?? NO_SETTINGS;
  const dir = resolve(options.cwd, config);
  const control = door.values.forge === 'github' || (await isDirectory(dir)) ? await loadControl({ dir, display: config }) : undefined;
  const settings = resolveSettings(door, control?.settings ?? NO_SETTINGS, { config });
  if (settings.forge === 'github') {
    const github = { env: options.env ?? process.env, branchPrefix: settings.branchPrefix };
    // GitHub's pull requests are found through the control resources' Repositories: they must load
    const repositories = control ?? (await loadControl({ dir, display: config }));
    return { forge: settings.forge, proposals: await listOnGitHub(repositories, options.cwd, github) };
  }
  const local = createLocalForge({
    dir: resolve(options.cwd, settings.proposalsDir),
    displayRoot: options.cwd,
    branchPrefix: settings.branchPrefix,
  });
  return { forge: settings.forge, proposals: await local.list() };
}
