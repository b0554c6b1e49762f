// `@kdelta/run/github`: the GitHub forge, apart from the package's main door so that a consumer
// of the local forge alone never loads Octokit.
import { createGitHubForge as createForge, type GitHubForge, type GitHubForgeOptions } from './forges/github/github.js';
import { closedByOf, markClosed, parseMetadataBlock } from './propose/proposal-metadata.js';
import { closedState } from './propose/protocol.js';

export type {
  CloseMarks,
  GitHubForge,
  GitHubForgeOptions,
  GitHubRunOptions,
  DraftPolicy,
  AutoMergeMethod,
} from './forges/github/github.js';
export { createGitHubClient, type GitHubClient } from './forges/github/client.js';
export type { GitHubClientOptions } from './forges/github/options.js';
export { APP_CLIENT_ID_ENV, APP_ID_ENV, APP_PRIVATE_KEY_ENV, type ForgeClock, type GitHubAppCredentials } from './forges/github/auth.js';

/**
 * A forge of GitHub pull requests. A body the run wrote carries its fingerprint in its metadata
 * block: stored as it is, the fingerprint once. Each close of kdelta's writes into that block
 * that kdelta closed it, so a pull request closed unmerged without it was declined by a person.
 */
export function createGitHubForge(options: GitHubForgeOptions = {}): GitHubForge {
  return createForge({
    fingerprintIn: (body) => parseMetadataBlock(body)?.fingerprint,
    closes: { mark: markClosed, read: closedByOf, stateOf: closedState },
    ...options,
  });
}
