import { resolve } from 'node:path';
import type { Proposal } from '../forges/forge.js';
import type { GitHubForgeOptions } from '../forges/github/github.js';
import { loadControl } from '../control/control.js';
import { repositoryUrl } from '../plan/plan.js';
import { DEFAULT_CONFIG_DIR } from '../run.js';

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
  // loaded only here: listing the local forge's records never loads Octokit
  const forge = (await import('../github.js')).createGitHubForge(options.github ?? {});
  return forge.list(control.repositories.map((r) => ({ downstream: r.name, repo: repositoryUrl(r, options.cwd) })));
}
