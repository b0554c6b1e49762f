import { createPublicKey, createVerify, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildTree, commitTree, git, httpBackend, type Person, resolveRef, writeBlob } from './git.js';
import { handleGraphql } from './graphql.js';
import { type Context, HttpError, handlers, mergePullRequest } from './handlers.js';
import type { CheckRunState, CommentState, IssueState, LabelState, PullState, RepoState, StatusState, Urls } from './objects.js';
import * as o from './objects.js';
import { idOf, now } from './objects.js';
import { loadOperations, matchOperation } from './openapi.js';

export type Permission = 'read' | 'write';

export interface TokenGrant {
  readonly login?: string;
  /** 'all', or GitHub App permissions by name (`contents`, `pull_requests`, `issues`, `statuses`, ...). */
  readonly permissions?: 'all' | Record<string, Permission>;
  /** An installation token reaches only its installation's owner's repositories (others: 404). */
  readonly owner?: string;
  /** Milliseconds on the fake's clock after which the token is refused (401), as an installation token's hour. */
  readonly expiresAt?: number;
  /** What the request log records as its actor (default the login). */
  readonly actor?: string;
}

/** A GitHub App: its private key (the fake verifies the app's JWTs with its public half) and its installations by owner. */
export interface FakeApp {
  readonly id: number;
  readonly clientId?: string;
  readonly slug?: string;
  readonly privateKey: string;
  /** `suspended`: an owner suspended the installation: it is still found, but no token is minted (403, as GitHub). */
  readonly installations: Record<
    string,
    { readonly id: number; readonly permissions?: Record<string, Permission>; readonly suspended?: boolean }
  >;
}

/** The fake's time (milliseconds): tests move it instead of sleeping. */
export interface FakeClock {
  now(): number;
}

export interface FakeGitHubOptions {
  /** Accepted tokens; default `{ ghs_fake: { login: 'kdelta-bot', permissions: 'all' } }`. */
  readonly tokens?: Record<string, TokenGrant>;
  /** Check every request and response against GitHub's OpenAPI description (default true). */
  readonly validate?: boolean;
  /** Where GraphQL is served (default `/api/graphql`, as on GitHub Enterprise Server). */
  readonly graphqlPath?: string;
  /** Whether GraphQL answers `viewer { login }` (default true, as GitHub does). */
  readonly graphqlViewer?: boolean;
  /** Send `x-ratelimit-*` headers (default true; GitHub Enterprise Server with rate limits off sends none). */
  readonly rateLimitHeaders?: boolean;
  /** The primary limit the headers report (default 5000 an hour). */
  readonly rateLimit?: number;
  /** GitHub's secondary limit on content-creating requests a minute (default none), on `clock`. */
  readonly contentCreationPerMinute?: number;
  /** Default: real time. */
  readonly clock?: FakeClock;
  /**
   * At most this many items on a page of a list, whatever `per_page` asks (default 100, GitHub's
   * maximum): GitHub's documentation promises only the `link` header's `rel="next"` for what follows.
   */
  readonly maxPerPage?: number;
  /**
   * Draft pull requests are offered (default true). GitHub offers them in public repositories, and
   * in private ones on paid plans only: false refuses a draft's creation (422) and a conversion to one.
   */
  readonly draftPullRequests?: boolean;
  /**
   * The users and teams that are collaborators of every repository (default: anyone is): a review
   * requested from anyone else is refused (422), as GitHub refuses it.
   */
  readonly collaborators?: readonly string[];
  readonly apps?: readonly FakeApp[];
  /** An installation token's lifetime in milliseconds on `clock` (default an hour, as GitHub's). */
  readonly installationTokenLifetimeMs?: number;
}

export interface RecordedRequest {
  readonly method: string;
  /** Path below the API root (`/repos/o/r/pulls`), or `/graphql`. */
  readonly path: string;
  readonly query: Record<string, string>;
  readonly status: number;
  /** POST/PATCH/PUT/DELETE, and GraphQL mutations. */
  readonly write: boolean;
  /** GitHub's operationId (`pulls/create`), `graphql/<mutation>`, or undefined when no operation matched. */
  readonly operationId: string | undefined;
  /** Who made it: the token's login (an installation token: `installation:<id>`; an App's JWT: `app:<id>`). */
  readonly actor?: string | undefined;
  /** The fake clock's time of the request. */
  readonly at?: number;
  /** The request's `accept`, `user-agent` and `x-github-api-version` headers (GitHub's docs ask for all three). */
  readonly headers?: { readonly accept?: string; readonly userAgent?: string; readonly apiVersion?: string };
}

