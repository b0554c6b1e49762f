import type { Forge, WriteOperation } from '../forge.js';
import { createGitHubClient } from './client.js';
import { createCommits } from './commits.js';
import { createDashboard } from './dashboard.js';
import { createDecorations } from './decorations.js';
import type { GitHubForge, GitHubForgeOptions, GitHubRunOptions } from './options.js';
import { createPullCache } from './pull-cache.js';
import { createPulls } from './pulls.js';
import { commitUrlOf, compareUrlOf, githubRepoOf } from './repo.js';
import { createSignals } from './signals.js';
import { createStatuses } from './statuses.js';

/**
 * The GitHub forge, assembled from its parts: the client (Octokit, pacing, budget, pagination),
 * the pull cache, pulls (find, upsert, close, declines, list), decorations (labels, reviewers,
 * draft, auto-merge), statuses, the dashboard issue and signed commits. It reports facts and
 * carries out writes; the run's protocol decides.
 */

export { GITHUB_API_VERSION } from './headers.js';
export { createGitHubClient, type GitHubClient, githubToken, WRITES_PER_MINUTE } from './client.js';
export type {
  AutoMergeMethod,
  CloseMarks,
  DraftPolicy,
  GitHubClientOptions,
  GitHubForge,
  GitHubForgeOptions,
  GitHubRunOptions,
} from './options.js';
export { decodeBody, encodeBody } from './pull-cache.js';

/** What a write costs in API requests, with these options (git pushes cost none). */
function writeCost(options: GitHubRunOptions, op: WriteOperation): number {
  switch (op.kind) {
    case 'close':
      return 1;
    case 'delete-branch':
      return 0; // a git push, not an API request
    case 'push':
      return options.signedCommits ? op.files + 4 : 0;
    case 'status':
    case 'dashboard':
      return 1;
    case 'upsert': {
      const some = (list: readonly string[] | undefined) => ((list ?? []).length > 0 ? 1 : 0);
      const labels = some(options.labels);
      const autoMerge = op.autoMergeAsked !== false && (options.autoMerge || op.autoMergeAsked) ? 1 : 0;
      // created: open (as a draft or not), label, assign, request reviews, enable auto-merge;
      // updated: edit, label, turn into a draft or back, enable or disable auto-merge
      return op.created
        ? 1 + labels + some(options.assignees) + Math.max(some(options.reviewers), some(options.teamReviewers)) + autoMerge
        : 1 + labels + ((options.draft ?? 'conflicts') === 'always' ? 0 : 1) + autoMerge;
    }
    default:
      return op satisfies never;
  }
}

export function createGitHubForge(options: GitHubForgeOptions = {}): GitHubForge {
  const client = createGitHubClient(options);
  const cache = createPullCache(client, options);
  const decorations = createDecorations(client, cache, options);
  const { serverUrl, tokens } = client;
  const repoAt = (url: string) => {
    const m = githubRepoOf(url, serverUrl);
    return m.ok ? m.value : undefined;
  };
  const signed: Pick<Forge, 'publishCommit'> = options.signedCommits ? createCommits(client) : {};
  return {
    name: 'github',
    tracksMerges: true,
    draftPolicy: options.draft ?? 'conflicts',
    serverUrl,
    apiUrl: client.apiUrl,
    requests: client.requests,
    ...createPulls(client, cache, decorations, options),
    ...createStatuses(client, cache, options.budget),
    ...createSignals(client),
    ...createDashboard(client),
    ...signed,
    writeCost: (op) => writeCost(options, op),
    gitToken: (url) => {
      const repo = repoAt(url);
      return repo ? tokens.cachedFor(repo.owner) : undefined;
    },
    gitTokenName: (url) => {
      const repo = repoAt(url);
      return repo ? tokens.nameFor(repo.owner) : undefined;
    },
    async prepareGitToken(url) {
      const repo = repoAt(url);
      if (repo && tokens.app) await tokens.tokenFor(repo.owner, repo.repo);
    },
    compareUrl: (upstreamRepo, from, to) => compareUrlOf(upstreamRepo, from, to, serverUrl),
    commitUrl: (upstreamRepo, sha) => commitUrlOf(upstreamRepo, sha, serverUrl),
  };
}
