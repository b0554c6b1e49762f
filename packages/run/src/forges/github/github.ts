import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { runGit } from '@kdelta/git-source';
import type { Budget } from '../budget.js';
import {
  type DashboardRecord,
  type DashboardTarget,
  type Forge,
  type Proposal,
  type ProposalInput,
  type ProposalStatus,
  type ProposalTarget,
  PROPOSE_AGAIN_LABEL,
  type PublishCommitInput,
  type UpsertResult,
  type WriteOperation,
} from '../forge.js';
import { describeGitHubError, githubErrorCode } from './errors.js';
import { appTokens, type ForgeClock, githubAppOf, type GitHubAppCredentials, realClock, singleToken, type TokenSource } from './auth.js';
import { documentedHeaders, USER_AGENT } from './headers.js';
import { nextPageOf } from './pages.js';
import { commitUrlOf, compareUrlOf, githubRepoOf, type GitHubRepo } from './repo.js';
import { ForgeError } from '../errors.js';

/**
 * The GitHub forge: pull requests through the REST API (GraphQL for auto-merge and draft
 * changes), with Octokit's throttling (secondary rate limits are waited out after `retry-after`)
 * and retry plugins, and the API version pinned.
 *
 * A run reads each repository's open pull requests once (paginated) and keeps that list current
 * as it writes, so a run with nothing new makes one read per repository and no write at all.
 */

export { GITHUB_API_VERSION } from './headers.js';

export type DraftPolicy = 'always' | 'never' | 'conflicts';
export type AutoMergeMethod = 'merge' | 'squash' | 'rebase';

/** The pull request options of a run (the Action's inputs, the CLI's flags, RunSettings' `spec.github`). */
export interface GitHubRunOptions {
  /** Default: env GITHUB_TOKEN, else GH_TOKEN. */
  readonly token?: string | undefined;
  /** Default: env GITHUB_API_URL, else https://api.github.com. */
  readonly apiUrl?: string | undefined;
  /** Default: env GITHUB_SERVER_URL, else https://github.com. */
  readonly serverUrl?: string | undefined;
  /** Default: env GITHUB_GRAPHQL_URL, else derived from apiUrl (`…/api/v3` → `…/api/graphql`, else `<apiUrl>/graphql`). */
  readonly graphqlUrl?: string | undefined;
  /**
   * Authenticate as this GitHub App (an installation token per owner of the repositories) instead
   * of `token`. Default: env KDELTA_GITHUB_APP_ID (or KDELTA_GITHUB_APP_CLIENT_ID) and
   * KDELTA_GITHUB_APP_PRIVATE_KEY, when set.
   */
  readonly app?: GitHubAppCredentials | undefined;
  /** What the token is, for the message when GitHub refuses it (default: where it came from). */
  readonly tokenName?: string | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly assignees?: readonly string[] | undefined;
  readonly reviewers?: readonly string[] | undefined;
  readonly teamReviewers?: readonly string[] | undefined;
  /** Default 'conflicts': a proposal the run finds not ready (conflicts, a failed render, an unmet readiness gate) is opened as a draft. */
  readonly draft?: DraftPolicy | undefined;
  /** Only ever enabled where the run allows it (review-gate.ts: nothing a person must review first). */
  readonly autoMerge?: false | AutoMergeMethod | undefined;
  /** Commits made through the API (GitHub marks them verified) instead of git push. */
  readonly signedCommits?: boolean | undefined;
}

export interface GitHubForgeOptions extends GitHubRunOptions {
  /** Where defaults come from (GITHUB_TOKEN, GH_TOKEN, GITHUB_API_URL, GITHUB_SERVER_URL). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Counts content-creating requests. */
  readonly budget?: Budget | undefined;
  /** Heads this forge lists (default `kdelta/`). */
  readonly branchPrefix?: string | undefined;
  /**
   * Octokit spaces write requests a second apart as GitHub asks, and waits `retry-after`
   * seconds after a secondary rate limit; tests against a local server shorten both.
   */
  readonly pacing?:
    | {
        readonly writeSpacing?: boolean;
        readonly retryAfterUnitMs?: number;
        /** Content-creating requests a minute at most (default 80, GitHub's secondary limit). */
        readonly writesPerMinute?: number;
      }
    | undefined;
  /** Time, for pacing and token renewal (tests move it instead of sleeping). */
  readonly clock?: ForgeClock | undefined;
  /** Each new installation token, as soon as it exists (the Action masks it). */
  readonly onToken?: ((token: string) => void) | undefined;
  /**
   * Reads the fingerprint a body carries itself (the run's metadata block): such a body is stored
   * as it is, the fingerprint once. Without it, or for a body that carries none, the forge keeps
   * the fingerprint in a hidden marker of its own at the end of the body.
   */
  readonly fingerprintIn?: ((body: string) => string | undefined) | undefined;
  /**
   * Tells kdelta's own closes from a person's: `mark` writes into a body, in the request that
   * closes the pull request, that kdelta closed it; `read` reads that back. With it, a pull
   * request a person closed unmerged is declined (`declined(target)`, `list()`); without it the
   * forge keeps no declines.
   */
  readonly closes?: CloseMarks | undefined;
}

/** Who closed a pull request, as its body says (the run's metadata block). */
export interface CloseMarks {
  mark(body: string, state: 'closed' | 'merged'): string;
  /** `person`: a body of kdelta's that kdelta did not close; undefined: not a body of kdelta's. */
  read(body: string): { readonly by: 'kdelta'; readonly state: 'closed' | 'merged' } | { readonly by: 'person' } | undefined;
}