export interface PullSnapshot {
  number: number;
  node_id: string;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  head: { ref: string; sha: string };
  base: { ref: string };
  labels: string[];
  assignees: string[];
  requested_reviewers: string[];
  requested_teams: string[];
  auto_merge: null | { merge_method: 'merge' | 'squash' | 'rebase' };
}

export interface IssueSnapshot {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  user: string;
  updated_at: string;
}

export interface StatusSnapshot {
  state: string;
  context: string;
  description: string | null;
  target_url: string | null;
  creator: string;
}

export interface FakeGitHub {
  readonly serverUrl: string;
  readonly apiUrl: string;
  readonly graphqlUrl: string;
  readonly token: string;
  readonly requests: RecordedRequest[];
  readonly violations: string[];
  createRepo(
    fullName: string,
    opts?: { defaultBranch?: string; files?: Record<string, string> },
  ): Promise<{ cloneUrl: string; gitDir: string }>;
  gitDir(fullName: string): string;
  pulls(fullName: string): PullSnapshot[];
  /** The issues of a repository (not its pull requests), in the order they were opened. */
  issues(fullName: string): IssueSnapshot[];
  /** A person edits issue `number`'s body (a ticked checkbox is such an edit). */
  editIssue(fullName: string, number: number, body: string): void;
  /** The comments on issue or pull request `number`, oldest first. */
  comments(fullName: string, number: number): { id: number; body: string; user: string }[];
  statuses(fullName: string, sha: string): StatusSnapshot[];
  commitVerified(fullName: string, sha: string): boolean;
  clearRequests(): void;
  writes(): number;
  mergePull(fullName: string, number: number): Promise<string>;
  addLabel(fullName: string, number: number, name: string): void;
  humanCommit(fullName: string, branch: string, files: Record<string, string | null>, message?: string): Promise<string>;
  /**
   * The next `n` API requests are refused with 403: `secondary` (the default), GitHub's secondary
   * limit with `retry-after`; `primary`, the hour's limit reached (`x-ratelimit-remaining: 0`, the
   * window resetting `retryAfterSeconds` from now in `x-ratelimit-reset`, real time as GitHub's).
   * GitHub answers either with 403 or with 429 (`status`).
   */
  rateLimitNext(n?: number, retryAfterSeconds?: number, kind?: 'secondary' | 'primary', status?: 403 | 429): void;
  /** The next `n` API requests are answered `status` (a 502 or 503 of GitHub under load, or of a proxy), unhandled. */
  failNext(n: number, status: number): void;
  /**
   * The next `n` requests to `operationId` are carried out and then answered `status`: a proxy
   * that lost GitHub's answer (a 502 after GitHub opened the pull request).
   */
  failAfterApplying(operationId: string, n: number, status: number): void;
  /** The token is refused from now on (401 from the API and from git), as a revoked token is. */
  revokeToken(token: string): void;
  /**
   * GitHub moves a pull request's head some time after a push: while held, pushes do not move
   * the heads of open pull requests (API answers show the old head); releasing moves them.
   */
  holdHeads(held: boolean): Promise<void>;
  /** Branch protection: these status contexts must be `success` on a pull request's head before it merges. */
  requireStatusChecks(fullName: string, branch: string, contexts: readonly string[]): void;
  /** Installation tokens minted so far, by installation id (to check that none is printed). */
  readonly installationTokens: ReadonlyMap<number, readonly string[]>;
  close(): Promise<void>;
}

export const DEFAULT_TOKEN = 'ghs_fake';
const HUMAN: Person = { name: 'Octo Human', email: 'human@example.com' };

/** Internal state shared with the handlers. */
export class State {
  readonly repos = new Map<
    string,
    RepoState & {
      pulls: PullState[];
      statuses: Map<string, StatusState[]>;
      checkRuns: CheckRunState[];
      labels: Map<string, LabelState>;
      comments: CommentState[];
      issues: IssueState[];
    }
  >();
  readonly verified = new Set<string>();
  /** Required status contexts by `owner/repo` (lower case) and branch. */
  readonly required = new Map<string, Map<string, readonly string[]>>();
  /** Pushes do not move open pull requests' heads (GitHub's asynchronous head update). */
  heldHeads = false;
  /** Items a page holds at most (`FakeGitHubOptions.maxPerPage`). */
  maxPerPage = 100;
  /** `FakeGitHubOptions.draftPullRequests`. */
  drafts = true;
  /** `FakeGitHubOptions.collaborators` (lower case), undefined: anyone. */
  collaborators: ReadonlySet<string> | undefined;
  nextId = 1000;

