import type { Proposal, ProposalStatus, ProposalTarget } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';
import type { CloseMarks } from './options.js';
import type { GitHubRepo } from './repo.js';

/**
 * What the forge knows of pull requests in one run: each repository's open ones, read once
 * (paginated) and kept current as the forge writes, so a run with nothing new makes one read per
 * repository and no write at all; and the facts a pull request reports as a Proposal.
 */

/** What GitHub returns for a pull request (the fields kdelta reads). */
export interface PullJson {
  number: number;
  node_id: string;
  html_url: string;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  draft?: boolean;
  merged_at?: string | null;
  head: { ref: string; sha: string; repo?: { full_name?: string } | null };
  base: { ref: string };
  labels?: Array<{ name?: string } | string>;
  auto_merge?: { merge_method?: string } | null;
  created_at?: string;
}

/** A pull request as the forge keeps it: GitHub's answer, the downstream it belongs to, its last status. */
export interface PullRecord {
  pull: PullJson;
  downstream: string;
  repoUrl: string;
  status?: ProposalStatus | undefined;
}

/** The forge's own marker, appended when the body does not carry the fingerprint itself. */
const MARKER = /\n?<!-- kdelta-fingerprint: ([A-Za-z0-9._-]+) -->\n?$/;

export type FingerprintIn = (body: string) => string | undefined;

const noFingerprint: FingerprintIn = () => undefined;

export function encodeBody(body: string, fingerprint: string, fingerprintIn: FingerprintIn = noFingerprint): string {
  if (fingerprintIn(body) === fingerprint) return body;
  return `${body}${body.endsWith('\n') ? '' : '\n'}<!-- kdelta-fingerprint: ${fingerprint} -->\n`;
}

export function decodeBody(stored: string, fingerprintIn: FingerprintIn = noFingerprint): { body: string; fingerprint: string } {
  const m = MARKER.exec(stored);
  if (m) {
    const body = stored.slice(0, m.index);
    return { body: body.endsWith('\n') || body === '' ? body : `${body}\n`, fingerprint: m[1]! };
  }
  return { body: stored, fingerprint: fingerprintIn(stored) ?? '' };
}

export function labelsOf(pull: PullJson): string[] {
  return (pull.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean);
}

/** GitHub's limit on a pull request's or an issue's body. */
export const MAX_BODY_CHARS = 65_536;

export interface PullCache {
  /** The open pull requests of the target's repository (read once per run), by number. */
  openPulls(target: ProposalTarget): Promise<Map<number, PullRecord>>;
  /** Read the repository's open pull requests again on next use (one was opened by someone else). */
  forget(repo: GitHubRepo): void;
  /** The open pull request of `head` into `base`. */
  findRecord(target: ProposalTarget): Promise<PullRecord | undefined>;
  /** The last closed pull request of a target, read once per run. */
  lastClosed(target: ProposalTarget, repo: GitHubRepo): Promise<PullJson | undefined>;
  /** Every pull request of a repository, open or not (all pages). */
  pages(repo: GitHubRepo, state: 'open' | 'all'): Promise<PullJson[]>;
  /** A pull request from the repository itself (not a fork's). */
  sameRepo(pull: PullJson, repo: GitHubRepo): boolean;
  /** The repository and its downstream, for list(). */
  remember(target: { downstream: string; repo: string }, repo: GitHubRepo): void;
  readonly seen: ReadonlyMap<string, { downstream: string; repoUrl: string; repo: GitHubRepo }>;
  /** A pull request as a Proposal: its facts, its closed state as the protocol decides it (`state`: as the caller knows it). */
  toProposal(r: PullRecord, state?: Proposal['state']): Proposal;
  /** Closed as merged by this run (GitHub itself can only say closed), by `<owner>/<repo>#<number>`. */
  readonly mergedByRun: Set<string>;
  /** Statuses this run posted, by `<owner>/<repo>@<commit>`. */
  readonly statuses: Map<string, ProposalStatus>;
  /**
   * The commit kdelta pushed for a pull request (`<owner>/<repo>#<number>`), as the run said: GitHub
   * moves `head.sha` to a push only later, so a status read back or posted belongs on this one.
   */
  readonly pushed: Map<string, string>;
}