/** The answer the forge gives itself for a write the budget does not admit. */
const BUDGET_SPENT = 'kdelta: budget spent';

/** GitHub's secondary limit: about 80 content-creating requests a minute. */
export const WRITES_PER_MINUTE = 80;

export interface GitHubForge extends Forge {
  readonly serverUrl: string;
  readonly apiUrl: string;
  /** Requests made: reads (GET) and writes (everything else, GraphQL mutations). */
  readonly requests: { readonly reads: number; readonly writes: number };
}

/** The token the forge would use, or a clear error. */
export function githubToken(options: {
  token?: string | undefined;
  env?: Readonly<Record<string, string | undefined>> | undefined;
}): string {
  const env = options.env ?? process.env;
  const token = options.token || env.GITHUB_TOKEN || env.GH_TOKEN;
  if (!token) {
    throw new ForgeError(
      'missing-token',
      'the github forge needs a token: set GITHUB_TOKEN (in a workflow, from secrets.GITHUB_TOKEN) or GH_TOKEN; it needs contents: write and pull-requests: write on the downstream repositories',
    );
  }
  return token;
}

function graphqlUrlOf(apiUrl: string): string {
  const base = apiUrl.replace(/\/+$/, '');
  return /\/api\/v3$/.test(base) ? `${base.replace(/\/v3$/, '')}/graphql` : `${base}/graphql`;
}

/** What GitHub returns for a pull request (the fields kdelta reads). */
interface PullJson {
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
}

/** What GitHub returns for an issue (the fields kdelta reads). */
interface IssueJson {
  number: number;
  html_url: string;
  title: string;
  body?: string | null;
  pull_request?: unknown;
  /** Who opened it. */
  user?: { login?: string } | null;
}

function dashboardOf(issue: IssueJson): DashboardRecord {
  return { id: String(issue.number), body: issue.body ?? '', url: issue.html_url };
}

interface Record_ {
  pull: PullJson;
  downstream: string;
  repoUrl: string;
  status?: ProposalStatus | undefined;
}

/** The forge's own marker, appended when the body does not carry the fingerprint itself. */
const MARKER = /\n?<!-- kdelta-fingerprint: ([A-Za-z0-9._-]+) -->\n?$/;

type FingerprintIn = (body: string) => string | undefined;

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

function labelsOf(pull: PullJson): string[] {
  return (pull.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean);
}

const MAX_BODY_CHARS = 65_536;

/** A blob's bytes as they are (runGit reads text). */
async function blobBytes(dir: string, sha: string): Promise<Buffer> {
  const { stdout } = await promisify(execFile)('git', ['cat-file', 'blob', sha], {
    cwd: dir,
    encoding: 'buffer',
    maxBuffer: 512 * 1024 * 1024,
  });
  return stdout;
}

/** Where the single token came from, as a refusal names it. */
function tokenNameOf(options: GitHubForgeOptions, env: Readonly<Record<string, string | undefined>>): string {
  if (options.tokenName) return options.tokenName;
  if (options.token) return 'the token given to kdelta';
  return env.GITHUB_TOKEN ? 'GITHUB_TOKEN' : 'GH_TOKEN';
}