  constructor(readonly root: string) {}

  repo(fullName: string) {
    return this.repos.get(fullName.toLowerCase());
  }

  requiredChecks(fullName: string, branch: string): readonly string[] {
    return this.required.get(fullName.toLowerCase())?.get(branch) ?? [];
  }

  labelFor(repo: { labels: Map<string, LabelState> }, name: string): LabelState {
    let l = repo.labels.get(name.toLowerCase());
    if (!l) {
      l = { id: idOf('label:' + name), name, color: 'ededed' };
      repo.labels.set(name.toLowerCase(), l);
    }
    return l;
  }

  /** Refresh head/base shas of a repository's PRs from its branches (a push moves them). */
  async refresh(fullName: string): Promise<void> {
    const repo = this.repo(fullName);
    if (!repo) return;
    for (const pr of repo.pulls) {
      if (pr.merged) continue;
      const head = await resolveRef(repo.gitDir, `refs/heads/${pr.head.ref}`);
      if (head && pr.state === 'open' && !this.heldHeads) pr.headSha = head;
      const base = await resolveRef(repo.gitDir, `refs/heads/${pr.base.ref}`);
      if (base && pr.state === 'open') pr.baseSha = base;
    }
  }
}

function requestId(): string {
  const h = () => randomBytes(2).toString('hex').toUpperCase();
  return `${h()}:${h()}${h()}:${h()}${h()}:${h()}${h()}:${randomBytes(4).toString('hex').toUpperCase()}`;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const enc = req.headers['content-encoding'];
      resolve(enc === 'gzip' || enc === 'x-gzip' ? gunzipSync(raw) : raw);
    });
    req.on('error', reject);
  });
}

/** The query text of a GraphQL request body ('' when there is none). */
function graphqlQueryOf(body: Buffer): string {
  try {
    const query = (JSON.parse(body.toString('utf8')) as { query?: unknown }).query;
    return typeof query === 'string' ? query : '';
  } catch {
    return '';
  }
}

interface Credentials {
  token: string | undefined;
}

function credentialsOf(req: IncomingMessage): Credentials {
  const auth = req.headers.authorization;
  if (!auth) return { token: undefined };
  const [scheme, value = ''] = auth.split(/\s+/, 2);
  const s = (scheme ?? '').toLowerCase();
  if (s === 'token' || s === 'bearer') return { token: value };
  if (s === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return { token: colon === -1 ? decoded : decoded.slice(colon + 1) };
  }
  return { token: undefined };
}

