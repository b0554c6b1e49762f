// GitHub's GraphQL API, as far as the forge uses it: the auto-merge and draft mutations, and the `viewer`'s
// login (who the token is: a user, or an App's installation as `<slug>[bot]`), alone or beside a page of
// one repository's open issues (the dashboard's one read). A small reader of the query
// text finds the mutation field and its `input` argument (inline or a variable); anything else is a GraphQL
// error, as GitHub answers an unknown field.
import { type Context, isMergeable, missingChecks } from './handlers.js';
import * as o from './objects.js';
import type { Permission } from './server.js';

export interface GraphqlResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  operationId: string | undefined;
  write: boolean;
}

type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

const MUTATIONS = [
  'enablePullRequestAutoMerge',
  'disablePullRequestAutoMerge',
  'convertPullRequestToDraft',
  'markPullRequestReadyForReview',
] as const;

function error(message: string, type?: string): { errors: Record<string, unknown>[] } {
  return { errors: [type ? { type, message, path: [] } : { message }] };
}

/** Reads a GraphQL value at `pos` (literal, enum, variable, list or object). */
function readValue(src: string, pos: { i: number }, vars: Record<string, unknown>): Value {
  const ws = () => {
    while (pos.i < src.length && /[\s,]/.test(src[pos.i]!)) pos.i++;
  };
  ws();
  const c = src[pos.i];
  if (c === '$') {
    const m = /^\$([_A-Za-z][_0-9A-Za-z]*)/.exec(src.slice(pos.i))!;
    pos.i += m[0].length;
    return (vars[m[1]!] ?? null) as Value;
  }
  if (c === '"') {
    let j = pos.i + 1;
    let out = '';
    while (j < src.length && src[j] !== '"') {
      if (src[j] === '\\') {
        out += JSON.parse(`"${src.slice(j, j + 2)}"`);
        j += 2;
      } else out += src[j++];
    }
    pos.i = j + 1;
    return out;
  }
  if (c === '{') {
    pos.i++;
    const obj: Record<string, Value> = {};
    for (;;) {
      ws();
      if (src[pos.i] === '}') {
        pos.i++;
        return obj;
      }
      const m = /^([_A-Za-z][_0-9A-Za-z]*)\s*:/.exec(src.slice(pos.i));
      if (!m) throw new Error(`Parse error near "${src.slice(pos.i, pos.i + 20)}"`);
      pos.i += m[0].length;
      obj[m[1]!] = readValue(src, pos, vars);
    }
  }
  if (c === '[') {
    pos.i++;
    const list: Value[] = [];
    for (;;) {
      ws();
      if (src[pos.i] === ']') {
        pos.i++;
        return list;
      }
      list.push(readValue(src, pos, vars));
    }
  }
  const m = /^(-?\d+(?:\.\d+)?|[_A-Za-z][_0-9A-Za-z]*)/.exec(src.slice(pos.i));
  if (!m) throw new Error(`Parse error near "${src.slice(pos.i, pos.i + 20)}"`);
  pos.i += m[0].length;
  const word = m[1]!;
  if (/^-?\d/.test(word)) return Number(word);
  if (word === 'true' || word === 'false') return word === 'true';
  if (word === 'null') return null;
  return word;
}

/** An issue as GraphQL's `Issue` (the fields the dashboard reads); a bot's login without `[bot]`, as GitHub's `Bot.login`. */
function issueNode(ctx: Context, repo: { fullName: string }, i: o.IssueState) {
  const bot = /\[bot\]$/.exec(i.user);
  return {
    number: i.number,
    url: `${ctx.urls.server}/${repo.fullName}/issues/${i.number}`,
    title: i.title,
    body: i.body ?? '',
    author: { __typename: bot ? 'Bot' : 'User', login: bot ? i.user.slice(0, bot.index) : i.user },
  };
}

/**
 * `viewer { login }` beside `repository(owner: $owner, name: $name) { issues(first: N, after: $after,
 * states: OPEN, orderBy: {field: CREATED_AT, direction: ASC}) { pageInfo nodes } }`: who the token is
 * and a page of the repository's open issues, oldest first, in one request.
 */