export function createPullCache(
  client: GitHubClient,
  options: { readonly fingerprintIn?: FingerprintIn | undefined; readonly closes?: CloseMarks | undefined },
): PullCache {
  const fingerprintIn = options.fingerprintIn ?? noFingerprint;
  const open = new Map<string, Promise<Map<number, PullRecord>>>();
  const seen = new Map<string, { downstream: string; repoUrl: string; repo: GitHubRepo }>();
  const closedLast = new Map<string, Promise<PullJson | undefined>>();
  const mergedByRun = new Set<string>();
  const statuses = new Map<string, ProposalStatus>();
  const pushed = new Map<string, string>();

  const sameRepo = (p: PullJson, repo: GitHubRepo) =>
    !p.head.repo?.full_name || p.head.repo.full_name.toLowerCase() === keyOf(repo).toLowerCase();

  function pages(repo: GitHubRepo, state: 'open' | 'all'): Promise<PullJson[]> {
    return client.allPages<PullJson>(`list the pull requests of ${keyOf(repo)}`, 'GET /repos/{owner}/{repo}/pulls', {
      ...repo,
      state,
      per_page: 100,
    });
  }

  function remember(target: { downstream: string; repo: string }, repo: GitHubRepo) {
    if (!seen.has(keyOf(repo))) seen.set(keyOf(repo), { downstream: target.downstream, repoUrl: target.repo, repo });
  }

  /** Once per key and run; a failed read is read again next time. */
  function once<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
    let hit = cache.get(key);
    if (!hit) {
      hit = read();
      hit.catch(() => cache.delete(key));
      cache.set(key, hit);
    }
    return hit;
  }

  function openPulls(target: ProposalTarget): Promise<Map<number, PullRecord>> {
    const repo = client.repoOf(target.repo);
    remember(target, repo);
    return once(open, keyOf(repo), () =>
      pages(repo, 'open').then(
        (pulls) => new Map(pulls.map((p) => [p.number, { pull: p, downstream: target.downstream, repoUrl: target.repo }])),
      ),
    );
  }

  /** A closed pull request's state, as the run's protocol decides it from what GitHub says; without it, merged or closed. */
  function closedState(pull: PullJson, body: string, merged: boolean): Proposal['state'] {
    if (!options.closes) return merged ? 'merged' : 'closed';
    return options.closes.stateOf({ merged, closedBy: options.closes.read(body), labels: labelsOf(pull) });
  }

  return {
    openPulls,
    forget: (repo) => open.delete(keyOf(repo)),
    async findRecord(target) {
      const pulls = await openPulls(target);
      const repo = client.repoOf(target.repo);
      for (const r of pulls.values()) {
        if (r.pull.state === 'open' && r.pull.head.ref === target.head && r.pull.base.ref === target.base && sameRepo(r.pull, repo))
          return r;
      }
      return undefined;
    },
    lastClosed(target, repo) {
      // `head` filters on `owner:branch`; the newest first (GitHub's default order for `created`)
      return once(closedLast, `${keyOf(repo)}\0${target.head}\0${target.base}`, () =>
        client
          .call<PullJson[]>(`list the closed pull requests of ${target.head} in ${keyOf(repo)}`, 'GET /repos/{owner}/{repo}/pulls', {
            ...repo,
            state: 'closed',
            head: `${repo.owner}:${target.head}`,
            base: target.base,
            per_page: 10,
          })
          .then((pulls) =>
            pulls
              .filter((p) => p.head.ref === target.head && p.base.ref === target.base && sameRepo(p, repo))
              .reduce<PullJson | undefined>((last, p) => (!last || last.number < p.number ? p : last), undefined),
          ),
      );
    },
    pages,
    sameRepo,
    remember,
    seen,
    toProposal(r, state) {
      const { body, fingerprint } = decodeBody(r.pull.body ?? '', fingerprintIn);
      const id = `${r.pull.number}`;
      const repoKey = keyOf(client.repoOf(r.repoUrl));
      const merged = Boolean(r.pull.merged_at) || mergedByRun.has(`${repoKey}#${id}`);
      const commit = pushed.get(`${repoKey}#${id}`) ?? r.pull.head.sha;
      return {
        downstream: r.downstream,
        repo: r.repoUrl,
        head: r.pull.head.ref,
        base: r.pull.base.ref,
        title: r.pull.title,
        body,
        fingerprint,
        id,
        state: state ?? (r.pull.state === 'open' ? 'open' : closedState(r.pull, body, merged)),
        url: r.pull.html_url,
        status: statuses.get(`${repoKey}@${commit}`) ?? r.status,
        labels: labelsOf(r.pull),
        draft: Boolean(r.pull.draft),
        autoMerge: Boolean(r.pull.auto_merge),
        ...(r.pull.created_at ? { createdAt: r.pull.created_at } : {}),
      };
    },
    mergedByRun,
    statuses,
    pushed,
  };
}