export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const tokens: Record<string, TokenGrant> = { ...(options.tokens ?? { [DEFAULT_TOKEN]: { login: 'kdelta-bot', permissions: 'all' } }) };
  const firstToken = Object.keys(tokens)[0] ?? DEFAULT_TOKEN;
  const validate = options.validate ?? true;
  const clock = options.clock ?? { now: () => Date.now() };
  const graphqlPath = options.graphqlPath ?? '/api/graphql';
  const apps = options.apps ?? [];
  const installationTokens = new Map<number, string[]>();
  /** Content-creating requests of the last minute (clock times). */
  const recentWrites: number[] = [];
  const root = await mkdtemp(join(tmpdir(), 'fake-github-'));
  const state = new State(root);
  if (options.maxPerPage !== undefined) state.maxPerPage = options.maxPerPage;
  if (options.draftPullRequests === false) state.drafts = false;
  if (options.collaborators) state.collaborators = new Set(options.collaborators.map((c) => c.toLowerCase()));
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const ops = loadOperations();
  let rateLimited = 0;
  let retryAfter = 1;
  let limitKind: 'secondary' | 'primary' = 'secondary';
  let limitStatus: 403 | 429 = 403;
  let failing = { n: 0, status: 502 };
  const lostAnswers = new Map<string, { n: number; status: number }>();
  let used = 0;
  const resetAt = Math.floor(Date.now() / 1000) + 3600;
  let urls: Urls = { server: '', api: '' };

  const grantOf = (token: string | undefined) => {
    const grant = token !== undefined ? tokens[token] : undefined;
    return grant && (grant.expiresAt === undefined || clock.now() < grant.expiresAt) ? grant : undefined;
  };
  /** An installation token reaches its owner's repositories only. */
  const reaches = (grant: TokenGrant, owner: string | undefined) =>
    grant.owner === undefined || owner === undefined || grant.owner.toLowerCase() === owner.toLowerCase();

  /** The App whose JWT this is (RS256, signed with its private key, `iss` its id or client id), if any. */
  function appOfJwt(token: string | undefined): FakeApp | undefined {
    const parts = (token ?? '').split('.');
    if (parts.length !== 3) return undefined;
    let payload: { iss?: unknown };
    try {
      const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as { alg?: string };
      if (header.alg !== 'RS256') return undefined;
      payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { iss?: unknown };
    } catch {
      return undefined;
    }
    const app = apps.find((a) => String(a.id) === String(payload.iss) || (a.clientId !== undefined && a.clientId === payload.iss));
    if (!app) return undefined;
    const verify = createVerify('RSA-SHA256');
    verify.update(`${parts[0]}.${parts[1]}`);
    return verify.verify(createPublicKey(app.privateKey), Buffer.from(parts[2]!, 'base64url')) ? app : undefined;
  }
  const allows = (grant: TokenGrant, permission: string, level: Permission): boolean => {
    if (permission === 'metadata') return true;
    const p = grant.permissions ?? 'all';
    if (p === 'all') return true;
    const have = p[permission];
    return have === 'write' || (have === 'read' && level === 'read');
  };

  const coreLimit = options.rateLimit ?? 5000;
  function apiHeaders(res: ServerResponse) {
    used++;
    res.setHeader('x-github-request-id', requestId());
    if (options.rateLimitHeaders !== false) {
      res.setHeader('x-ratelimit-limit', String(coreLimit));
      res.setHeader('x-ratelimit-remaining', String(Math.max(0, coreLimit - used)));
      res.setHeader('x-ratelimit-reset', String(resetAt));
      res.setHeader('x-ratelimit-used', String(used));
      res.setHeader('x-ratelimit-resource', 'core');
    }
    res.setHeader('x-github-api-version-selected', '2022-11-28');
    res.setHeader('x-github-media-type', 'github.v3; format=json');
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (status === 204) {
      res.statusCode = 204;
      res.end();
      return;
    }
    const text = JSON.stringify(body);
    res.statusCode = status;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', Buffer.byteLength(text));
    res.end(text);
  }

  const DOCS = 'https://docs.github.com/rest';

  async function handleApi(req: IncomingMessage, res: ServerResponse, path: string, query: Record<string, string>, rawQuery: string) {
    const method = req.method ?? 'GET';
    let actor: string | undefined;
    const record = (status: number, operationId: string | undefined, write: boolean) => {
      const headers = {
        ...(req.headers.accept !== undefined ? { accept: req.headers.accept } : {}),
        ...(req.headers['user-agent'] !== undefined ? { userAgent: req.headers['user-agent'] } : {}),
        ...(typeof req.headers['x-github-api-version'] === 'string' ? { apiVersion: req.headers['x-github-api-version'] } : {}),
      };
      requests.push({ method, path, query, status, write, operationId, actor, at: clock.now(), headers });
    };
    apiHeaders(res);
    const bodyBuf = await readBody(req);
    const isGraphql = path === '/graphql';
    const match = isGraphql ? undefined : matchOperation(ops, method, path);
    const operationId = match && 'op' in match ? match.op.operationId : undefined;
    const write = method !== 'GET' && method !== 'HEAD';

    const token = credentialsOf(req).token;
    if (operationId === 'apps/get-repo-installation' || operationId === 'apps/create-installation-access-token') {
      const app = appOfJwt(token);
      actor = app ? `app:${app.id}` : undefined;
      if (!app) {
        sendJson(res, 401, { message: 'A JSON web token could not be decoded', documentation_url: DOCS, status: '401' });
        record(401, operationId, write);
        return;
      }
      const params = match && 'op' in match ? match.params : {};
      if (validate && match && 'op' in match) {
        let appBody: unknown;
        try {
          appBody = bodyBuf.length ? JSON.parse(bodyBuf.toString('utf8')) : undefined;
        } catch {
          appBody = bodyBuf.toString('utf8');
        }
        const bad = match.op.validateParams(params, query) ?? match.op.validateBody(appBody);
        if (bad) {
          violations.push(`${method} ${path} (${operationId}): ${bad}`);
          sendJson(res, 500, { message: `fake-github: ${bad}`, documentation_url: DOCS, status: '500' });
          record(500, operationId, write);
          return;
        }
      }
      const out = appEndpoint(app, operationId, params);
      if (validate && match && 'op' in match) {
        const bad = match.op.validateResponse(out.status, out.body);
        if (bad) violations.push(`${method} ${path} (${operationId}): ${bad}`);
      }
      sendJson(res, out.status, out.body);
      record(out.status, operationId, write);
      return;
    }
    const grant = grantOf(token);
    actor = grant?.actor ?? grant?.login;
    if (!grant) {
      sendJson(res, 401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
      record(401, operationId, write);
      return;
    }
    const owner = /^\/repos\/([^/]+)\//.exec(path)?.[1];
    if (!reaches(grant, owner)) {
      sendJson(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
      record(404, operationId, write);
      return;
    }
    const isWrite = isGraphql ? /^\s*mutation\b/.test(graphqlQueryOf(bodyBuf)) : write;
    if (isWrite && options.contentCreationPerMinute !== undefined) {
      const t = clock.now();
      while (recentWrites.length > 0 && recentWrites[0]! <= t - 60_000) recentWrites.shift();
      if (recentWrites.length >= options.contentCreationPerMinute) {
        const wait = Math.max(1, Math.ceil((recentWrites[0]! + 60_000 - t) / 1000));
        sendJson(
          res,
          403,
          {
            message:
              'You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.',
            documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
            status: '403',
          },
          { 'retry-after': String(wait) },
        );
        record(403, operationId, write);
        return;
      }
      recentWrites.push(t);
    }
    if (failing.n > 0) {
      failing.n--;
      sendJson(res, failing.status, { message: 'Server Error', documentation_url: DOCS, status: String(failing.status) });
      record(failing.status, operationId, write);
      return;
    }
    // GitHub's primary limit: past it, every request is refused until the window resets
    const overLimit = options.rateLimitHeaders !== false && used > coreLimit;
    if (overLimit || (rateLimited > 0 && limitKind === 'primary')) {
      const status = overLimit ? 403 : limitStatus;
      if (!overLimit) rateLimited--;
      const reset = overLimit ? resetAt : Math.floor(Date.now() / 1000) + retryAfter;
      res.setHeader('x-ratelimit-remaining', '0');
      res.setHeader('x-ratelimit-reset', String(reset));
      sendJson(res, status, {
        message: `API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID ${res.getHeader('x-github-request-id')}.`,
        documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits',
        status: String(status),
      });
      record(status, operationId, write);
      return;
    }
    if (rateLimited > 0) {
      rateLimited--;
      const id = res.getHeader('x-github-request-id');
      sendJson(
        res,
        limitStatus,
        {
          message: `You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later. If you reach out to GitHub Support for help, please include the request ID ${id}.`,
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          status: String(limitStatus),
        },
        { 'retry-after': String(retryAfter) },
      );
      record(limitStatus, operationId, write);
      return;
    }

    let body: unknown;
    if (bodyBuf.length) {
      try {
        body = JSON.parse(bodyBuf.toString('utf8'));
      } catch {
        sendJson(res, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
        record(400, operationId, write);
        return;
      }
    }
    const login = grant.login ?? 'kdelta-bot';
    const ctx: Context = { state, urls, login, query, rawQuery, method, path, viewer: options.graphqlViewer !== false };

    if (isGraphql) {
      const out = await handleGraphql(
        ctx,
        body,
        (permission, level) => allows(grant, permission, level),
        (owner) => reaches(grant, owner),
      );
      sendJson(res, out.status, out.body, out.headers);
      record(out.status, out.operationId, out.write);
      return;
    }
    if (!match) {
      sendJson(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
      record(404, undefined, write);
      return;
    }
    if (!('op' in match)) {
      sendJson(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
      record(404, undefined, write);
      return;
    }
    const { op, params } = match;
    const violation = (reason: string, status: number) => {
      const text = `${method} ${path} (${op.operationId}): ${reason}`;
      violations.push(text);
      sendJson(res, 500, { message: `fake-github: ${text}`, documentation_url: DOCS, status: '500' });
      record(status, op.operationId, write);
    };
    if (validate) {
      const bad = op.validateParams(params, query) ?? op.validateBody(body);
      if (bad) return violation(bad, 500);
    }
    const handler = handlers[op.operationId];
    if (!handler) {
      sendJson(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
      record(404, op.operationId, write);
      return;
    }
    const [permission, level] = handler.permission;
    const alternative = handler.alternative;
    if (!allows(grant, permission, level) && !(alternative && allows(grant, alternative[0], alternative[1]))) {
      sendJson(
        res,
        403,
        { message: 'Resource not accessible by integration', documentation_url: DOCS, status: '403' },
        { 'x-accepted-github-permissions': [handler.permission, alternative].flatMap((p) => (p ? [`${p[0]}=${p[1]}`] : [])).join('; ') },
      );
      record(403, op.operationId, write);
      return;
    }
    let status: number;
    let out: unknown;
    let headers: Record<string, string> = {};
    try {
      const result = await handler.run(ctx, params, body as never);
      status = result.status;
      out = result.body;
      headers = result.headers ?? {};
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      status = e.status;
      out = e.body;
    }
    if (validate && out !== undefined) {
      const bad = op.validateResponse(status, out);
      if (bad) return violation(bad, 500);
    }
    const lost = lostAnswers.get(op.operationId);
    if (lost && lost.n > 0) {
      lost.n--;
      sendJson(res, lost.status, { message: 'Server Error', documentation_url: DOCS, status: String(lost.status) });
      record(lost.status, op.operationId, write);
      return;
    }
    sendJson(res, status, out, headers);
    record(status, op.operationId, write);
  }

  async function handleGit(req: IncomingMessage, res: ServerResponse, pathname: string, rawQuery: string) {
    const m = /^\/([^/]+)\/([^/]+?\.git)(\/.*)?$/.exec(pathname);
    const fullName = m ? `${m[1]}/${m[2]!.replace(/\.git$/, '')}` : '';
    const repo = m ? state.repo(fullName) : undefined;
    if (!m || !repo) {
      res.statusCode = 404;
      res.end('Repository not found.\n');
      return;
    }
    const grant = grantOf(credentialsOf(req).token);
    if (grant && !reaches(grant, repo.owner)) {
      res.statusCode = 404;
      res.end('Repository not found.\n');
      return;
    }
    if (!grant) {
      res.statusCode = 401;
      res.setHeader('www-authenticate', 'Basic realm="GitHub"');
      res.end('Invalid username or token. Password authentication is not supported for Git operations.\n');
      return;
    }
    const service = new URLSearchParams(rawQuery).get('service') ?? (m[3] ?? '').replace(/^\//, '');
    const pushing = service === 'git-receive-pack';
    if (!allows(grant, 'contents', pushing ? 'write' : 'read')) {
      res.statusCode = 403;
      res.end(`Permission to ${fullName}.git denied to ${grant.login ?? 'kdelta-bot'}.\n`);
      return;
    }
    const status = await httpBackend(req, res, {
      projectRoot: root,
      pathInfo: `/${repo.owner}/${repo.name}.git${m[3] ?? ''}`,
      query: rawQuery,
      remoteUser: grant.login ?? 'kdelta-bot',
    });
    if (pushing && req.method === 'POST' && status === 200 && !state.heldHeads) {
      repo.pushedAt = now();
      await state.refresh(fullName);
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const rawQuery = url.search.replace(/^\?/, '');
    const query = Object.fromEntries(url.searchParams);
    let work: Promise<void>;
    if (url.pathname === graphqlPath) work = handleApi(req, res, '/graphql', query, rawQuery);
    else if (url.pathname.startsWith('/api/v3/')) work = handleApi(req, res, url.pathname.slice('/api/v3'.length), query, rawQuery);
    else work = handleGit(req, res, url.pathname, rawQuery);
    work.catch((e: unknown) => {
      const text = `${req.method} ${url.pathname}: ${e instanceof Error ? e.message : String(e)}`;
      violations.push(`internal error: ${text}`);
      if (!res.headersSent) sendJson(res, 500, { message: `fake-github: ${text}`, documentation_url: DOCS });
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const serverUrl = `http://127.0.0.1:${port}`;
  urls = { server: serverUrl, api: `${serverUrl}/api/v3` };

  /** The App endpoints: an installation by repository, an installation token (JWT-authenticated). */
  function appEndpoint(app: FakeApp, operationId: string, params: Record<string, string>): { status: number; body: unknown } {
    const slug = app.slug ?? `app-${app.id}`;
    const found = (() => {
      if (operationId === 'apps/get-repo-installation') {
        const repo = state.repo(`${params['owner']}/${params['repo']}`);
        const entry = repo ? Object.entries(app.installations).find(([o]) => o.toLowerCase() === repo.owner.toLowerCase()) : undefined;
        return entry ? { owner: entry[0], ...entry[1] } : undefined;
      }
      const id = Number(params['installation_id']);
      const entry = Object.entries(app.installations).find(([, i]) => i.id === id);
      return entry ? { owner: entry[0], ...entry[1] } : undefined;
    })();
    if (!found) return { status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } };
    const permissions = found.permissions ?? {
      contents: 'write',
      pull_requests: 'write',
      statuses: 'write',
      checks: 'write',
      issues: 'write',
      metadata: 'read',
    };
    if (operationId === 'apps/get-repo-installation') {
      const at = now();
      return {
        status: 200,
        body: {
          id: found.id,
          account: o.user(urls, found.owner),
          repository_selection: 'all',
          access_tokens_url: `${urls.api}/app/installations/${found.id}/access_tokens`,
          repositories_url: `${urls.api}/installation/repositories`,
          html_url: `${urls.server}/organizations/${found.owner}/settings/installations/${found.id}`,
          app_id: app.id,
          ...(app.clientId ? { client_id: app.clientId } : {}),
          target_id: idOf(found.owner),
          target_type: 'Organization',
          permissions,
          events: [],
          created_at: at,
          updated_at: at,
          single_file_name: null,
          app_slug: slug,
          suspended_by: found.suspended ? o.user(urls, found.owner) : null,
          suspended_at: found.suspended ? at : null,
        },
      };
    }
    if (found.suspended)
      return { status: 403, body: { message: 'This installation has been suspended', documentation_url: DOCS, status: '403' } };
    const token = `ghs_inst${found.id}_${randomBytes(12).toString('hex')}`;
    const expiresAt = clock.now() + (options.installationTokenLifetimeMs ?? 3_600_000);
    tokens[token] = { login: `${slug}[bot]`, permissions, owner: found.owner, expiresAt, actor: `installation:${found.id}` };
    installationTokens.set(found.id, [...(installationTokens.get(found.id) ?? []), token]);
    return {
      status: 201,
      body: { token, expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'), permissions, repository_selection: 'all' },
    };
  }

  const mustRepo = (fullName: string) => {
    const r = state.repo(fullName);
    if (!r) throw new Error(`fake-github: no repository ${fullName}`);
    return r;
  };
  const mustPull = (fullName: string, number: number) => {
    const pr = mustRepo(fullName).pulls.find((p) => p.number === number);
    if (!pr) throw new Error(`fake-github: no pull request ${fullName}#${number}`);
    return pr;
  };

  const gh: FakeGitHub = {
    serverUrl,
    apiUrl: urls.api,
    graphqlUrl: `${serverUrl}${graphqlPath}`,
    token: firstToken,
    requests,
    violations,

    async createRepo(fullName, opts = {}) {
      const [owner, name, ...rest] = fullName.split('/');
      if (!owner || !name || rest.length) throw new Error(`fake-github: repository name must be owner/name, got ${fullName}`);
      if (state.repo(fullName)) throw new Error(`fake-github: repository ${fullName} exists`);
      const defaultBranch = opts.defaultBranch ?? 'main';
      const gitDir = join(root, owner, `${name}.git`);
      await mkdir(gitDir, { recursive: true });
      await git(gitDir, ['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`]);
      await git(gitDir, ['config', 'http.receivepack', 'true']);
      await git(gitDir, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
      const files = opts.files ?? { 'README.md': `# ${name}\n` };
      const changes = [];
      for (const [path, content] of Object.entries(files)) {
        changes.push({ path, mode: '100644', type: 'blob' as const, sha: await writeBlob(gitDir, Buffer.from(content)) });
      }
      const tree = await buildTree(gitDir, undefined, changes);
      const commit = await commitTree(gitDir, tree, [], 'Initial commit\n', HUMAN);
      await git(gitDir, ['update-ref', `refs/heads/${defaultBranch}`, commit]);
      const id = state.nextId++;
      const created = now();
      state.repos.set(fullName.toLowerCase(), {
        id,
        owner,
        name,
        fullName,
        nodeId: `R_kgDO${Buffer.from(`fake:${id}`).toString('base64url')}`,
        defaultBranch,
        gitDir,
        createdAt: created,
        pushedAt: created,
        pulls: [],
        statuses: new Map(),
        checkRuns: [],
        labels: new Map(),
        comments: [],
        issues: [],
      });
      return { cloneUrl: `${serverUrl}/${fullName}.git`, gitDir };
    },

    gitDir: (fullName) => mustRepo(fullName).gitDir,

    issues(fullName) {
      return mustRepo(fullName).issues.map((i) => ({
        number: i.number,
        title: i.title,
        body: i.body,
        state: i.state,
        user: i.user,
        updated_at: i.updatedAt,
      }));
    },

    editIssue(fullName, number, body) {
      const issue = mustRepo(fullName).issues.find((i) => i.number === number);
      if (!issue) throw new Error(`fake-github: ${fullName} has no issue #${number}`);
      issue.body = body;
      issue.updatedAt = now();
    },

    comments(fullName, number) {
      return mustRepo(fullName)
        .comments.filter((c) => c.issueNumber === number)
        .map((c) => ({ id: c.id, body: c.body, user: c.user }));
    },

    pulls(fullName) {
      return mustRepo(fullName).pulls.map((p) => ({
        number: p.number,
        node_id: p.nodeId,
        title: p.title,
        body: p.body,
        state: p.state,
        merged: p.merged,
        draft: p.draft,
        head: { ref: p.head.ref, sha: p.headSha },
        base: { ref: p.base.ref },
        labels: [...p.labels],
        assignees: [...p.assignees],
        requested_reviewers: [...p.requestedReviewers],
        requested_teams: [...p.requestedTeams],
        auto_merge: p.autoMerge ? { merge_method: p.autoMerge.mergeMethod } : null,
      }));
    },

    statuses(fullName, sha) {
      return (mustRepo(fullName).statuses.get(sha) ?? []).map((s) => ({
        state: s.state,
        context: s.context,
        description: s.description,
        target_url: s.targetUrl,
        creator: s.creator,
      }));
    },

    commitVerified: (fullName, sha) => state.verified.has(`${mustRepo(fullName).fullName.toLowerCase()}@${sha}`),

    clearRequests() {
      requests.length = 0;
    },

    writes: () => requests.filter((r) => r.write).length,

    async mergePull(fullName, number) {
      const repo = mustRepo(fullName);
      await state.refresh(fullName);
      const pr = mustPull(fullName, number);
      if (pr.state !== 'open') throw new Error(`fake-github: ${fullName}#${number} is not open`);
      return mergePullRequest(state, repo, pr, { method: 'merge', by: 'octo-human' });
    },

    addLabel(fullName, number, name) {
      const repo = mustRepo(fullName);
      const pr = mustPull(fullName, number);
      const l = state.labelFor(repo, name);
      if (!pr.labels.some((x) => x.toLowerCase() === l.name.toLowerCase())) pr.labels.push(l.name);
      pr.updatedAt = now();
    },

    async humanCommit(fullName, branch, files, message = 'Edit by a human\n') {
      const repo = mustRepo(fullName);
      const parent =
        (await resolveRef(repo.gitDir, `refs/heads/${branch}`)) ?? (await resolveRef(repo.gitDir, `refs/heads/${repo.defaultBranch}`));
      const changes = [];
      for (const [path, content] of Object.entries(files)) {
        changes.push({
          path,
          mode: '100644',
          type: 'blob' as const,
          sha: content === null ? null : await writeBlob(repo.gitDir, Buffer.from(content)),
        });
      }
      const tree = await buildTree(repo.gitDir, parent, changes);
      const commit = await commitTree(repo.gitDir, tree, parent ? [parent] : [], message, HUMAN);
      await git(repo.gitDir, ['update-ref', `refs/heads/${branch}`, commit]);
      repo.pushedAt = now();
      await state.refresh(fullName);
      return commit;
    },

    rateLimitNext(n = 1, retryAfterSeconds = 1, kind = 'secondary', status = 403) {
      rateLimited = n;
      retryAfter = retryAfterSeconds;
      limitKind = kind;
      limitStatus = status;
    },

    failNext(n, status) {
      failing = { n, status };
    },

    failAfterApplying(operationId, n, status) {
      lostAnswers.set(operationId, { n, status });
    },

    revokeToken(token) {
      delete tokens[token];
    },

    async holdHeads(held) {
      state.heldHeads = held;
      if (!held) for (const repo of state.repos.values()) await state.refresh(repo.fullName);
    },

    requireStatusChecks(fullName, branch, contexts) {
      const key = mustRepo(fullName).fullName.toLowerCase();
      const byBranch = state.required.get(key) ?? new Map<string, readonly string[]>();
      byBranch.set(branch, [...contexts]);
      state.required.set(key, byBranch);
    },

    installationTokens,

    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(root, { recursive: true, force: true });
    },
  };
  return gh;
}
