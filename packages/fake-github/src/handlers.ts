import { buildTree, commitTree, commitsBetween, git, objectType, readCommit, resolveRef, type TreeChange, writeBlob } from './git.js';
import * as o from './objects.js';
import type { CheckRunState, IssueState, PullState, StatusState, Urls } from './objects.js';
import type { Permission, State } from './server.js';

export interface Context {
  readonly state: State;
  readonly urls: Urls;
  /** The login of the token's owner. */
  readonly login: string;
  readonly query: Record<string, string>;
  readonly rawQuery: string;
  readonly method: string;
  readonly path: string;
  /** GraphQL answers `viewer { login }` (GitHub does; an older server or a proxy may not). */
  readonly viewer?: boolean;
}

export interface Result {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Handler {
  /** The GitHub App permission the endpoint needs. */
  readonly permission: readonly [string, Permission];
  /** Another permission that is enough on its own (GitHub takes issues or pull_requests for a PR's labels). */
  readonly alternative?: readonly [string, Permission];
  /** `body` is the request body, already checked against the operation's schema. */
  run(ctx: Context, params: Record<string, string>, body: never): Promise<Result>;
}

const DOCS = 'https://docs.github.com/rest';

/** An error answer in GitHub's shape. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body['message']));
  }
}

function notFound(): never {
  throw new HttpError(404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
}

function validationFailed(errors: Record<string, unknown>[], message = 'Validation Failed'): never {
  throw new HttpError(422, { message, errors, documentation_url: DOCS, status: '422' });
}

function unprocessable(message: string): never {
  throw new HttpError(422, { message, documentation_url: DOCS, status: '422' });
}

/** GitHub's longest body of an issue, a pull request or a comment, in characters. */
const MAX_BODY = 65_536;

function checkBody(resource: string, body: string | null | undefined): void {
  if (typeof body === 'string' && [...body].length > MAX_BODY) {
    validationFailed([{ resource, code: 'custom', field: 'body', message: `body is too long (maximum is ${MAX_BODY} characters)` }]);
  }
}

function repoOf(ctx: Context, params: Record<string, string>) {
  const repo = ctx.state.repo(`${params['owner']}/${params['repo']}`);
  if (!repo) notFound();
  return repo;
}

async function pullOf(ctx: Context, params: Record<string, string>, key = 'pull_number') {
  const repo = repoOf(ctx, params);
  await ctx.state.refresh(repo.fullName);
  const pr = repo.pulls.find((p) => p.number === Number(params[key]));
  if (!pr) notFound();
  return { repo, pr };
}

type Repo = NonNullable<ReturnType<State['repo']>>;

const labelsOf = (ctx: Context, repo: Repo) => (name: string) => ctx.state.labelFor(repo, name);

async function fullPull(ctx: Context, repo: Repo, pr: PullState) {
  let commits = 0;
  let additions = 0;
  let deletions = 0;
  let changedFiles = 0;
  let mergeable: boolean | null = null;
  if (pr.state === 'open') {
    commits = (await commitsBetween(repo.gitDir, pr.baseSha, pr.headSha)).length;
    const numstat = await git(repo.gitDir, ['diff', '--numstat', `${pr.baseSha}...${pr.headSha}`]);
    for (const line of numstat.split('\n').filter(Boolean)) {
      const [a, d] = line.split('\t');
      additions += Number(a) || 0;
      deletions += Number(d) || 0;
      changedFiles++;
    }
    try {
      await git(repo.gitDir, ['merge-tree', '--write-tree', pr.baseSha, pr.headSha]);
      mergeable = true;
    } catch {
      mergeable = false;
    }
  }
  return o.pullFull(ctx.urls, repo, pr, labelsOf(ctx, repo), { commits, additions, deletions, changedFiles, mergeable });
}

/** `head` as the API takes it: `branch` or `owner:branch` (a fork's owner is not supported: 422). */
function headBranch(repo: Repo, head: string): string {
  const colon = head.indexOf(':');
  if (colon === -1) return head;
  const owner = head.slice(0, colon);
  if (owner.toLowerCase() !== repo.owner.toLowerCase()) {
    validationFailed([{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
  }
  return head.slice(colon + 1);
}

function paginate<T>(ctx: Context, items: T[]): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(ctx.state.maxPerPage, 100, Math.max(1, Number(ctx.query['per_page'] ?? 30) || 30));
  const pageNo = Math.max(1, Number(ctx.query['page'] ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const page = items.slice((pageNo - 1) * perPage, pageNo * perPage);
  const link = (n: number, rel: string) => {
    const q = new URLSearchParams(ctx.query);
    q.set('page', String(n));
    return `<${ctx.urls.api}${ctx.path}?${q.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (pageNo > 1) links.push(link(pageNo - 1, 'prev'));
  if (pageNo < last) links.push(link(pageNo + 1, 'next'), link(last, 'last'));
  if (pageNo > 1) links.push(link(1, 'first'));
  return { page, headers: links.length ? { link: links.join(', ') } : {} };
}

/** Issues and pull requests share one sequence of numbers, as on GitHub. */
function nextNumber(repo: Repo): number {
  return repo.pulls.length + repo.issues.length + 1;
}

function issueOf(ctx: Context, params: Record<string, string>) {
  const repo = repoOf(ctx, params);
  const issue = repo.issues.find((i) => i.number === Number(params['issue_number']));
  if (!issue) notFound();
  return { repo, issue };
}

/** GitHub's longest label name: a label it would have to create with a longer one is refused (422), none added. */
const MAX_LABEL_NAME = 50;

function checkNewLabels(repo: Repo, names: readonly string[]): void {
  const bad = names.find((n) => !repo.labels.has(n.toLowerCase()) && [...n].length > MAX_LABEL_NAME);
  if (bad !== undefined) validationFailed([{ value: bad, resource: 'Label', field: 'name', code: 'invalid' }]);
}

/** An issue's labels by name, created in the repository as GitHub creates them. */
function issueLabels(ctx: Context, repo: Repo, given: (string | { name?: string })[] | undefined): string[] {
  const names = (given ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? '')));
  checkNewLabels(repo, names);
  return names.map((n) => ctx.state.labelFor(repo, n).name);
}

function touch(pr: PullState) {
  pr.updatedAt = o.now();
}

async function commitObject(ctx: Context, repo: Repo, sha: string) {
  const c = await readCommit(repo.gitDir, sha);
  const a = `${ctx.urls.api}/repos/${repo.fullName}`;
  const verified = ctx.state.verified.has(`${repo.fullName.toLowerCase()}@${sha}`);
  return {
    sha,
    node_id: o.nodeId('C', o.idOf(sha)),
    url: `${a}/git/commits/${sha}`,
    html_url: `${ctx.urls.server}/${repo.fullName}/commit/${sha}`,
    author: c.author,
    committer: c.committer,
    tree: { sha: c.tree, url: `${a}/git/trees/${c.tree}` },
    message: c.message.replace(/\n$/, ''),
    parents: c.parents.map((p) => ({ sha: p, url: `${a}/git/commits/${p}`, html_url: `${ctx.urls.server}/${repo.fullName}/commit/${p}` })),
    verification: verified
      ? {
          verified: true,
          reason: 'valid',
          signature: '-----BEGIN PGP SIGNATURE-----\n\nfake\n-----END PGP SIGNATURE-----\n',
          payload: '',
          verified_at: o.now(),
        }
      : { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}

/** A commit as the REST commits endpoints give it (one commit, a branch's, a page of a list). */
function restCommit(ctx: Context, repo: Repo, sha: string, c: Awaited<ReturnType<typeof commitObject>>) {
  const a = `${ctx.urls.api}/repos/${repo.fullName}`;
  return {
    url: `${a}/commits/${sha}`,
    sha,
    node_id: c.node_id,
    html_url: c.html_url,
    comments_url: `${a}/commits/${sha}/comments`,
    commit: {
      url: c.url,
      author: c.author,
      committer: c.committer,
      message: c.message,
      comment_count: 0,
      tree: c.tree,
      verification: c.verification,
    },
    author: null,
    committer: null,
    parents: c.parents,
  };
}

function refObject(ctx: Context, repo: Repo, ref: string, sha: string, type: string) {
  const a = `${ctx.urls.api}/repos/${repo.fullName}`;
  return {
    ref,
    node_id: o.nodeId('REF', o.idOf(ref)),
    url: `${a}/git/${ref}`,
    object: { type, sha, url: `${a}/git/${type}s/${sha}` },
  };
}

/** `heads/x` or `refs/heads/x` → `refs/heads/x`. */
function fullRef(ref: string): string {
  return ref.startsWith('refs/') ? ref : `refs/${ref}`;
}

const MERGER = { name: 'Octo Human', email: 'human@example.com' };

/**
 * Merge an open pull request into its base as GitHub does for `method` (a merge commit; one
 * squashed commit; its commits replayed, here as one commit on the base). Throws on conflicts.
 */
export async function mergePullRequest(
  state: State,
  repo: Repo,
  pr: PullState,
  options: { method: 'merge' | 'squash' | 'rebase'; by: string; title?: string | undefined },
): Promise<string> {
  const base = await resolveRef(repo.gitDir, `refs/heads/${pr.base.ref}`);
  const head = await resolveRef(repo.gitDir, `refs/heads/${pr.head.ref}`);
  if (!base || !head) throw new Error(`fake-github: ${repo.fullName}#${pr.number}: head or base branch is gone`);
  let tree: string;
  try {
    tree = (await git(repo.gitDir, ['merge-tree', '--write-tree', base, head])).split('\n')[0]!.trim();
  } catch (e) {
    throw new Error(`fake-github: ${repo.fullName}#${pr.number} has conflicts: ${(e as Error).message}`);
  }
  const message =
    options.method === 'merge'
      ? `Merge pull request #${pr.number} from ${repo.owner}/${pr.head.ref}\n\n${options.title ?? pr.title}\n`
      : `${options.title ?? pr.title} (#${pr.number})\n`;
  const merge = await commitTree(repo.gitDir, tree, options.method === 'merge' ? [base, head] : [base], message, MERGER);
  await git(repo.gitDir, ['update-ref', `refs/heads/${pr.base.ref}`, merge, base]);
  const at = o.now();
  Object.assign(pr, {
    state: 'closed',
    merged: true,
    mergedAt: at,
    closedAt: at,
    updatedAt: at,
    mergedBy: options.by,
    mergeCommitSha: merge,
    headSha: head,
    baseSha: base,
    autoMerge: null,
  });
  await state.refresh(repo.fullName);
  return merge;
}

/** Whether the pull request is mergeable into its base without conflicts. */
export async function isMergeable(repo: Repo, pr: PullState): Promise<boolean> {
  try {
    await git(repo.gitDir, ['merge-tree', '--write-tree', pr.baseSha, pr.headSha]);
    return true;
  } catch {
    return false;
  }
}

/** The required status contexts not `success` on the pull request's head (the latest status of each context counts). */
export function missingChecks(state: State, repo: Repo, pr: PullState): string[] {
  const latest = new Map<string, string>();
  for (const s of repo.statuses.get(pr.headSha) ?? []) latest.set(s.context, s.state);
  return state.requiredChecks(repo.fullName, pr.base.ref).filter((c) => latest.get(c) !== 'success');
}

export const handlers: Record<string, Handler> = {
  'pulls/merge': {
    permission: ['contents', 'write'],
    async run(ctx, params, body: { commit_title?: string; sha?: string; merge_method?: 'merge' | 'squash' | 'rebase' } | null) {
      const { repo, pr } = await pullOf(ctx, params);
      const notAllowed = (message: string): never => {
        throw new HttpError(405, { message, documentation_url: DOCS, status: '405' });
      };
      if (pr.state !== 'open') notAllowed('Pull Request is not mergeable');
      if (pr.draft) notAllowed('Pull Request is still a draft');
      if (body?.sha && body.sha !== pr.headSha) {
        throw new HttpError(409, {
          message: 'Head branch was modified. Review and try the merge again.',
          documentation_url: DOCS,
          status: '409',
        });
      }
      if (!(await isMergeable(repo, pr))) notAllowed('Pull Request is not mergeable');
      const missing = missingChecks(ctx.state, repo, pr);
      if (missing.length > 0) notAllowed(`Required status check "${missing[0]}" is expected.`);
      const sha = await mergePullRequest(ctx.state, repo, pr, {
        method: body?.merge_method ?? 'merge',
        by: ctx.login,
        title: body?.commit_title,
      });
      return { status: 200, body: { sha, merged: true, message: 'Pull Request successfully merged' } };
    },
  },

  'repos/get': {
    permission: ['metadata', 'read'],
    async run(ctx, params) {
      return { status: 200, body: o.fullRepository(ctx.urls, repoOf(ctx, params)) };
    },
  },

  'repos/get-branch': {
    permission: ['contents', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const branch = params['branch']!;
      const sha = await resolveRef(repo.gitDir, `refs/heads/${branch}`);
      if (!sha) throw new HttpError(404, { message: 'Branch not found', documentation_url: DOCS, status: '404' });
      const commit = restCommit(ctx, repo, sha, await commitObject(ctx, repo, sha));
      const a = `${ctx.urls.api}/repos/${repo.fullName}`;
      return {
        status: 200,
        body: {
          name: branch,
          commit,
          _links: { html: `${ctx.urls.server}/${repo.fullName}/tree/${branch}`, self: `${a}/branches/${branch}` },
          protected: false,
          protection: { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] } },
          protection_url: `${a}/branches/${branch}/protection`,
        },
      };
    },
  },

  'pulls/list': {
    permission: ['pull_requests', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      await ctx.state.refresh(repo.fullName);
      const state = ctx.query['state'] ?? 'open';
      let items = repo.pulls.filter((p) => state === 'all' || p.state === state);
      const head = ctx.query['head'];
      // As on GitHub, `head` filters only in the `owner:branch` form; a bare branch name is ignored.
      if (head?.includes(':')) {
        const [owner, ...branch] = head.split(':');
        items = items.filter((p) => owner!.toLowerCase() === repo.owner.toLowerCase() && p.head.ref === branch.join(':'));
      }
      const base = ctx.query['base'];
      if (base) items = items.filter((p) => p.base.ref === base);
      const sort = ctx.query['sort'] ?? 'created';
      const direction = ctx.query['direction'] ?? (sort === 'created' ? 'desc' : 'asc');
      const key = (p: PullState) =>
        sort === 'updated' ? p.updatedAt + String(p.number).padStart(9, '0') : String(p.number).padStart(9, '0');
      items = [...items].sort((a, b) => key(a).localeCompare(key(b)) * (direction === 'desc' ? -1 : 1));
      const { page, headers } = paginate(ctx, items);
      return { status: 200, body: page.map((p) => o.pullSimple(ctx.urls, repo, p, labelsOf(ctx, repo))), headers };
    },
  },

  'pulls/create': {
    permission: ['pull_requests', 'write'],
    async run(
      ctx,
      params,
      body: { title?: string; head: string; base: string; body?: string; draft?: boolean; maintainer_can_modify?: boolean; issue?: number },
    ) {
      checkBody('PullRequest', body.body);
      const repo = repoOf(ctx, params);
      await ctx.state.refresh(repo.fullName);
      if (body.title === undefined) validationFailed([{ resource: 'PullRequest', field: 'title', code: 'missing_field' }]);
      const headRef = headBranch(repo, body.head);
      const headSha = await resolveRef(repo.gitDir, `refs/heads/${headRef}`);
      const baseSha = await resolveRef(repo.gitDir, `refs/heads/${body.base}`);
      const errors: Record<string, unknown>[] = [];
      if (!headSha) errors.push({ resource: 'PullRequest', field: 'head', code: 'invalid' });
      if (!baseSha) errors.push({ resource: 'PullRequest', field: 'base', code: 'invalid' });
      if (errors.length) validationFailed(errors);
      const noCommits = (await commitsBetween(repo.gitDir, baseSha!, headSha!)).length === 0;
      // Checked after the last await, so that two requests at once cannot both pass it: GitHub
      // opens one pull request per head and base.
      const existing = repo.pulls.find((p) => p.state === 'open' && p.head.ref === headRef && p.base.ref === body.base);
      if (existing) {
        validationFailed([
          { resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${headRef}.` },
        ]);
      }
      if (noCommits) {
        validationFailed([{ resource: 'PullRequest', code: 'custom', message: `No commits between ${body.base} and ${headRef}` }]);
      }
      if (body.draft && !ctx.state.drafts) unprocessable('Draft pull requests are not supported in this repository.');
      const id = ctx.state.nextId++;
      const at = o.now();
      const pr: PullState = {
        id,
        number: nextNumber(repo),
        nodeId: o.nodeId('PR', id),
        title: body.title!,
        body: body.body ?? null,
        state: 'open',
        draft: body.draft ?? false,
        merged: false,
        mergedAt: null,
        mergedBy: null,
        mergeCommitSha: null,
        closedAt: null,
        createdAt: at,
        updatedAt: at,
        user: ctx.login,
        head: { ref: headRef },
        base: { ref: body.base },
        headSha: headSha!,
        baseSha: baseSha!,
        maintainerCanModify: body.maintainer_can_modify ?? true,
        labels: [],
        assignees: [],
        requestedReviewers: [],
        requestedTeams: [],
        autoMerge: null,
      };
      repo.pulls.push(pr);
      const out = await fullPull(ctx, repo, pr);
      return { status: 201, body: out, headers: { location: out.url } };
    },
  },

  'pulls/get': {
    permission: ['pull_requests', 'read'],
    async run(ctx, params) {
      const { repo, pr } = await pullOf(ctx, params);
      return { status: 200, body: await fullPull(ctx, repo, pr) };
    },
  },

  'pulls/update': {
    permission: ['pull_requests', 'write'],
    async run(
      ctx,
      params,
      body: { title?: string; body?: string; state?: 'open' | 'closed'; base?: string; maintainer_can_modify?: boolean },
    ) {
      checkBody('PullRequest', body.body);
      const { repo, pr } = await pullOf(ctx, params);
      if (body.base !== undefined) {
        const sha = await resolveRef(repo.gitDir, `refs/heads/${body.base}`);
        if (!sha) validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
        if (pr.state !== 'open') unprocessable('Cannot change the base branch of a closed pull request.');
        pr.base = { ref: body.base };
        pr.baseSha = sha!;
      }
      if (body.state === 'open' && pr.state === 'closed') {
        if (pr.merged) unprocessable('Cannot reopen a merged pull request.');
        const head = await resolveRef(repo.gitDir, `refs/heads/${pr.head.ref}`);
        if (!head)
          validationFailed([{ resource: 'PullRequest', code: 'custom', message: 'state cannot be changed. The head branch was deleted.' }]);
        if (repo.pulls.some((p) => p !== pr && p.state === 'open' && p.head.ref === pr.head.ref && p.base.ref === pr.base.ref)) {
          validationFailed([
            { resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${pr.head.ref}.` },
          ]);
        }
        pr.state = 'open';
        pr.closedAt = null;
        pr.headSha = head!;
      } else if (body.state === 'closed' && pr.state === 'open') {
        pr.state = 'closed';
        pr.closedAt = o.now();
        pr.autoMerge = null;
      }
      if (body.title !== undefined) pr.title = body.title;
      if (body.body !== undefined) pr.body = body.body;
      if (body.maintainer_can_modify !== undefined) pr.maintainerCanModify = body.maintainer_can_modify;
      touch(pr);
      return { status: 200, body: await fullPull(ctx, repo, pr) };
    },
  },

  'pulls/list-commits': {
    permission: ['pull_requests', 'read'],
    async run(ctx, params) {
      const { repo, pr } = await pullOf(ctx, params);
      const shas = await commitsBetween(repo.gitDir, pr.baseSha, pr.headSha);
      const { page, headers } = paginate(ctx, shas);
      const body = [];
      for (const sha of page) body.push(restCommit(ctx, repo, sha, await commitObject(ctx, repo, sha)));
      return { status: 200, body, headers };
    },
  },

  'pulls/request-reviewers': {
    permission: ['pull_requests', 'write'],
    async run(ctx, params, body: { reviewers?: string[]; team_reviewers?: string[] }) {
      const { repo, pr } = await pullOf(ctx, params);
      if (!body.reviewers && !body.team_reviewers) unprocessable('Invalid request.\n\nNo subschema in "anyOf" matched.');
      const collaborators = ctx.state.collaborators;
      if (collaborators && [...(body.reviewers ?? []), ...(body.team_reviewers ?? [])].some((r) => !collaborators.has(r.toLowerCase()))) {
        unprocessable(
          `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${repo.fullName} repository.`,
        );
      }
      for (const r of body.reviewers ?? []) {
        if (r.toLowerCase() === pr.user.toLowerCase()) unprocessable('Review cannot be requested from pull request author.');
        if (!pr.requestedReviewers.includes(r)) pr.requestedReviewers.push(r);
      }
      for (const t of body.team_reviewers ?? []) if (!pr.requestedTeams.includes(t)) pr.requestedTeams.push(t);
      touch(pr);
      return { status: 201, body: o.pullSimple(ctx.urls, repo, pr, labelsOf(ctx, repo)) };
    },
  },

  'pulls/remove-requested-reviewers': {
    permission: ['pull_requests', 'write'],
    async run(ctx, params, body: { reviewers?: string[]; team_reviewers?: string[] }) {
      const { repo, pr } = await pullOf(ctx, params);
      pr.requestedReviewers = pr.requestedReviewers.filter((r) => !(body.reviewers ?? []).includes(r));
      pr.requestedTeams = pr.requestedTeams.filter((t) => !(body.team_reviewers ?? []).includes(t));
      touch(pr);
      return { status: 200, body: o.pullSimple(ctx.urls, repo, pr, labelsOf(ctx, repo)) };
    },
  },

  'issues/add-labels': {
    permission: ['issues', 'write'],
    alternative: ['pull_requests', 'write'],
    async run(ctx, params, body: string[] | { labels?: (string | { name: string })[] }) {
      const { repo, pr } = await pullOf(ctx, params, 'issue_number');
      const names = (Array.isArray(body) ? body : (body?.labels ?? [])).map((l) => (typeof l === 'string' ? l : l.name));
      checkNewLabels(repo, names);
      for (const n of names) {
        const l = ctx.state.labelFor(repo, n);
        if (!pr.labels.some((x) => x.toLowerCase() === l.name.toLowerCase())) pr.labels.push(l.name);
      }
      touch(pr);
      return { status: 200, body: pr.labels.map((n) => o.label(ctx.urls, repo, ctx.state.labelFor(repo, n))) };
    },
  },

  'issues/remove-label': {
    permission: ['issues', 'write'],
    alternative: ['pull_requests', 'write'],
    async run(ctx, params) {
      const { repo, pr } = await pullOf(ctx, params, 'issue_number');
      const name = params['name']!;
      const i = pr.labels.findIndex((x) => x.toLowerCase() === name.toLowerCase());
      if (i === -1) throw new HttpError(404, { message: 'Label does not exist', documentation_url: DOCS, status: '404' });
      pr.labels.splice(i, 1);
      touch(pr);
      return { status: 200, body: pr.labels.map((n) => o.label(ctx.urls, repo, ctx.state.labelFor(repo, n))) };
    },
  },

  'issues/add-assignees': {
    permission: ['issues', 'write'],
    alternative: ['pull_requests', 'write'],
    async run(ctx, params, body: { assignees?: string[] }) {
      const { repo, pr } = await pullOf(ctx, params, 'issue_number');
      for (const a of body?.assignees ?? []) if (!pr.assignees.includes(a)) pr.assignees.push(a);
      touch(pr);
      return { status: 201, body: o.issue(ctx.urls, repo, pr, labelsOf(ctx, repo)) };
    },
  },

  'issues/remove-assignees': {
    permission: ['issues', 'write'],
    alternative: ['pull_requests', 'write'],
    async run(ctx, params, body: { assignees?: string[] }) {
      const { repo, pr } = await pullOf(ctx, params, 'issue_number');
      pr.assignees = pr.assignees.filter((a) => !(body?.assignees ?? []).includes(a));
      touch(pr);
      return { status: 200, body: o.issue(ctx.urls, repo, pr, labelsOf(ctx, repo)) };
    },
  },

  'issues/list-for-repo': {
    permission: ['issues', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      await ctx.state.refresh(repo.fullName);
      // As on GitHub, the list holds pull requests too (each with a `pull_request` field).
      const state = ctx.query['state'] ?? 'open';
      const creator = ctx.query['creator']?.toLowerCase();
      const wanted = (ctx.query['labels'] ?? '')
        .split(',')
        .map((l) => l.trim().toLowerCase())
        .filter(Boolean);
      const labelled = (labels: string[]) => wanted.every((w) => labels.some((l) => l.toLowerCase() === w));
      const labelOf = labelsOf(ctx, repo);
      type Row = { number: number; created: string; updated: string; json: () => unknown };
      const rows: Row[] = [
        ...repo.issues
          .filter((i) => (state === 'all' || i.state === state) && (!creator || i.user.toLowerCase() === creator) && labelled(i.labels))
          .map((i) => ({
            number: i.number,
            created: i.createdAt,
            updated: i.updatedAt,
            json: () => o.plainIssue(ctx.urls, repo, i, labelOf),
          })),
        ...repo.pulls
          .filter((p) => (state === 'all' || p.state === state) && (!creator || p.user.toLowerCase() === creator) && labelled(p.labels))
          .map((p) => ({ number: p.number, created: p.createdAt, updated: p.updatedAt, json: () => o.issue(ctx.urls, repo, p, labelOf) })),
      ];
      const sort = ctx.query['sort'] ?? 'created';
      const direction = ctx.query['direction'] ?? 'desc';
      const key = (r: Row) => (sort === 'updated' ? r.updated : r.created) + String(r.number).padStart(9, '0');
      rows.sort((a, b) => key(a).localeCompare(key(b)) * (direction === 'desc' ? -1 : 1));
      const { page, headers } = paginate(ctx, rows);
      return { status: 200, body: page.map((r) => r.json()), headers };
    },
  },

  'users/get-authenticated': {
    permission: ['metadata', 'read'],
    async run(ctx) {
      // an installation's token (and GITHUB_TOKEN) is a bot's: GitHub refuses it this endpoint
      if (ctx.login.endsWith('[bot]') || ctx.login.startsWith('installation:')) {
        return {
          status: 403,
          body: {
            message: 'Resource not accessible by integration',
            documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
            status: '403',
          },
        };
      }
      const at = o.now();
      return {
        status: 200,
        body: {
          ...o.user(ctx.urls, ctx.login),
          name: null,
          company: null,
          blog: '',
          location: null,
          email: null,
          hireable: null,
          bio: null,
          public_repos: 0,
          public_gists: 0,
          followers: 0,
          following: 0,
          created_at: at,
          updated_at: at,
        },
      };
    },
  },

  'issues/create': {
    permission: ['issues', 'write'],
    async run(ctx, params, body: { title: string | number; body?: string; labels?: (string | { name?: string })[] }) {
      checkBody('Issue', body.body);
      const repo = repoOf(ctx, params);
      await ctx.state.refresh(repo.fullName);
      const at = o.now();
      const issue: IssueState = {
        id: ctx.state.nextId++,
        number: nextNumber(repo),
        title: String(body.title),
        body: body.body ?? null,
        state: 'open',
        stateReason: null,
        closedAt: null,
        createdAt: at,
        updatedAt: at,
        user: ctx.login,
        labels: issueLabels(ctx, repo, body.labels),
      };
      repo.issues.push(issue);
      const out = o.plainIssue(ctx.urls, repo, issue, labelsOf(ctx, repo));
      return { status: 201, body: out, headers: { location: out.url } };
    },
  },

  'issues/get': {
    permission: ['issues', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const pr = repo.pulls.find((p) => p.number === Number(params['issue_number']));
      if (pr) return { status: 200, body: o.issue(ctx.urls, repo, pr, labelsOf(ctx, repo)) };
      const { issue } = issueOf(ctx, params);
      return { status: 200, body: o.plainIssue(ctx.urls, repo, issue, labelsOf(ctx, repo)) };
    },
  },

  'issues/update': {
    permission: ['issues', 'write'],
    async run(
      ctx,
      params,
      body: {
        title?: string | number | null;
        body?: string | null;
        state?: 'open' | 'closed';
        state_reason?: 'completed' | 'not_planned' | 'reopened' | null;
        labels?: (string | { name?: string })[];
      },
    ) {
      checkBody('Issue', body.body);
      // a pull request's issue is edited through the pulls endpoints here: kdelta does that
      const { repo, issue } = issueOf(ctx, params);
      if (body.title !== undefined && body.title !== null) issue.title = String(body.title);
      if (body.body !== undefined) issue.body = body.body;
      if (body.labels !== undefined) issue.labels = issueLabels(ctx, repo, body.labels);
      if (body.state === 'closed' && issue.state === 'open') {
        issue.state = 'closed';
        issue.stateReason = body.state_reason ?? 'completed';
        issue.closedAt = o.now();
      } else if (body.state === 'open' && issue.state === 'closed') {
        issue.state = 'open';
        issue.stateReason = 'reopened';
        issue.closedAt = null;
      }
      issue.updatedAt = o.now();
      return { status: 200, body: o.plainIssue(ctx.urls, repo, issue, labelsOf(ctx, repo)) };
    },
  },

  'issues/list-comments': {
    permission: ['issues', 'read'],
    alternative: ['pull_requests', 'read'],
    async run(ctx, params) {
      const { repo, pr } = await pullOf(ctx, params, 'issue_number');
      const since = ctx.query['since'];
      const items = repo.comments.filter((c) => c.issueNumber === pr.number && (since === undefined || c.updatedAt >= since));
      const { page, headers } = paginate(ctx, items);
      return { status: 200, body: page.map((c) => o.comment(ctx.urls, repo, c)), headers };
    },
  },

  'issues/create-comment': {
    permission: ['issues', 'write'],
    alternative: ['pull_requests', 'write'],
    async run(ctx, params, body: { body: string }) {
      checkBody('IssueComment', body.body);
      const { repo, pr } = await pullOf(ctx, params, 'issue_number');
      const at = o.now();
      const c = { id: ctx.state.nextId++, issueNumber: pr.number, body: body.body, user: ctx.login, createdAt: at, updatedAt: at };
      repo.comments.push(c);
      return {
        status: 201,
        body: o.comment(ctx.urls, repo, c),
        headers: { location: `${ctx.urls.api}/repos/${repo.fullName}/issues/comments/${c.id}` },
      };
    },
  },

  'issues/update-comment': {
    permission: ['issues', 'write'],
    alternative: ['pull_requests', 'write'],
    async run(ctx, params, body: { body: string }) {
      checkBody('IssueComment', body.body);
      const repo = repoOf(ctx, params);
      const c = repo.comments.find((x) => x.id === Number(params['comment_id']));
      if (!c) notFound();
      // GitHub lets the author (and maintainers) edit a comment: the fake's tokens are the author's
      c.body = body.body;
      c.updatedAt = o.now();
      return { status: 200, body: o.comment(ctx.urls, repo, c) };
    },
  },

  'repos/create-commit-status': {
    permission: ['statuses', 'write'],
    async run(
      ctx,
      params,
      body: { state: StatusState['state']; target_url?: string | null; description?: string | null; context?: string },
    ) {
      const repo = repoOf(ctx, params);
      const sha = params['sha']!;
      if ((await objectType(repo.gitDir, sha)) !== 'commit' || !/^[0-9a-f]{40}$/.test(sha)) {
        validationFailed([{ resource: 'Status', field: 'sha', code: 'invalid' }], `No commit found for SHA: ${sha}`);
      }
      if (typeof body.description === 'string' && [...body.description].length > 140) {
        validationFailed([
          { resource: 'Status', code: 'custom', field: 'description', message: 'description is too long (maximum is 140 characters)' },
        ]);
      }
      const s: StatusState = {
        id: ctx.state.nextId++,
        state: body.state,
        context: body.context ?? 'default',
        description: body.description ?? null,
        targetUrl: body.target_url ?? null,
        creator: ctx.login,
        createdAt: o.now(),
      };
      const list = repo.statuses.get(sha) ?? [];
      list.push(s);
      repo.statuses.set(sha, list);
      return { status: 201, body: o.status(ctx.urls, repo, sha, s, true) };
    },
  },

  'repos/get-combined-status-for-ref': {
    permission: ['statuses', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const ref = params['ref']!;
      const sha = /^[0-9a-f]{40}$/.test(ref)
        ? ref
        : ((await resolveRef(repo.gitDir, `refs/heads/${ref}`)) ?? (await resolveRef(repo.gitDir, ref)));
      if (!sha || (await objectType(repo.gitDir, sha)) !== 'commit') {
        validationFailed([{ resource: 'Status', field: 'ref', code: 'invalid' }], `No commit found for SHA: ${ref}`);
      }
      // The latest status per context, as GitHub combines them.
      const latest = new Map<string, StatusState>();
      for (const s of repo.statuses.get(sha!) ?? []) latest.set(s.context, s);
      const statuses = [...latest.values()];
      const combined = statuses.some((s) => s.state === 'error' || s.state === 'failure')
        ? 'failure'
        : statuses.length && statuses.every((s) => s.state === 'success')
          ? 'success'
          : 'pending';
      const a = `${ctx.urls.api}/repos/${repo.fullName}`;
      // the statuses are paginated (the link header), the combined state is of them all
      const { page, headers } = paginate(ctx, statuses);
      return {
        status: 200,
        headers,
        body: {
          state: combined,
          sha,
          total_count: statuses.length,
          statuses: page.map((s) => o.status(ctx.urls, repo, sha!, s, false)),
          repository: o.minimalRepository(ctx.urls, repo),
          commit_url: `${a}/commits/${sha}`,
          url: `${a}/commits/${sha}/status`,
        },
      };
    },
  },

  'repos/list-commit-statuses-for-ref': {
    permission: ['statuses', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const ref = params['ref']!;
      const sha = /^[0-9a-f]{40}$/.test(ref) ? ref : await resolveRef(repo.gitDir, `refs/heads/${ref}`);
      const all = [...(repo.statuses.get(sha ?? '') ?? [])].reverse();
      const { page, headers } = paginate(ctx, all);
      return { status: 200, body: page.map((s) => o.status(ctx.urls, repo, sha!, s, true)), headers };
    },
  },

  // Check runs: only a GitHub App creates them on GitHub (its `checks` permission); a test posts them as one.
  'checks/create': {
    permission: ['checks', 'write'],
    async run(
      ctx,
      params,
      body: {
        name: string;
        head_sha: string;
        details_url?: string;
        status?: CheckRunState['status'];
        conclusion?: string;
        started_at?: string;
        completed_at?: string;
        output?: { title: string; summary: string };
      },
    ) {
      const repo = repoOf(ctx, params);
      if (!/^[0-9a-f]{40}$/.test(body.head_sha) || (await objectType(repo.gitDir, body.head_sha)) !== 'commit') {
        validationFailed([{ resource: 'CheckRun', field: 'head_sha', code: 'invalid' }], `No commit found for SHA: ${body.head_sha}`);
      }
      // GitHub: a conclusion completes the run; a completed run needs one
      const status = body.conclusion !== undefined ? 'completed' : (body.status ?? 'queued');
      if (status === 'completed' && body.conclusion === undefined) {
        validationFailed([{ resource: 'CheckRun', field: 'conclusion', code: 'missing_field' }]);
      }
      const at = o.now();
      const r: CheckRunState = {
        id: ctx.state.nextId++,
        name: body.name,
        headSha: body.head_sha,
        status,
        conclusion: body.conclusion ?? null,
        detailsUrl: body.details_url ?? null,
        title: body.output?.title ?? null,
        summary: body.output?.summary ?? null,
        startedAt: body.started_at ?? at,
        completedAt: status === 'completed' ? (body.completed_at ?? at) : null,
      };
      repo.checkRuns.push(r);
      return { status: 201, body: o.checkRun(ctx.urls, repo, r) };
    },
  },

  'checks/list-for-ref': {
    permission: ['checks', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const ref = params['ref']!;
      const sha = /^[0-9a-f]{40}$/.test(ref)
        ? ref
        : ((await resolveRef(repo.gitDir, `refs/heads/${ref}`)) ?? (await resolveRef(repo.gitDir, ref)));
      if (!sha || (await objectType(repo.gitDir, sha)) !== 'commit') {
        validationFailed([{ resource: 'CheckRun', field: 'ref', code: 'invalid' }], `No commit found for SHA: ${ref}`);
      }
      const name = ctx.query['check_name'];
      const wanted = ctx.query['status'];
      let runs = repo.checkRuns.filter((r) => r.headSha === sha && (name === undefined || r.name === name));
      // `filter=latest` (the default): the newest run of each name
      if ((ctx.query['filter'] ?? 'latest') === 'latest') runs = runs.filter((r) => !runs.some((x) => x.name === r.name && x.id > r.id));
      if (wanted !== undefined) runs = runs.filter((r) => r.status === wanted);
      const newest = [...runs].reverse();
      const { page, headers } = paginate(ctx, newest);
      return { status: 200, headers, body: { total_count: newest.length, check_runs: page.map((r) => o.checkRun(ctx.urls, repo, r)) } };
    },
  },

  'git/create-blob': {
    permission: ['contents', 'write'],
    async run(ctx, params, body: { content: string; encoding?: string }) {
      const repo = repoOf(ctx, params);
      const enc = body.encoding ?? 'utf-8';
      if (enc !== 'utf-8' && enc !== 'utf8' && enc !== 'base64') {
        validationFailed([{ resource: 'Blob', field: 'encoding', code: 'invalid' }]);
      }
      const sha = await writeBlob(repo.gitDir, Buffer.from(body.content, enc === 'base64' ? 'base64' : 'utf8'));
      return {
        status: 201,
        body: { url: `${ctx.urls.api}/repos/${repo.fullName}/git/blobs/${sha}`, sha },
        headers: { location: `${ctx.urls.api}/repos/${repo.fullName}/git/blobs/${sha}` },
      };
    },
  },

  'git/create-tree': {
    permission: ['contents', 'write'],
    async run(
      ctx,
      params,
      body: { base_tree?: string; tree: { path?: string; mode?: string; type?: string; sha?: string | null; content?: string }[] },
    ) {
      const repo = repoOf(ctx, params);
      if (body.base_tree && !(await objectType(repo.gitDir, body.base_tree))) {
        validationFailed([{ resource: 'Tree', field: 'base_tree', code: 'invalid' }], 'base_tree is not a valid tree oid');
      }
      const changes: TreeChange[] = [];
      for (const e of body.tree) {
        if (!e.path) validationFailed([{ resource: 'Tree', field: 'path', code: 'missing_field' }]);
        const type = (e.type ?? 'blob') as TreeChange['type'];
        const mode = e.mode ?? (type === 'tree' ? '040000' : '100644');
        if (e.content !== undefined) {
          changes.push({ path: e.path!, mode, type: 'blob', sha: await writeBlob(repo.gitDir, Buffer.from(e.content)) });
        } else if (e.sha === null) {
          changes.push({ path: e.path!, mode, type, sha: null });
        } else if (e.sha) {
          if ((await objectType(repo.gitDir, e.sha)) !== type) {
            validationFailed([{ resource: 'Tree', field: 'sha', code: 'invalid' }], `tree.sha ${e.sha} is not a valid ${type}`);
          }
          changes.push({ path: e.path!, mode, type, sha: e.sha });
        } else {
          validationFailed([{ resource: 'Tree', field: 'sha', code: 'missing_field' }], 'Must supply tree.sha or tree.content');
        }
      }
      const sha = await buildTree(repo.gitDir, body.base_tree, changes);
      const a = `${ctx.urls.api}/repos/${repo.fullName}`;
      const listing = await git(repo.gitDir, ['ls-tree', '-l', sha]);
      const tree = listing
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [meta, path] = line.split('\t');
          const [mode, type, objSha, size] = meta!.split(/\s+/);
          const entry: Record<string, unknown> = { path, mode, type, sha: objSha, url: `${a}/git/${type}s/${objSha}` };
          if (type === 'blob') entry['size'] = Number(size);
          return entry;
        });
      return {
        status: 201,
        body: { sha, url: `${a}/git/trees/${sha}`, tree, truncated: false },
        headers: { location: `${a}/git/trees/${sha}` },
      };
    },
  },

  'git/create-commit': {
    permission: ['contents', 'write'],
    async run(
      ctx,
      params,
      body: {
        message: string;
        tree: string;
        parents?: string[];
        author?: { name: string; email: string; date?: string };
        committer?: { name: string; email: string; date?: string };
        signature?: string;
      },
    ) {
      const repo = repoOf(ctx, params);
      if ((await objectType(repo.gitDir, body.tree)) !== 'tree') {
        validationFailed([{ resource: 'Commit', field: 'tree', code: 'invalid' }], 'Tree SHA does not exist');
      }
      for (const p of body.parents ?? []) {
        if ((await objectType(repo.gitDir, p)) !== 'commit') unprocessable('Parent SHA does not exist or is not a commit object');
      }
      // Like GitHub: without an author the commit is the token owner's, and GitHub signs it (shown as verified).
      const bot = { name: ctx.login, email: `${o.idOf(ctx.login)}+${ctx.login}@users.noreply.github.com` };
      const author = body.author ? { name: body.author.name, email: body.author.email, date: body.author.date } : bot;
      const committer = body.committer ?? (body.author ? author : bot);
      const sha = await commitTree(repo.gitDir, body.tree, body.parents ?? [], body.message, author, committer);
      if (!body.signature) ctx.state.verified.add(`${repo.fullName.toLowerCase()}@${sha}`);
      const out = await commitObject(ctx, repo, sha);
      return { status: 201, body: out, headers: { location: out.url } };
    },
  },

  'git/get-ref': {
    permission: ['contents', 'read'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const ref = fullRef(params['ref']!);
      const sha = await resolveRef(repo.gitDir, ref);
      if (!sha) notFound();
      return { status: 200, body: refObject(ctx, repo, ref, sha!, 'commit') };
    },
  },

  'git/create-ref': {
    permission: ['contents', 'write'],
    async run(ctx, params, body: { ref: string; sha: string }) {
      const repo = repoOf(ctx, params);
      if (!body.ref.startsWith('refs/') || body.ref.split('/').length < 3)
        unprocessable("Reference name must start with 'refs/' and have at least two slashes.");
      const type = await objectType(repo.gitDir, body.sha);
      if (!type) unprocessable('Object does not exist');
      if (await resolveRef(repo.gitDir, body.ref)) unprocessable('Reference already exists');
      await git(repo.gitDir, ['update-ref', body.ref, body.sha, '0'.repeat(40)]);
      repo.pushedAt = o.now();
      await ctx.state.refresh(repo.fullName);
      const out = refObject(ctx, repo, body.ref, body.sha, type!);
      return { status: 201, body: out, headers: { location: out.url } };
    },
  },

  'git/update-ref': {
    permission: ['contents', 'write'],
    async run(ctx, params, body: { sha: string; force?: boolean }) {
      const repo = repoOf(ctx, params);
      const ref = fullRef(params['ref']!);
      const old = await resolveRef(repo.gitDir, ref);
      if (!old) unprocessable('Reference does not exist');
      const type = await objectType(repo.gitDir, body.sha);
      if (!type) unprocessable('Object does not exist');
      if (!body.force) {
        try {
          await git(repo.gitDir, ['merge-base', '--is-ancestor', old!, body.sha]);
        } catch {
          unprocessable('Update is not a fast forward');
        }
      }
      await git(repo.gitDir, ['update-ref', ref, body.sha, old!]);
      repo.pushedAt = o.now();
      await ctx.state.refresh(repo.fullName);
      return { status: 200, body: refObject(ctx, repo, ref, body.sha, type!) };
    },
  },

  'git/delete-ref': {
    permission: ['contents', 'write'],
    async run(ctx, params) {
      const repo = repoOf(ctx, params);
      const ref = fullRef(params['ref']!);
      const old = await resolveRef(repo.gitDir, ref);
      if (!old) unprocessable('Reference does not exist');
      await git(repo.gitDir, ['update-ref', '-d', ref, old!]);
      // A PR whose head branch is deleted is closed by GitHub.
      if (ref.startsWith('refs/heads/')) {
        const branch = ref.slice('refs/heads/'.length);
        for (const pr of repo.pulls) {
          if (pr.state === 'open' && pr.head.ref === branch) {
            pr.state = 'closed';
            pr.closedAt = o.now();
            pr.autoMerge = null;
            touch(pr);
          }
        }
      }
      return { status: 204 };
    },
  },
};
