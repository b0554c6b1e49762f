import type { Budget } from '../budget.js';
import { ForgeError } from '../errors.js';
import type { Forge, Proposal, ProposalStatus } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';
import type { PullCache } from './pull-cache.js';

/**
 * The proposal's status: a commit status, context `kdelta`, on the commit kdelta pushed (GitHub
 * moves a pull request's head to a push only later), and its repair when a run stopped before it.
 */

export type Statuses = Required<Pick<Forge, 'setStatus' | 'ensureStatus'>>;

/** GitHub's limit on a status description, in characters. */
const DESCRIPTION_CHARS = 140;

export function createStatuses(client: GitHubClient, cache: PullCache, budget: Budget | undefined): Statuses {
  async function postStatus(proposal: Proposal, status: ProposalStatus, sha: string): Promise<void> {
    const repo = client.repoOf(proposal.repo);
    cache.pushed.set(`${keyOf(repo)}#${proposal.id}`, sha);
    await client.call(`record a status on ${sha.slice(0, 12)} in ${keyOf(repo)}`, 'POST /repos/{owner}/{repo}/statuses/{sha}', {
      ...repo,
      sha,
      state: status.state,
      // cut between characters, never inside a surrogate pair
      description: [...status.description].slice(0, DESCRIPTION_CHARS).join(''),
      context: 'kdelta',
    });
    cache.statuses.set(`${keyOf(repo)}@${sha}`, status);
  }

  return {
    async setStatus(proposal, status, commit) {
      const repo = client.repoOf(proposal.repo);
      const r = (await cache.openPulls(proposal)).get(Number(proposal.id));
      const sha = commit ?? cache.pushed.get(`${keyOf(repo)}#${proposal.id}`) ?? r?.pull.head.sha;
      if (!sha) {
        throw new ForgeError(
          'github-request-failed',
          `GitHub: pull request #${proposal.id} of ${keyOf(repo)} is not open and no commit was given: no status recorded`,
        );
      }
      await postStatus(proposal, status, sha);
      if (r) r.status = status;
    },

    async ensureStatus(proposal, status, sha) {
      const repo = client.repoOf(proposal.repo);
      // the latest status of each context, page after page until kdelta's is found
      const ours = (s: { context?: string }) => s.context === 'kdelta';
      const statuses = await client.allPages<{ context?: string }>(
        `read the statuses of ${sha.slice(0, 12)} in ${keyOf(repo)}`,
        'GET /repos/{owner}/{repo}/commits/{ref}/status',
        { ...repo, ref: sha, per_page: 100 },
        (batch) => batch.some(ours),
        (data) => (data as { statuses?: Array<{ context?: string }> }).statuses ?? [],
      );
      if (statuses.some(ours)) return false;
      // One write outside any job's reservation: taken from the budget, or left for a later run.
      const release = budget ? budget.reserve(1) : () => {};
      if (!release) return false;
      try {
        await postStatus(proposal, status, sha);
      } finally {
        release();
      }
      return true;
    },
  };
}
