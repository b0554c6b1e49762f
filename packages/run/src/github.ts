// `@kdelta/run/github`: the GitHub forge, apart from the package's main door so that a consumer
// of the local forge alone never loads Octokit.
import { createGitHubForge as createForge, type GitHubForge, type GitHubForgeOptions } from './forge/github.js';
import { parseMetadataBlock } from './proposal-body.js';

export type { GitHubForge, GitHubForgeOptions, GitHubRunOptions, DraftPolicy, AutoMergeMethod } from './forge/github.js';
export { APP_CLIENT_ID_ENV, APP_ID_ENV, APP_PRIVATE_KEY_ENV, type ForgeClock, type GitHubAppCredentials } from './forge/github-auth.js';

/**
 * A forge of GitHub pull requests. A body the run wrote carries its fingerprint in its metadata
 * block: stored as it is, the fingerprint once.
 */
export function createGitHubForge(options: GitHubForgeOptions = {}): GitHubForge {
  return createForge({ fingerprintIn: (body) => parseMetadataBlock(body)?.fingerprint, ...options });
}
