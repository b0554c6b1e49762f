import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildTree, commitTree, git, httpBackend, type Person, resolveRef, writeBlob } from './git.js';
import { handleGraphql } from './graphql.js';
import { type Context, HttpError, handlers } from './handlers.js';
import type { CommentState, LabelState, PullState, RepoState, StatusState, Urls } from './objects.js';
import { idOf, now } from './objects.js';
import { loadOperations, matchOperation } from './openapi.js';

export type Permission = 'read' | 'write';

export interface TokenGrant {
  readonly login?: string;
  /** 'all', or GitHub App permissions by name (`contents`, `pull_requests`, `issues`, `statuses`, ...). */
  readonly permissions?: 'all' | Record<string, Permission>;
}

export interface FakeGitHubOptions {
  /** Accepted tokens; default `{ ghs_fake: { login: 'kdelta-bot', permissions: 'all' } }`. */
  readonly tokens?: Record<string, TokenGrant>;
  /** Check every request and response against GitHub's OpenAPI description (default true). */
  readonly validate?: boolean;
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
  /** The comments on issue or pull request `number`, oldest first. */
  comments(fullName: string, number: number): { id: number; body: string; user: string }[];
  statuses(fullName: string, sha: string): StatusSnapshot[];
  commitVerified(fullName: string, sha: string): boolean;
  clearRequests(): void;
  writes(): number;
  mergePull(fullName: string, number: number): Promise<string>;
  addLabel(fullName: string, number: number, name: string): void;
  humanCommit(fullName: string, branch: string, files: Record<string, string | null>, message?: string): Promise<string>;
  rateLimitNext(n?: number, retryAfterSeconds?: number): void;
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
      labels: Map<string, LabelState>;
      comments: CommentState[];
    }
  >();
  readonly verified = new Set<string>();
  nextId = 1000;

  constructor(readonly root: string) {}

  repo(fullName: string) {
    return this.repos.get(fullName.toLowerCase());
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
      if (head && pr.state === 'open') pr.headSha = head;
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
  const tokens = options.tokens ?? { [DEFAULT_TOKEN]: { login: 'kdelta-bot', permissions: 'all' } };
  const validate = options.validate ?? true;
  const root = await mkdtemp(join(tmpdir(), 'fake-github-'));
  const state = new State(root);
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const ops = loadOperations();
  let rateLimited = 0;
  let retryAfter = 1;
  let used = 0;
  const resetAt = Math.floor(Date.now() / 1000) + 3600;
  let urls: Urls = { server: '', api: '' };

  const grantOf = (token: string | undefined) => (token !== undefined ? tokens[token] : undefined);
  const allows = (grant: TokenGrant, permission: string, level: Permission): boolean => {
    if (permission === 'metadata') return true;
    const p = grant.permissions ?? 'all';
    if (p === 'all') return true;
    const have = p[permission];
    return have === 'write' || (have === 'read' && level === 'read');
  };

  function apiHeaders(res: ServerResponse) {
    used++;
    res.setHeader('x-github-request-id', requestId());
    res.setHeader('x-ratelimit-limit', '5000');
    res.setHeader('x-ratelimit-remaining', String(Math.max(0, 5000 - used)));
    res.setHeader('x-ratelimit-reset', String(resetAt));
    res.setHeader('x-ratelimit-used', String(used));
    res.setHeader('x-ratelimit-resource', 'core');
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
    const record = (status: number, operationId: string | undefined, write: boolean) => {
      requests.push({ method, path, query, status, write, operationId });
    };
    apiHeaders(res);
    const bodyBuf = await readBody(req);
    const isGraphql = path === '/graphql';
    const match = isGraphql ? undefined : matchOperation(ops, method, path);
    const operationId = match && 'op' in match ? match.op.operationId : undefined;
    const write = method !== 'GET' && method !== 'HEAD';

    const grant = grantOf(credentialsOf(req).token);
    if (!grant) {
      sendJson(res, 401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
      record(401, operationId, write);
      return;
    }
    if (rateLimited > 0) {
      rateLimited--;
      const id = res.getHeader('x-github-request-id');
      sendJson(
        res,
        403,
        {
          message: `You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later. If you reach out to GitHub Support for help, please include the request ID ${id}.`,
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          status: '403',
        },
        { 'retry-after': String(retryAfter) },
      );
      record(403, operationId, write);
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
    const ctx: Context = { state, urls, login, query, rawQuery, method, path };

    if (isGraphql) {
      const out = await handleGraphql(ctx, body, (permission, level) => allows(grant, permission, level));
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
    if (pushing && req.method === 'POST' && status === 200) {
      repo.pushedAt = now();
      await state.refresh(fullName);
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const rawQuery = url.search.replace(/^\?/, '');
    const query = Object.fromEntries(url.searchParams);
    let work: Promise<void>;
    if (url.pathname === '/api/graphql') work = handleApi(req, res, '/graphql', query, rawQuery);
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
    graphqlUrl: `${serverUrl}/api/graphql`,
    token: Object.keys(tokens)[0] ?? DEFAULT_TOKEN,
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
        labels: new Map(),
        comments: [],
      });
      return { cloneUrl: `${serverUrl}/${fullName}.git`, gitDir };
    },

    gitDir: (fullName) => mustRepo(fullName).gitDir,

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
      const base = await resolveRef(repo.gitDir, `refs/heads/${pr.base.ref}`);
      const head = await resolveRef(repo.gitDir, `refs/heads/${pr.head.ref}`);
      if (!base || !head) throw new Error(`fake-github: ${fullName}#${number}: head or base branch is gone`);
      let tree: string;
      try {
        tree = (await git(repo.gitDir, ['merge-tree', '--write-tree', base, head])).split('\n')[0]!.trim();
      } catch (e) {
        throw new Error(`fake-github: ${fullName}#${number} has conflicts: ${(e as Error).message}`);
      }
      const message = `Merge pull request #${number} from ${repo.owner}/${pr.head.ref}\n\n${pr.title}\n`;
      const merge = await commitTree(repo.gitDir, tree, [base, head], message, HUMAN);
      await git(repo.gitDir, ['update-ref', `refs/heads/${pr.base.ref}`, merge, base]);
      const at = now();
      Object.assign(pr, {
        state: 'closed',
        merged: true,
        mergedAt: at,
        closedAt: at,
        updatedAt: at,
        mergedBy: 'octo-human',
        mergeCommitSha: merge,
        headSha: head,
        baseSha: base,
        autoMerge: null,
      });
      await state.refresh(fullName);
      return merge;
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

    rateLimitNext(n = 1, retryAfterSeconds = 1) {
      rateLimited = n;
      retryAfter = retryAfterSeconds;
    },

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