function viewerAndIssues(
  ctx: Context,
  query: string,
  vars: Record<string, unknown>,
  allows: (permission: string, level: Permission) => boolean,
  reaches: (owner: string) => boolean,
): GraphqlResult | undefined {
  const flat = query.replace(/\s+/g, ' ');
  if (!/\bviewer ?\{ ?login ?\}/.test(flat)) return undefined;
  const repository = /\brepository ?\( ?owner ?: ?\$owner ?,? ?name ?: ?\$name ?\)/.test(flat);
  const issues = /\bissues ?\(([^)]*)\)/.exec(flat);
  if (!repository || !issues) return undefined;
  const args = issues[1]!;
  const first = Number(/\bfirst ?: ?(\d+)/.exec(args)?.[1] ?? Number.NaN);
  if (!/\bstates ?: ?\[? ?OPEN ?\]?/.test(args) || !/field ?: ?CREATED_AT/.test(args) || !/direction ?: ?ASC/.test(args)) return undefined;
  const viewer = { login: ctx.login };
  const answer = (body: unknown): GraphqlResult => ({ status: 200, body, operationId: 'graphql/viewer+issues', write: false });
  if (!(first >= 1 && first <= 100)) {
    return answer({ data: null, errors: [{ message: 'first must be between 1 and 100', type: 'ARGUMENT_LIMIT' }] });
  }
  const owner = String(vars['owner'] ?? '');
  const name = String(vars['name'] ?? '');
  const repo = ctx.state.repo(`${owner}/${name}`);
  if (!repo || !reaches(owner)) {
    return answer({
      data: { viewer, repository: null },
      errors: [{ type: 'NOT_FOUND', path: ['repository'], message: `Could not resolve to a Repository with the name '${owner}/${name}'.` }],
    });
  }
  if (!allows('issues', 'read')) {
    return answer({
      data: { viewer, repository: null },
      errors: [{ type: 'FORBIDDEN', path: ['repository', 'issues'], message: 'Resource not accessible by integration' }],
    });
  }
  const after = typeof vars['after'] === 'string' ? Number(Buffer.from(vars['after'], 'base64url').toString('utf8')) : 0;
  const open = repo.issues.filter((i) => i.state === 'open').sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.number - b.number);
  const page = open.slice(after, after + first);
  const end = after + page.length;
  return answer({
    data: {
      viewer,
      repository: {
        issues: {
          pageInfo: { hasNextPage: end < open.length, endCursor: Buffer.from(String(end)).toString('base64url') },
          nodes: page.map((i) => issueNode(ctx, repo, i)),
        },
      },
    },
  });
}

