import { ForgeError } from '../errors.js';
import type { ProposalInput } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';
import type { AutoMergeMethod, GitHubRunOptions } from './options.js';
import { labelsOf, type PullCache, type PullRecord } from './pull-cache.js';
import type { GitHubRepo } from './repo.js';

/**
 * What a pull request carries besides its text: labels, assignees, reviewers, its draft state and
 * auto-merge. The run decides readiness, the draft state (under the draft policy this forge
 * reports) and whether it may merge without a person (review-gate.ts); these only carry them out.
 * A draft never auto-merges (GitHub's own rule).
 */

export interface Decorations {
  /** Open it as a draft: as the run decided (its readiness under the forge's draft policy). */
  wantsDraft(input: ProposalInput): boolean;
  /** Labels, assignees and reviews (on a new one), the draft state, auto-merge; what GitHub refuses of them is a warning. */
  decorate(r: PullRecord, input: ProposalInput, created: boolean, warnings: string[]): Promise<void>;
  /** Auto-merge is on where the run holds it back (or on a draft): turn it off; true when it did. */
  holdAutoMerge(r: PullRecord, input: ProposalInput): Promise<boolean>;
  /** GitHub offers no drafts in this repository (a private one on a free plan). */
  draftsUnsupported(error: unknown): boolean;
  draftsMissing(repo: GitHubRepo, what: string): string;
}