export function createGitHubForge(options: GitHubForgeOptions = {}): GitHubForge {
  const env = options.env ?? process.env;
  const clock = options.clock ?? realClock;
  const serverUrl = (options.serverUrl ?? env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '');
  const apiUrl = (options.apiUrl ?? env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, '');
  const graphqlUrl = options.graphqlUrl ?? env.GITHUB_GRAPHQL_URL ?? graphqlUrlOf(apiUrl);
  const app = githubAppOf(options.app, env);
  const tokens: TokenSource = app
    ? appTokens(app, { apiUrl, clock, onToken: options.onToken })
    : singleToken(githubToken({ token: options.token, env }), tokenNameOf(options, env));
  const prefix = options.branchPrefix ?? 'kdelta/';
  const draftPolicy = options.draft ?? 'conflicts';
  const counts = { reads: 0, writes: 0 };
  const fingerprintIn = options.fingerprintIn ?? noFingerprint;

  const Kit = Octokit.plugin(throttling, retry);
  const pacing = options.pacing ?? {};
  const immediate = { key: () => ({ schedule: (_opts: unknown, fn: (...a: unknown[]) => unknown, ...args: unknown[]) => fn(...args) }) };
  const budget = options.budget;
  const perMinute = pacing.writesPerMinute ?? WRITES_PER_MINUTE;
  /** When the content-creating requests of the last minute were sent (clock time). */
  const sent: number[] = [];
  /**
   * Every request that reaches the server goes through here, retries included: writes are paced
   * (at most `perMinute` in any minute) and admitted by the budget, whose ceiling they never pass;
   * each answer's rate-limit headers go to the budget.
   */
  const paced = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? 'GET').toUpperCase();
    const body = typeof init?.body === 'string' ? init.body : '';
    const isGraphql = String(url).split('?')[0] === graphqlUrl;
    const write = isGraphql ? /"query":"\s*mutation\b/.test(body) : method !== 'GET' && method !== 'HEAD';
    if (write) {
      for (;;) {
        const t = clock.now();
        while (sent.length > 0 && sent[0]! <= t - 60_000) sent.shift();
        if (sent.length < perMinute) break;
        await clock.sleep(sent[0]! + 60_000 - t);
      }
      if (budget && !budget.admit()) {
        // Answered here, never sent: a 400 is what Octokit's retry and throttling leave alone.
        return new Response(JSON.stringify({ message: BUDGET_SPENT }), { status: 400, headers: { 'content-type': 'application/json' } });
      }
      sent.push(clock.now());
      counts.writes++;
    } else counts.reads++;
    const response = await fetch(url, init);
    const remaining = response.headers.get('x-ratelimit-remaining');
    // A refusal for the primary limit (403 or 429 with none remaining) holds until x-ratelimit-reset,
    // which Octokit's throttling waits for before sending the request again: not a ceiling for that retry.
    const primaryRefusal = (response.status === 403 || response.status === 429) && remaining === '0';
    // only a real answer speaks for the server (a proxy's error page carries no headers either)
    if (remaining !== null && !primaryRefusal) budget?.observe(Number(remaining));
    else if (response.ok) budget?.observe(undefined);
    return response;
  };
  const octokit = new Kit({
    ...(tokens.app ? {} : { auth: tokens.cachedFor('') }),
    baseUrl: apiUrl,
    request: { fetch: paced },
    userAgent: USER_AGENT,
    throttle: {
      // Primary limits: wait once for the reset when it is near; secondary limits: follow retry-after, three times.
      onRateLimit: (retryAfter: number, _o: unknown, _k: unknown, retryCount: number) => retryCount < 1 && retryAfter <= 120,
      onSecondaryRateLimit: (_retryAfter: number, _o: unknown, _k: unknown, retryCount: number) => retryCount < 3,
      ...(pacing.retryAfterUnitMs !== undefined ? { retryAfterBaseValue: pacing.retryAfterUnitMs } : {}),
      ...(pacing.writeSpacing === false ? { write: immediate as never, notifications: immediate as never } : {}),
    },
    retry: { retries: 2, ...(pacing.retryAfterUnitMs !== undefined ? { retryAfterBaseValue: pacing.retryAfterUnitMs } : {}) },
  });
  octokit.hook.before('request', async (o) => {
    documentedHeaders(o);
    // A GitHub App: the installation token of the repository's owner (GraphQL calls bring theirs).
    const owner = (o as { owner?: unknown }).owner;
    const repo = (o as { repo?: unknown }).repo;
    if (tokens.app && !o.headers.authorization && typeof owner === 'string' && typeof repo === 'string') {
      o.headers.authorization = `token ${await tokens.tokenFor(owner, repo)}`;
    }
  });

  const repoOf = (url: string): GitHubRepo => {
    const m = githubRepoOf(url, serverUrl);
    if (!m.ok) throw new ForgeError('unsupported-repository', m.error);
    return m.value;
  };
  const keyOf = (r: GitHubRepo) => `${r.owner}/${r.repo}`;

  /** A forge error as it is (a missing installation, the budget), any other as GitHub's refusal, naming the token. */
  const failure = (error: unknown, what: string, owner: string | undefined) => {
    if (error instanceof ForgeError) return error;
    if ((error as { response?: { data?: { message?: unknown } } }).response?.data?.message === BUDGET_SPENT) {
      return new ForgeError(
        'budget-spent',
        `cannot ${what}: the run's API write budget (${budget?.limit}) is spent, retries included: the request was not sent; the next run continues`,
      );
    }
    return new ForgeError(githubErrorCode(error), describeGitHubError(error, what, tokens.nameFor(owner), owner));
  };

  async function call<T>(what: string, route: string, params: Record<string, unknown>): Promise<T> {
    try {
      return (await octokit.request(route, params)).data as T;
    } catch (error) {
      throw failure(error, what, typeof params.owner === 'string' ? params.owner : undefined);
    }
  }

  async function graphql(what: string, repo: GitHubRepo, query: string, variables: Record<string, unknown>): Promise<void> {
    let data: { errors?: Array<{ message?: string }> };
    try {
      const headers = tokens.app ? { authorization: `token ${await tokens.tokenFor(repo.owner, repo.repo)}` } : {};
      data = (await octokit.request(`POST ${graphqlUrl}`, { query, variables, headers })).data as typeof data;
    } catch (error) {
      throw failure(error, what, repo.owner);
    }
    if (data.errors && data.errors.length > 0)
      throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: ${data.errors.map((e) => e.message).join('; ')}`);
  }

  /** Who the forge writes as, per token (an App's installation token per owner): read once. */
  const logins = new Map<string, Promise<string>>();

  /**
   * The login of the token's owner, as GitHub's GraphQL `viewer` names it: a user, or an App's
   * installation as `<slug>[bot]` (REST's GET /user refuses installation tokens, GITHUB_TOKEN's too).
   */
  function ownLogin(repo: GitHubRepo): Promise<string> {
    const key = tokens.app ? repo.owner.toLowerCase() : '';
    let hit = logins.get(key);
    if (!hit) {
      hit = (async () => {
        const what = 'read who the token is (the GraphQL viewer)';
        let data: { data?: { viewer?: { login?: unknown } }; errors?: Array<{ message?: string }> };
        try {
          const headers = tokens.app ? { authorization: `token ${await tokens.tokenFor(repo.owner, repo.repo)}` } : {};
          data = (await octokit.request(`POST ${graphqlUrl}`, { query: 'query { viewer { login } }', headers })).data as typeof data;
        } catch (error) {
          throw failure(error, what, repo.owner);
        }
        const login = data.data?.viewer?.login;
        if (typeof login !== 'string' || login === '') {
          const why = (data.errors ?? []).map((e) => e.message).join('; ') || 'no login in the answer';
          throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: ${why}`);
        }
        return login;
      })();
      hit.catch(() => logins.delete(key));
      logins.set(key, hit);
    }
    return hit;
  }

  /** Open pull requests of a repository, read once per run (all pages), kept current after writes. */
  const open = new Map<string, Promise<Map<number, Record_>>>();
  /** Repositories this forge has seen, for list(). */
  const seen = new Map<string, { downstream: string; repoUrl: string; repo: GitHubRepo }>();
  /** Closed as merged by this run (GitHub itself can only say closed). */
  const mergedByRun = new Set<string>();
  /** Statuses this run posted, by `<owner>/<repo>@<commit>`. */
  const statuses = new Map<string, ProposalStatus>();
  /**
   * The commit kdelta pushed for a pull request (`<owner>/<repo>#<number>`), as the run said: GitHub
   * moves `head.sha` to a push only later, so a status read back or posted belongs on this one.
   */
  const pushed = new Map<string, string>();

  /**
   * Every page of a list: the `link` header's next page until there is none (GitHub's documented
   * way; a page's length says nothing). `enough` stops early once a page holds what is looked for;
   * `itemsOf` finds the page's items in an answer that is not a bare list (a combined status).
   */
  async function allPages<T>(
    what: string,
    route: string,
    params: Record<string, unknown>,
    enough?: (batch: T[]) => boolean,
    itemsOf: (data: unknown) => T[] = (data) => data as T[],
  ): Promise<T[]> {
    const owner = typeof params.owner === 'string' ? params.owner : undefined;
    const repoName = typeof params.repo === 'string' ? params.repo : '';
    const out: T[] = [];
    const followed = new Set<string>();
    let response: { data: unknown; headers: { link?: string | undefined } };
    try {
      response = await octokit.request(route, params);
    } catch (error) {
      throw failure(error, what, owner);
    }
    for (;;) {
      const batch = itemsOf(response.data);
      out.push(...batch);
      if (enough?.(batch)) return out;
      const next = nextPageOf(response.headers.link, apiUrl);
      if (!next.ok) throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: ${next.error}`);
      if (next.url === undefined) return out;
      if (followed.has(next.url))
        throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: the next page's link repeats ${next.url}`);
      followed.add(next.url);
      try {
        // a URL of GitHub's own carries no owner parameter: a GitHub App's token goes with it here
        const headers = tokens.app && owner ? { authorization: `token ${await tokens.tokenFor(owner, repoName)}` } : {};
        response = await octokit.request(`GET ${next.url}`, { headers });
      } catch (error) {
        throw failure(error, what, owner);
      }
    }
  }

  function pages(repo: GitHubRepo, state: 'open' | 'all'): Promise<PullJson[]> {
    return allPages<PullJson>(`list the pull requests of ${keyOf(repo)}`, 'GET /repos/{owner}/{repo}/pulls', {
      ...repo,
      state,
      per_page: 100,
    });
  }

  function remember(target: { downstream: string; repo: string }, repo: GitHubRepo) {
    if (!seen.has(keyOf(repo))) seen.set(keyOf(repo), { downstream: target.downstream, repoUrl: target.repo, repo });
  }

  function openPulls(target: ProposalTarget): Promise<Map<number, Record_>> {
    const repo = repoOf(target.repo);
    remember(target, repo);
    const key = keyOf(repo);
    let hit = open.get(key);
    if (!hit) {
      hit = pages(repo, 'open').then(
        (pulls) => new Map(pulls.map((p) => [p.number, { pull: p, downstream: target.downstream, repoUrl: target.repo }])),
      );
      hit.catch(() => open.delete(key));
      open.set(key, hit);
    }
    return hit;
  }

  const sameRepo = (p: PullJson, repo: GitHubRepo) =>
    !p.head.repo?.full_name || p.head.repo.full_name.toLowerCase() === keyOf(repo).toLowerCase();

  function toProposal(r: Record_, state?: Proposal['state']): Proposal {
    const { body, fingerprint } = decodeBody(r.pull.body ?? '', fingerprintIn);
    const id = `${r.pull.number}`;
    const repoKey = keyOf(repoOf(r.repoUrl));
    const merged = mergedByRun.has(`${repoKey}#${id}`);
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
      state: state ?? (r.pull.state === 'open' ? 'open' : r.pull.merged_at || merged ? 'merged' : closedState(r.pull, body)),
      url: r.pull.html_url,
      status: statuses.get(`${repoKey}@${commit}`) ?? r.status,
      labels: labelsOf(r.pull),
      draft: Boolean(r.pull.draft),
      autoMerge: Boolean(r.pull.auto_merge),
    };
  }

  /**
   * A pull request closed unmerged: `closed` when kdelta closed it (its body says so, written in
   * the request that closed it), `merged` when kdelta closed it because its content reached the
   * base, `declined` when a person closed it (unless labelled to propose again).
   */
  function closedState(pull: PullJson, body: string): Proposal['state'] {
    const by = options.closes?.read(body);
    if (by?.by === 'kdelta') return by.state;
    return by?.by === 'person' && !labelsOf(pull).includes(PROPOSE_AGAIN_LABEL) ? 'declined' : 'closed';
  }

  /** The last closed pull request of each target, read once per run (only for a target with no open one). */
  const closedLast = new Map<string, Promise<PullJson | undefined>>();

  function lastClosed(target: ProposalTarget, repo: GitHubRepo): Promise<PullJson | undefined> {
    const key = `${keyOf(repo)}\0${target.head}\0${target.base}`;
    let hit = closedLast.get(key);
    if (!hit) {
      // `head` filters on `owner:branch`; the newest first (GitHub's default order for `created`)
      hit = call<PullJson[]>(`list the closed pull requests of ${target.head} in ${keyOf(repo)}`, 'GET /repos/{owner}/{repo}/pulls', {
        ...repo,
        state: 'closed',
        head: `${repo.owner}:${target.head}`,
        base: target.base,
        per_page: 10,
      }).then((pulls) =>
        pulls
          .filter((p) => p.head.ref === target.head && p.base.ref === target.base && sameRepo(p, repo))
          .reduce<PullJson | undefined>((last, p) => (!last || last.number < p.number ? p : last), undefined),
      );
      hit.catch(() => closedLast.delete(key));
      closedLast.set(key, hit);
    }
    return hit;
  }

  async function findRecord(target: ProposalTarget): Promise<Record_ | undefined> {
    const pulls = await openPulls(target);
    const repo = repoOf(target.repo);
    for (const r of pulls.values()) {
      if (r.pull.state === 'open' && r.pull.head.ref === target.head && r.pull.base.ref === target.base && sameRepo(r.pull, repo)) return r;
    }
    return undefined;
  }

  /** GitHub offers draft pull requests in public repositories, and in private ones on paid plans only. */
  const draftsUnsupported = (error: unknown) =>
    /draft pull requests are not supported/i.test(
      `${(error as Error).message ?? ''} ${JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? '')}`,
    );
  const draftsMissing = (repo: GitHubRepo, what: string) =>
    `GitHub offers no draft pull requests in ${keyOf(repo)} (a private repository on GitHub Free or Pro): ${what}`;

  /** The run decides readiness (review-gate.ts); the draft policy says what it means here. */
  const wantsDraft = (input: ProposalInput) => draftPolicy === 'always' || (draftPolicy === 'conflicts' && input.review?.ready === false);
  /** Whether the run lets it merge without a person: without its word, never. */
  const mayAutoMerge = (input: ProposalInput) => input.review?.autoMerge === true;

  async function decorate(r: Record_, input: ProposalInput, created: boolean, warnings: string[]): Promise<void> {
    const repo = repoOf(input.repo);
    const n = r.pull.number;
    const where = `pull request #${n} of ${keyOf(repo)}`;
    const have = new Set(labelsOf(r.pull));
    const missing = (options.labels ?? []).filter((l) => !have.has(l));
    // Labels, assignees and reviews each stand alone: one GitHub refuses (a label name over its
    // 50 characters, a reviewer who is not a collaborator) is a warning, and the rest still happens.
    if (missing.length > 0) {
      try {
        const labels = await call<Array<{ name: string }>>(`label ${where}`, 'POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
          ...repo,
          issue_number: n,
          labels: missing,
        });
        r.pull = { ...r.pull, labels: labels.map((l) => ({ name: l.name })) };
      } catch (error) {
        if (error instanceof ForgeError && error.code === 'budget-spent') throw error;
        warnings.push((error as Error).message);
      }
    }
    if (created && (options.assignees ?? []).length > 0) {
      try {
        await call(`assign ${where}`, 'POST /repos/{owner}/{repo}/issues/{issue_number}/assignees', {
          ...repo,
          issue_number: n,
          assignees: [...options.assignees!],
        });
      } catch (error) {
        if (error instanceof ForgeError && error.code === 'budget-spent') throw error;
        warnings.push((error as Error).message);
      }
    }
    if (created && ((options.reviewers ?? []).length > 0 || (options.teamReviewers ?? []).length > 0)) {
      try {
        await call(`request reviews on ${where}`, 'POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers', {
          ...repo,
          pull_number: n,
          reviewers: [...(options.reviewers ?? [])],
          team_reviewers: [...(options.teamReviewers ?? [])],
        });
      } catch (error) {
        // The pull request stands without them (a reviewer may be its author, or not a collaborator).
        warnings.push((error as Error).message);
      }
    }
    const draft = wantsDraft(input);
    // readiness not given: the draft state is left as it is
    if (!created && Boolean(r.pull.draft) !== draft && draftPolicy !== 'always' && input.review?.ready !== undefined) {
      try {
        await graphql(
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
    const autoMerge = options.autoMerge;
    const held = !mayAutoMerge(input) || Boolean(r.pull.draft);
    if (autoMerge && !held && !r.pull.auto_merge) {
      try {
        await graphql(
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

  async function disableAutoMerge(r: Record_, repo: GitHubRepo, where: string): Promise<void> {
    await graphql(
      `disable auto-merge on ${where}`,
      repo,
      'mutation($id: ID!) { disablePullRequestAutoMerge(input: {pullRequestId: $id}) { pullRequest { id } } }',
      { id: r.pull.node_id },
    );
    r.pull = { ...r.pull, auto_merge: null };
  }

  /**
   * Merge a clean pull request with the chosen method, at the commit kdelta pushed (GitHub
   * refuses when the head moved since); when GitHub says no, it stays open and a warning says why.
   */
  async function mergeClean(r: Record_, input: ProposalInput, method: AutoMergeMethod, where: string, warnings: string[]): Promise<void> {
    const repo = repoOf(input.repo);
    const sha = input.headCommit;
    try {
      await call(`merge ${where}`, 'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        ...repo,
        pull_number: r.pull.number,
        merge_method: method,
        ...(sha ? { sha } : {}),
      });
    } catch (error) {
      warnings.push(`auto-merge: ${where} is ready to merge but was left open: ${(error as Error).message}`);
      return;
    }
    mergedByRun.add(`${keyOf(repo)}#${r.pull.number}`);
    r.pull = { ...r.pull, state: 'closed', merged_at: new Date().toISOString() };
    warnings.push(`auto-merge: ${where} had nothing to wait for (no required check pending): merged now (${method})`);
  }

  async function postStatus(proposal: Proposal, status: ProposalStatus, sha: string): Promise<void> {
    const repo = repoOf(proposal.repo);
    pushed.set(`${keyOf(repo)}#${proposal.id}`, sha);
    await call(`record a status on ${sha.slice(0, 12)} in ${keyOf(repo)}`, 'POST /repos/{owner}/{repo}/statuses/{sha}', {
      ...repo,
      sha,
      state: status.state,
      // GitHub's limit is 140 characters: cut between characters, never inside a surrogate pair
      description: [...status.description].slice(0, 140).join(''),
      context: 'kdelta',
    });
    statuses.set(`${keyOf(repo)}@${sha}`, status);
  }

  const forge: GitHubForge = {
    name: 'github',
    tracksMerges: true,
    serverUrl,
    apiUrl,
    requests: counts,

    async find(target) {
      const r = await findRecord(target);
      return r ? toProposal(r) : undefined;
    },

    async upsert(input: ProposalInput): Promise<UpsertResult> {
      const repo = repoOf(input.repo);
      const pulls = await openPulls(input);
      const stored = encodeBody(input.body, input.fingerprint, fingerprintIn);
      if (stored.length > MAX_BODY_CHARS) {
        throw new ForgeError(
          'body-too-long',
          `the body of ${input.head} has ${stored.length} characters, over GitHub's limit of ${MAX_BODY_CHARS}`,
        );
      }
      const warnings: string[] = [];
      let r = await findRecord(input);
      const remember = (n: number) => {
        if (input.headCommit) pushed.set(`${keyOf(repo)}#${n}`, input.headCommit);
      };
      if (r) remember(r.pull.number);
      let created = false;
      if (!r) {
        try {
          const openPull = (draft: boolean) =>
            octokit.request('POST /repos/{owner}/{repo}/pulls', {
              ...repo,
              title: input.title,
              head: input.head,
              base: input.base,
              body: stored,
              draft,
            });
          const pull = await openPull(wantsDraft(input)).catch((error: unknown) => {
            if (!wantsDraft(input) || !draftsUnsupported(error)) throw error;
            warnings.push(draftsMissing(repo, `the pull request for ${input.head} is opened ready for review`));
            return openPull(false);
          });
          r = { pull: pull.data as unknown as PullJson, downstream: input.downstream, repoUrl: input.repo };
          pulls.set(r.pull.number, r);
          remember(r.pull.number);
          created = true;
        } catch (error) {
          const text = JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? '');
          if ((error as { status?: number }).status !== 422 || !/already exists/i.test(text)) {
            throw failure(error, `open the pull request for ${input.head} in ${keyOf(repo)}`, repo.owner);
          }
          // Opened since the list was read (another run): read it again and update that one.
          open.delete(keyOf(repo));
          r = await findRecord(input);
          if (!r)
            throw new ForgeError(
              'github-request-failed',
              `GitHub: a pull request for ${input.head} into ${input.base} exists in ${keyOf(repo)} but cannot be found`,
            );
          remember(r.pull.number);
        }
      }
      let changed = created;
      if (!created) {
        const patch: Record<string, string> = {};
        if (r.pull.title !== input.title) patch.title = input.title;
        if ((r.pull.body ?? '') !== stored) patch.body = stored;
        if (Object.keys(patch).length > 0) {
          const data = await call<PullJson>(
            `update pull request #${r.pull.number} of ${keyOf(repo)}`,
            'PATCH /repos/{owner}/{repo}/pulls/{pull_number}',
            {
              ...repo,
              pull_number: r.pull.number,
              ...patch,
            },
          );
          r.pull = { ...r.pull, ...data, labels: data.labels ?? r.pull.labels };
          changed = true;
        }
      }
      if (changed) {
        try {
          await decorate(r, input, created, warnings);
        } catch (error) {
          // The pull request is open (or updated): what did not follow is a warning, not a failure.
          warnings.push((error as Error).message);
        }
      }
      // Auto-merge on where the run holds it back (whoever turned it on) is turned off, or the
      // upsert fails: not a warning, as a pull request that merges unreviewed cannot be taken back.
      if (r.pull.auto_merge && (!mayAutoMerge(input) || r.pull.draft)) {
        await disableAutoMerge(r, repo, `pull request #${r.pull.number} of ${keyOf(repo)}`);
        changed = true;
      }
      return { proposal: toProposal(r), created, changed, ...(warnings.length > 0 ? { warnings } : {}) };
    },

    async close(proposal, state = 'closed') {
      const repo = repoOf(proposal.repo);
      const n = Number(proposal.id);
      // kdelta's own close says so in the same request, so that a close without it is a person's
      const marked =
        options.closes && state !== 'declined'
          ? { body: encodeBody(options.closes.mark(proposal.body, state), proposal.fingerprint, fingerprintIn) }
          : {};
      const data = await call<PullJson>(`close pull request #${n} of ${keyOf(repo)}`, 'PATCH /repos/{owner}/{repo}/pulls/{pull_number}', {
        ...repo,
        pull_number: n,
        state: 'closed',
        ...marked,
      });
      const pulls = await openPulls(proposal);
      pulls.delete(n);
      if (state === 'merged') mergedByRun.add(`${keyOf(repo)}#${n}`);
      return toProposal({ pull: data, downstream: proposal.downstream, repoUrl: proposal.repo }, data.merged_at ? 'merged' : state);
    },

    ...(options.closes
      ? {
          async declined(target: ProposalTarget) {
            if (await findRecord(target)) return undefined;
            const repo = repoOf(target.repo);
            const last = await lastClosed(target, repo);
            if (!last) return undefined;
            const p = toProposal({ pull: last, downstream: target.downstream, repoUrl: target.repo });
            return p.state === 'declined' ? p : undefined;
          },
        }
      : {}),

    async setStatus(proposal, status, commit) {
      const repo = repoOf(proposal.repo);
      const r = (await openPulls(proposal)).get(Number(proposal.id));
      const sha = commit ?? pushed.get(`${keyOf(repo)}#${proposal.id}`) ?? r?.pull.head.sha;
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
      const repo = repoOf(proposal.repo);
      // the latest status of each context, page after page until kdelta's is found
      const ours = (s: { context?: string }) => s.context === 'kdelta';
      const statuses = await allPages<{ context?: string }>(
        `read the statuses of ${sha.slice(0, 12)} in ${keyOf(repo)}`,
        'GET /repos/{owner}/{repo}/commits/{ref}/status',
        { ...repo, ref: sha, per_page: 100 },
        (batch) => batch.some(ours),
        (data) => (data as { statuses?: Array<{ context?: string }> }).statuses ?? [],
      );
      if (statuses.some(ours)) return false;
      // One write outside any job's reservation: taken from the budget, or left for a later run.
      const release = options.budget ? options.budget.reserve(1) : () => {};
      if (!release) return false;
      try {
        await postStatus(proposal, status, sha);
      } finally {
        release();
      }
      return true;
    },

    async list(repositories = []) {
      for (const r of repositories) {
        const m = githubRepoOf(r.repo, serverUrl);
        if (m.ok) remember(r, m.value);
      }
      const out: Proposal[] = [];
      for (const { downstream, repoUrl, repo } of seen.values()) {
        const latest = new Map<string, PullJson>();
        for (const p of await pages(repo, 'all')) {
          if (!p.head.ref.startsWith(prefix) || !sameRepo(p, repo)) continue;
          const key = `${p.head.ref}\0${p.base.ref}`;
          const before = latest.get(key);
          if (!before || before.number < p.number) latest.set(key, p);
        }
        for (const p of latest.values()) out.push(toProposal({ pull: p, downstream, repoUrl }));
      }
      return out;
    },

    async readDashboard(target) {
      const repo = dashboardRepo(target);
      // The open issue this forge's own identity opened, with the title and the hidden marker: an
      // issue anyone else opened (before kdelta's first run, say) is never read, so its ticks are
      // no one's decisions. The list holds pull requests too.
      const me = await ownLogin(repo);
      const ours = (i: IssueJson) =>
        !i.pull_request &&
        (i.user?.login ?? '').toLowerCase() === me.toLowerCase() &&
        i.title === target.title &&
        (i.body ?? '').includes(target.marker);
      const issues = await allPages<IssueJson>(
        `list the issues of ${keyOf(repo)}`,
        'GET /repos/{owner}/{repo}/issues',
        { ...repo, state: 'open', creator: me, sort: 'created', direction: 'asc', per_page: 100 },
        (batch) => batch.some(ours),
      );
      const found = issues.find(ours);
      return found ? dashboardOf(found) : undefined;
    },

    async writeDashboard(target, body, existing) {
      const repo = dashboardRepo(target);
      if (body.length > MAX_BODY_CHARS) {
        throw new ForgeError('body-too-long', `the dashboard has ${body.length} characters, over GitHub's limit of ${MAX_BODY_CHARS}`);
      }
      const issue = existing
        ? await call<IssueJson>(
            `update the dashboard #${existing.id} of ${keyOf(repo)}`,
            'PATCH /repos/{owner}/{repo}/issues/{issue_number}',
            {
              ...repo,
              issue_number: Number(existing.id),
              title: target.title,
              body,
            },
          )
        : await call<IssueJson>(`open the dashboard issue in ${keyOf(repo)}`, 'POST /repos/{owner}/{repo}/issues', {
            ...repo,
            title: target.title,
            body,
          });
      return dashboardOf(issue);
    },

    writeCost(op: WriteOperation): number {
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
          const autoMerge = options.autoMerge ? 1 : 0;
          // created: open (as a draft or not), label, assign, request reviews, enable auto-merge;
          // updated: edit, label, turn into a draft or back, enable or disable auto-merge
          return op.created
            ? 1 + labels + some(options.assignees) + Math.max(some(options.reviewers), some(options.teamReviewers)) + autoMerge
            : 1 + labels + (draftPolicy === 'always' ? 0 : 1) + autoMerge;
        }
      }
    },

    ...(options.signedCommits ? { publishCommit: (input: PublishCommitInput) => publishCommit(input) } : {}),

    gitToken(url: string) {
      const m = githubRepoOf(url, serverUrl);
      return m.ok ? tokens.cachedFor(m.value.owner) : undefined;
    },

    gitTokenName(url: string) {
      const m = githubRepoOf(url, serverUrl);
      return m.ok ? tokens.nameFor(m.value.owner) : undefined;
    },

    async prepareGitToken(url: string) {
      const m = githubRepoOf(url, serverUrl);
      if (m.ok && tokens.app) await tokens.tokenFor(m.value.owner, m.value.repo);
    },

    compareUrl(upstreamRepo, from, to) {
      return compareUrlOf(upstreamRepo, from, to, serverUrl);
    },
    commitUrl: (upstreamRepo, sha) => commitUrlOf(upstreamRepo, sha, serverUrl),
  };

  function dashboardRepo(target: DashboardTarget): GitHubRepo {
    const m = /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+)$/.exec(target.repository ?? '');
    if (!m) {
      throw new ForgeError(
        'unsupported-repository',
        `the dashboard's repository must be owner/name on ${serverUrl} (got ${JSON.stringify(target.repository ?? '')})`,
      );
    }
    return { owner: m[1]!, repo: m[2]! };
  }

  /**
   * The commit through the git data API: blobs for the changed files, a tree on the base's tree,
   * the commit (author given, committer left to GitHub, which signs it), then the branch.
   */
  async function publishCommit(input: PublishCommitInput): Promise<string> {
    const repo = repoOf(input.target.repo);
    const where = `${input.target.head} in ${keyOf(repo)}`;
    const diff = (await runGit(['diff-tree', '-r', '-z', '--no-renames', input.baseCommit, input.commit], { cwd: input.dir })).stdout;
    const fields = diff.split('\0').filter((s) => s !== '');
    const tree: Array<{ path: string; mode: string; type: 'blob'; sha: string | null }> = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      // `:<old mode> <new mode> <old sha> <new sha> <status>` then the path
      const [, newMode, newSha, status] = /^:\d+ (\d+) [0-9a-f]+ ([0-9a-f]+) ([A-Z])/.exec(fields[i]!) ?? [];
      const path = fields[i + 1]!;
      if (status === 'D') {
        tree.push({ path, mode: '100644', type: 'blob', sha: null });
        continue;
      }
      const content = await blobBytes(input.dir, newSha!);
      const blob = await call<{ sha: string }>(`upload ${path} for ${where}`, 'POST /repos/{owner}/{repo}/git/blobs', {
        ...repo,
        content: content.toString('base64'),
        encoding: 'base64',
      });
      tree.push({ path, mode: newMode!, type: 'blob', sha: blob.sha });
    }
    const baseTree = (await runGit(['rev-parse', `${input.baseCommit}^{tree}`], { cwd: input.dir })).stdout.trim();
    const madeTree = await call<{ sha: string }>(`write the tree for ${where}`, 'POST /repos/{owner}/{repo}/git/trees', {
      ...repo,
      base_tree: baseTree,
      tree,
    });
    const commit = await call<{ sha: string }>(`make the commit for ${where}`, 'POST /repos/{owner}/{repo}/git/commits', {
      ...repo,
      message: input.message,
      tree: madeTree.sha,
      parents: [input.baseCommit],
      author: { name: input.author.name, email: input.author.email },
    });
    const ref = `heads/${input.target.head}`;
    // The ref goes into the path segment by segment (a `{ref}` parameter would encode its slashes).
    const refPath = ref.split('/').map(encodeURIComponent).join('/');
    if (input.expectedHead) {
      const now = await call<{ object: { sha: string } }>(`read ${where}`, `GET /repos/{owner}/{repo}/git/ref/${refPath}`, { ...repo });
      if (now.object.sha !== input.expectedHead) {
        throw new ForgeError(
          'branch-moved',
          `branch ${where} moved to ${now.object.sha.slice(0, 12)} since it was read (expected ${input.expectedHead.slice(0, 12)}): left alone`,
        );
      }
      // on the tip it read (a human's commits carried forward): a fast-forward, which GitHub checks
      const force = input.baseCommit !== input.expectedHead;
      await moved(`move ${where}`, () =>
        call(`move ${where}`, `PATCH /repos/{owner}/{repo}/git/refs/${refPath}`, { ...repo, sha: commit.sha, force }),
      );
    } else {
      await moved(`create ${where}`, () =>
        call(`create ${where}`, 'POST /repos/{owner}/{repo}/git/refs', { ...repo, ref: `refs/${ref}`, sha: commit.sha }),
      );
    }
    return commit.sha;
  }

  /**
   * A ref write GitHub refuses because the branch moved since it was read: made by someone else
   * meanwhile (422 "Reference already exists"), or moved off the tip kdelta built on (422 "Update is
   * not a fast forward"). Left alone, as a push whose lease went stale is.
   */
  async function moved(what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (error instanceof ForgeError && /\b422\b.*(reference already exists|not a fast.forward)/i.test(error.message)) {
        const answer = error.message.replace(/^GitHub: cannot .*?: (?=422)/, '');
        throw new ForgeError('branch-moved', `cannot ${what}: it was made or moved since kdelta read it (GitHub: ${answer}): left alone`);
      }
      throw error;
    }
  }

  return forge;
}
