import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { ForgeError } from '../errors.js';
import { appTokens, githubAppOf, realClock, singleToken, type TokenSource } from './auth.js';
import { describeGitHubError, githubErrorCode } from './errors.js';
import { documentedHeaders, USER_AGENT } from './headers.js';
import type { GitHubClientOptions } from './options.js';
import { nextPageOf } from './pages.js';
import { githubRepoOf, type GitHubRepo } from './repo.js';

/**
 * The one client of GitHub's API: Octokit with its throttling (secondary rate limits are waited
 * out after `retry-after`) and retry plugins, the documented headers and API version, writes
 * paced and admitted by the run's budget, pagination by the `link` header, and GitHub's refusals
 * as ForgeErrors naming the token. The forge's modules and the Action's preview comment use it.
 */

/** The answer the client gives itself for a write the budget does not admit. */
const BUDGET_SPENT = 'kdelta: budget spent';

/** GitHub's secondary limit: about 80 content-creating requests a minute. */
export const WRITES_PER_MINUTE = 80;

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

/** Where the single token came from, as a refusal names it. */
function tokenNameOf(options: GitHubClientOptions, env: Readonly<Record<string, string | undefined>>): string {
  if (options.tokenName) return options.tokenName;
  if (options.token) return 'the token given to kdelta';
  return env.GITHUB_TOKEN ? 'GITHUB_TOKEN' : 'GH_TOKEN';
}

export const keyOf = (r: GitHubRepo) => `${r.owner}/${r.repo}`;

type Params = Record<string, unknown>;

export interface GitHubClient {
  readonly serverUrl: string;
  readonly apiUrl: string;
  readonly tokens: TokenSource;
  /** Requests made: reads (GET) and writes (everything else, GraphQL mutations). */
  readonly requests: { readonly reads: number; readonly writes: number };
  /** Where a repository URL lives on the server, or an `unsupported-repository` error. */
  repoOf(url: string): GitHubRepo;
  /** A request's data; a refusal as a ForgeError saying `cannot <what>`. */
  call<T>(what: string, route: string, params: Params): Promise<T>;
  /** A request as Octokit answers it, errors as they are (for a caller that reads GitHub's refusal itself). */
  request(route: string, params: Params): Promise<{ data: unknown }>;
  /** A refusal as the ForgeError the client would throw (a forge error as it is). */
  failure(error: unknown, what: string, owner: string | undefined): ForgeError;
  /** A GraphQL request's answer, with the token of `repo`'s owner. */
  graphqlData<T>(what: string, repo: GitHubRepo, query: string, variables?: Params): Promise<T>;
  /** A GraphQL mutation; the errors it answers with are a ForgeError. */
  graphql(what: string, repo: GitHubRepo, query: string, variables: Params): Promise<void>;
  /**
   * Every page of a list: the `link` header's next page until there is none (GitHub's documented
   * way; a page's length says nothing). `enough` stops early once a page holds what is looked for;
   * `itemsOf` finds the page's items in an answer that is not a bare list (a combined status).
   */
  allPages<T>(
    what: string,
    route: string,
    params: Params,
    enough?: (batch: T[]) => boolean,
    itemsOf?: (data: unknown) => T[],
  ): Promise<T[]>;
}

export function createGitHubClient(options: GitHubClientOptions = {}): GitHubClient {
  const env = options.env ?? process.env;
  const clock = options.clock ?? realClock;
  const serverUrl = (options.serverUrl ?? env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '');
  const apiUrl = (options.apiUrl ?? env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, '');
  const graphqlUrl = options.graphqlUrl ?? env.GITHUB_GRAPHQL_URL ?? graphqlUrlOf(apiUrl);
  const app = githubAppOf(options.app, env);
  const tokens: TokenSource = app
    ? appTokens(app, { apiUrl, clock, onToken: options.onToken })
    : singleToken(githubToken({ token: options.token, env }), tokenNameOf(options, env));
  const counts = { reads: 0, writes: 0 };
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

  /** A forge error as it is (a missing installation, the budget), any other as GitHub's refusal, naming the token. */
  const failure = (error: unknown, what: string, owner: string | undefined): ForgeError => {
    if (error instanceof ForgeError) return error;
    if ((error as { response?: { data?: { message?: unknown } } }).response?.data?.message === BUDGET_SPENT) {
      return new ForgeError(
        'budget-spent',
        `cannot ${what}: the run's API write budget (${budget?.limit}) is spent, retries included: the request was not sent; the next run continues`,
      );
    }
    return new ForgeError(githubErrorCode(error), describeGitHubError(error, what, tokens.nameFor(owner)));
  };
  const ownerOf = (params: Params) => (typeof params.owner === 'string' ? params.owner : undefined);
  /** A GitHub App's installation token for `owner`, for a request that names no owner parameter. */
  const appHeaders = async (owner: string | undefined, repo: string) =>
    tokens.app && owner ? { authorization: `token ${await tokens.tokenFor(owner, repo)}` } : {};

  const client: GitHubClient = {
    serverUrl,
    apiUrl,
    tokens,
    requests: counts,
    repoOf(url) {
      const m = githubRepoOf(url, serverUrl);
      if (!m.ok) throw new ForgeError('unsupported-repository', m.error);
      return m.value;
    },
    async call<T>(what: string, route: string, params: Params): Promise<T> {
      try {
        return (await octokit.request(route, params)).data as T;
      } catch (error) {
        throw failure(error, what, ownerOf(params));
      }
    },
    request: (route, params) => octokit.request(route, params),
    failure,
    async graphqlData<T>(what: string, repo: GitHubRepo, query: string, variables?: Params): Promise<T> {
      try {
        const headers = await appHeaders(repo.owner, repo.repo);
        return (await octokit.request(`POST ${graphqlUrl}`, { query, ...(variables ? { variables } : {}), headers })).data as T;
      } catch (error) {
        throw failure(error, what, repo.owner);
      }
    },
    async graphql(what, repo, query, variables) {
      const data = await client.graphqlData<{ errors?: Array<{ message?: string }> }>(what, repo, query, variables);
      if (data.errors && data.errors.length > 0)
        throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: ${data.errors.map((e) => e.message).join('; ')}`);
    },
    async allPages<T>(
      what: string,
      route: string,
      params: Params,
      enough?: (batch: T[]) => boolean,
      itemsOf: (data: unknown) => T[] = (data) => data as T[],
    ): Promise<T[]> {
      const owner = ownerOf(params);
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
          response = await octokit.request(`GET ${next.url}`, { headers: await appHeaders(owner, repoName) });
        } catch (error) {
          throw failure(error, what, owner);
        }
      }
    },
  };
  return client;
}
