import type { CommitSignal, Forge } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';

/**
 * A rollout wave's health signal on a downstream commit: the commit status of that context (as
 * Flux's notification-controller or Argo CD's notifications post it) and the check runs of that
 * name. One read per kind asked for, only when a rollout waits on the signal.
 */

export type Signals = Required<Pick<Forge, 'commitSignal'>>;

type State = CommitSignal['state'];

interface StatusItem {
  readonly context?: string;
  readonly state?: string;
  readonly description?: string | null;
  readonly target_url?: string | null;
}

interface CheckRun {
  readonly id: number;
  readonly name?: string;
  readonly status?: string;
  readonly conclusion?: string | null;
  readonly html_url?: string | null;
  readonly details_url?: string | null;
  readonly output?: { readonly title?: string | null; readonly summary?: string | null } | null;
}

/** A commit status's state: `error` is a failure like `failure`. */
export function statusState(state: string | undefined): State {
  switch (state) {
    case 'success':
      return 'success';
    case 'failure':
    case 'error':
      return 'failure';
    case 'pending':
      return 'pending';
    default:
      return 'missing';
  }
}

/**
 * A check run's state: not completed is pending; completed, its conclusion decides (neutral and
 * skipped pass, as GitHub counts them for a required check; stale is waited out).
 */
export function checkRunState(run: Pick<CheckRun, 'status' | 'conclusion'>): State {
  if (run.status !== 'completed') return 'pending';
  switch (run.conclusion) {
    case 'success':
    case 'neutral':
    case 'skipped':
      return 'success';
    case 'failure':
    case 'cancelled':
    case 'timed_out':
    case 'action_required':
    case 'startup_failure':
      return 'failure';
    default:
      return 'pending';
  }
}

/** Several signals of one name (a status and a check run, several check runs): any failure fails, any pending waits. */
function worst(signals: readonly CommitSignal[]): CommitSignal {
  for (const state of ['failure', 'pending', 'success'] as const) {
    const found = signals.find((s) => s.state === state);
    if (found) return found;
  }
  return { state: 'missing' };
}

const text = (s: string | null | undefined) => (s ? s : undefined);

export function createSignals(client: GitHubClient): Signals {
  async function status(repo: { owner: string; repo: string }, commit: string, name: string): Promise<CommitSignal> {
    const ours = (s: StatusItem) => s.context === name;
    // the latest status of each context, page after page until the one named is found
    const statuses = await client.allPages<StatusItem>(
      `read the statuses of ${commit.slice(0, 12)} in ${keyOf(repo)}`,
      'GET /repos/{owner}/{repo}/commits/{ref}/status',
      { ...repo, ref: commit, per_page: 100 },
      (batch) => batch.some(ours),
      (data) => (data as { statuses?: StatusItem[] }).statuses ?? [],
    );
    const found = statuses.find(ours);
    if (!found) return { state: 'missing' };
    return { state: statusState(found.state), url: text(found.target_url), description: text(found.description) };
  }

  async function checkRuns(repo: { owner: string; repo: string }, commit: string, name: string): Promise<CommitSignal> {
    const runs = await client.allPages<CheckRun>(
      `read the check runs ${name} of ${commit.slice(0, 12)} in ${keyOf(repo)}`,
      'GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
      { ...repo, ref: commit, check_name: name, filter: 'latest', per_page: 100 },
      undefined,
      (data) => (data as { check_runs?: CheckRun[] }).check_runs ?? [],
    );
    return worst(
      runs
        .filter((r) => r.name === name)
        .map((r) => ({
          state: checkRunState(r),
          url: text(r.html_url) ?? text(r.details_url),
          description: text(r.output?.title) ?? text(r.conclusion ?? undefined),
        })),
    );
  }

  return {
    async commitSignal(target, commit, signal) {
      const repo = client.repoOf(target.repo);
      if (signal.kind === 'status') return status(repo, commit, signal.name);
      if (signal.kind === 'check-run') return checkRuns(repo, commit, signal.name);
      // either: a failed status needs no second read
      const first = await status(repo, commit, signal.name);
      if (first.state === 'failure') return first;
      return worst([first, await checkRuns(repo, commit, signal.name)]);
    },
  };
}