export function createDecorations(client: GitHubClient, cache: PullCache, options: GitHubRunOptions): Decorations {
  /** Whether the run lets it merge without a person: without its word, never. */
  const mayAutoMerge = (input: ProposalInput) => input.review?.autoMerge === true;
  const wantsDraft = (input: ProposalInput) => input.review?.draft === true;
  /** GitHub offers draft pull requests in public repositories, and in private ones on paid plans only. */
  const draftsUnsupported = (error: unknown) =>
    /draft pull requests are not supported/i.test(
      `${(error as Error).message ?? ''} ${JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? '')}`,
    );
  const draftsMissing = (repo: GitHubRepo, what: string) =>
    `GitHub offers no draft pull requests in ${keyOf(repo)} (a private repository on GitHub Free or Pro): ${what}`;

  /** A write that stands alone: GitHub's refusal is a warning (the budget spent is not). */
  async function alone(warnings: string[], write: () => Promise<void>, budgetStops = true): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (budgetStops && error instanceof ForgeError && error.code === 'budget-spent') throw error;
      warnings.push((error as Error).message);
    }
  }

  async function decorate(r: PullRecord, input: ProposalInput, created: boolean, warnings: string[]): Promise<void> {
    const repo = client.repoOf(input.repo);
    const n = r.pull.number;
    const where = `pull request #${n} of ${keyOf(repo)}`;
    const have = new Set(labelsOf(r.pull));
    const missing = (options.labels ?? []).filter((l) => !have.has(l));
    // Labels, assignees and reviews each stand alone: one GitHub refuses (a label name over its
    // 50 characters, a reviewer who is not a collaborator) is a warning, and the rest still happens.
    if (missing.length > 0) {
      await alone(warnings, async () => {
        const labels = await client.call<Array<{ name: string }>>(
          `label ${where}`,
          'POST /repos/{owner}/{repo}/issues/{issue_number}/labels',
          {
            ...repo,
            issue_number: n,
            labels: missing,
          },
        );
        r.pull = { ...r.pull, labels: labels.map((l) => ({ name: l.name })) };
      });
    }
    if (created && (options.assignees ?? []).length > 0) {
      await alone(warnings, async () => {
        await client.call(`assign ${where}`, 'POST /repos/{owner}/{repo}/issues/{issue_number}/assignees', {
          ...repo,
          issue_number: n,
          assignees: [...options.assignees!],
        });
      });
    }
    if (created && ((options.reviewers ?? []).length > 0 || (options.teamReviewers ?? []).length > 0)) {
      // The pull request stands without them (a reviewer may be its author, or not a collaborator).
      await alone(
        warnings,
        async () => {
          await client.call(`request reviews on ${where}`, 'POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers', {
            ...repo,
            pull_number: n,
            reviewers: [...(options.reviewers ?? [])],
            team_reviewers: [...(options.teamReviewers ?? [])],
          });
        },
        false,
      );
    }
    const draft = wantsDraft(input);
    // the run did not say: the draft state is left as it is
    if (!created && input.review?.draft !== undefined && Boolean(r.pull.draft) !== draft) {
      try {
        await client.graphql(
          `${draft ? 'turn' : 'mark'} ${where} ${draft ? 'into a draft' : 'ready for review'}`,
          repo,
          draft
            ? 'mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) { pullRequest { id } } }'
            : 'mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { id } } }',
          { id: r.pull.node_id },
        );
        r.pull = { ...r.pull, draft };
      } catch (error) {
        if (!draft || !draftsUnsupported(error)) throw error;
        // it stays ready for review; its auto-merge stays held back all the same (see upsert)
        warnings.push(draftsMissing(repo, `${where} stays ready for review`));
      }
    }
    // an update policy's word over the forge's setting; asked without a setting: a merge commit
    const asked = input.review?.autoMergeAsked;
    const autoMerge = asked === false ? undefined : options.autoMerge || (asked ? 'merge' : undefined);
    const held = !mayAutoMerge(input) || Boolean(r.pull.draft);
    if (autoMerge && !held && !r.pull.auto_merge) {
      try {
        await client.graphql(
          `enable auto-merge on ${where}`,
          repo,
          'mutation($id: ID!, $method: PullRequestMergeMethod!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: $method}) { pullRequest { id } } }',
          { id: r.pull.node_id, method: autoMerge.toUpperCase() },
        );
        r.pull = { ...r.pull, auto_merge: { merge_method: autoMerge } };
      } catch (error) {
        if (!/\bclean status\b/i.test((error as Error).message)) throw error;
        // GitHub enables auto-merge only on a pull request that still waits for something: one it
        // could merge now ("clean": mergeable, every required check passed) is merged now instead.
        await mergeClean(r, input, autoMerge, where, warnings);
      }
    }
  }

  /**
   * Merge a clean pull request with the chosen method, at the commit kdelta pushed (GitHub
   * refuses when the head moved since); when GitHub says no, it stays open and a warning says why.
   */
  async function mergeClean(
    r: PullRecord,
    input: ProposalInput,
    method: AutoMergeMethod,
    where: string,
    warnings: string[],
  ): Promise<void> {
    const repo = client.repoOf(input.repo);
    const sha = input.headCommit;
    try {
      await client.call(`merge ${where}`, 'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        ...repo,
        pull_number: r.pull.number,
        merge_method: method,
        ...(sha ? { sha } : {}),
      });
    } catch (error) {
      warnings.push(`auto-merge: ${where} is ready to merge but was left open: ${(error as Error).message}`);
      return;
    }
    cache.mergedByRun.add(`${keyOf(repo)}#${r.pull.number}`);
    r.pull = { ...r.pull, state: 'closed', merged_at: new Date().toISOString() };
    warnings.push(`auto-merge: ${where} had nothing to wait for (no required check pending): merged now (${method})`);
  }

  async function holdAutoMerge(r: PullRecord, input: ProposalInput): Promise<boolean> {
    if (!r.pull.auto_merge || (mayAutoMerge(input) && !r.pull.draft)) return false;
    const repo = client.repoOf(input.repo);
    await client.graphql(
      `disable auto-merge on pull request #${r.pull.number} of ${keyOf(repo)}`,
      repo,
      'mutation($id: ID!) { disablePullRequestAutoMerge(input: {pullRequestId: $id}) { pullRequest { id } } }',
      { id: r.pull.node_id },
    );
    r.pull = { ...r.pull, auto_merge: null };
    return true;
  }

  return { wantsDraft, decorate, holdAutoMerge, draftsUnsupported, draftsMissing };
}