export async function handleGraphql(
  ctx: Context,
  body: unknown,
  allows: (permission: string, level: Permission) => boolean,
  reaches: (owner: string) => boolean = () => true,
): Promise<GraphqlResult> {
  const req = (body ?? {}) as { query?: unknown; variables?: unknown };
  if (typeof req.query !== 'string') {
    return {
      status: 400,
      body: { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql' },
      operationId: undefined,
      write: false,
    };
  }
  const query = req.query;
  const vars = (req.variables ?? {}) as Record<string, unknown>;
  const isMutation = /^\s*mutation\b/.test(query);
  // `query { viewer { login } }`: the one query served, and only that field of it (as GitHub answers any token)
  if (!isMutation && ctx.viewer !== false && /^\s*(?:query\b[^{]*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*$/.test(query)) {
    return { status: 200, body: { data: { viewer: { login: ctx.login } } }, operationId: 'graphql/viewer', write: false };
  }
  const dashboard = !isMutation && ctx.viewer !== false ? viewerAndIssues(ctx, query, vars, allows, reaches) : undefined;
  if (dashboard) return dashboard;
  const field = MUTATIONS.find((name) => new RegExp(`\\b${name}\\s*\\(`).test(query));
  if (!isMutation || !field) {
    const name = /\{\s*([_A-Za-z][_0-9A-Za-z]*)/.exec(query)?.[1] ?? 'unknown';
    return {
      status: 200,
      body: error(`fake-github serves only ${MUTATIONS.join(', ')}; got "${name}"`, 'UNSUPPORTED'),
      operationId: `graphql/${name}`,
      write: isMutation,
    };
  }
  const operationId = `graphql/${field}`;
  const done = (out: unknown) => ({ status: 200, body: out, operationId, write: true });
  let input: Value;
  try {
    const start = new RegExp(`\\b${field}\\s*\\(`).exec(query)!;
    const pos = { i: start.index + start[0].length };
    const m = /^\s*input\s*:/.exec(query.slice(pos.i));
    if (!m) return done(error(`Field '${field}' is missing required arguments: input`));
    pos.i += m[0].length;
    input = readValue(query, pos, vars);
  } catch (e) {
    return done(error((e as Error).message));
  }
  if (!input || typeof input !== 'object' || Array.isArray(input))
    return done(error(`Argument 'input' on Field '${field}' has an invalid value`));
  const pullRequestId = input['pullRequestId'];
  if (typeof pullRequestId !== 'string') return done(error(`Argument 'input' on Field '${field}' is missing pullRequestId`));
  if (!allows('pull_requests', 'write') || !allows('contents', 'write')) {
    return done(error('Resource not accessible by integration', 'FORBIDDEN'));
  }
  let found: { repo: NonNullable<ReturnType<Context['state']['repo']>>; pr: o.PullState } | undefined;
  for (const repo of ctx.state.repos.values()) {
    const pr = repo.pulls.find((p) => p.nodeId === pullRequestId);
    if (pr) found = { repo, pr };
  }
  if (!found) return done(error(`Could not resolve to a node with the global id of '${pullRequestId}'`, 'NOT_FOUND'));
  const { pr } = found;
  if (field === 'enablePullRequestAutoMerge') {
    if (pr.state !== 'open') return done(error('Pull request is not in the correct state to enable auto-merge', 'UNPROCESSABLE'));
    // GitHub refuses auto-merge on a pull request it could merge right now: not a draft, no
    // conflicts, every required check passed (none required: always) — "clean" status.
    await ctx.state.refresh(found.repo.fullName);
    if (!pr.draft && (await isMergeable(found.repo, pr)) && missingChecks(ctx.state, found.repo, pr).length === 0) {
      return done(error('Pull request Pull request is in clean status', 'UNPROCESSABLE'));
    }
    const method = String(input['mergeMethod'] ?? 'MERGE');
    if (!['MERGE', 'SQUASH', 'REBASE'].includes(method)) {
      return done(error(`Argument 'mergeMethod' on InputObject 'EnablePullRequestAutoMergeInput' has an invalid value (${method})`));
    }
    pr.autoMerge = {
      mergeMethod: method.toLowerCase() as 'merge' | 'squash' | 'rebase',
      enabledBy: ctx.login,
      commitTitle: typeof input['commitHeadline'] === 'string' ? input['commitHeadline'] : pr.title,
      commitMessage: typeof input['commitBody'] === 'string' ? input['commitBody'] : '',
    };
  } else if (field === 'disablePullRequestAutoMerge') {
    pr.autoMerge = null;
  } else {
    if (pr.state !== 'open') return done(error('Pull request is not open', 'UNPROCESSABLE'));
    if (field === 'convertPullRequestToDraft' && !ctx.state.drafts) {
      return done(error('Draft pull requests are not supported in this repository.', 'UNPROCESSABLE'));
    }
    pr.draft = field === 'convertPullRequestToDraft';
  }
  pr.updatedAt = o.now();
  const autoMergeRequest = pr.autoMerge
    ? { mergeMethod: pr.autoMerge.mergeMethod.toUpperCase(), enabledAt: pr.updatedAt, enabledBy: { login: ctx.login } }
    : null;
  return done({
    data: {
      [field]: {
        clientMutationId: typeof input['clientMutationId'] === 'string' ? input['clientMutationId'] : null,
        pullRequest: { id: pr.nodeId, number: pr.number, autoMergeRequest },
      },
    },
  });
}
