import { ForgeError } from '../errors.js';
import type { DashboardRecord, DashboardTarget, Forge } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';
import { MAX_BODY_CHARS } from './pull-cache.js';
import type { GitHubRepo } from './repo.js';

/**
 * The run's dashboard as an issue of the control repository: the open issue this forge's own
 * identity opened, with the title and the hidden marker. An issue anyone else opened is never
 * read, so its ticks are no one's decisions.
 */

export type Dashboard = Required<Pick<Forge, 'readDashboard' | 'writeDashboard'>>;

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

/** What GraphQL names an issue: a bot's login without `[bot]` (`Bot.login`), unlike REST's `user.login`. */
interface IssueNode {
  number: number;
  url: string;
  title: string;
  body?: string | null;
  author?: { __typename?: string; login?: string } | null;
}

/**
 * Who the token is (`viewer`, as in {@link createDashboard}'s `ownLogin`) and the oldest open issues of
 * the control repository, in one request: a run with nothing new reads the dashboard for one read.
 */
const VIEWER_AND_ISSUES = `query($owner: String!, $name: String!) {
  viewer { login }
  repository(owner: $owner, name: $name) {
    issues(first: 100, states: OPEN, orderBy: {field: CREATED_AT, direction: ASC}) {
      pageInfo { hasNextPage }
      nodes { number url title body author { __typename login } }
    }
  }
}`;

interface ViewerAndIssues {
  data?: {
    viewer?: { login?: unknown } | null;
    repository?: { issues?: { pageInfo?: { hasNextPage?: boolean }; nodes?: Array<IssueNode | null> } | null } | null;
  } | null;
  errors?: Array<{ message?: string }>;
}

/** An issue's author as REST spells it: a bot as `<slug>[bot]`, so a person named `<slug>` is not the bot. */
function restLogin(author: IssueNode['author']): string {
  const login = author?.login ?? '';
  return author?.__typename === 'Bot' ? `${login}[bot]` : login;
}

export function createDashboard(client: GitHubClient): Dashboard {
  /** Who the forge writes as, per token (an App's installation token per owner): read once. */
  const logins = new Map<string, Promise<string>>();
  const loginKey = (repo: GitHubRepo) => (client.tokens.app ? repo.owner.toLowerCase() : '');

  /**
   * The login of the token's owner, as GitHub's GraphQL `viewer` names it: a user, or an App's
   * installation as `<slug>[bot]` (REST's GET /user refuses installation tokens, GITHUB_TOKEN's too).
   * `viewer`: what the combined read already answered (a failure, or an answer without a login).
   */
  function ownLogin(repo: GitHubRepo, viewer?: { answer?: ViewerAndIssues; refused?: unknown }): Promise<string> {
    const key = loginKey(repo);
    let hit = logins.get(key);
    if (!hit) {
      hit = (async () => {
        const what = 'read who the token is (the GraphQL viewer)';
        let answer: { data?: { viewer?: { login?: unknown } | null } | null; errors?: Array<{ message?: string }> } | undefined =
          viewer?.answer;
        let refused: unknown = viewer?.refused;
        if (!viewer) {
          try {
            answer = await client.graphqlData(what, repo, 'query { viewer { login } }');
          } catch (error) {
            refused = error;
          }
        }
        const login = answer?.data?.viewer?.login;
        if (typeof login === 'string' && login !== '') return login;
        // A server without GraphQL's viewer (an older Enterprise Server, a proxy): REST's GET /user
        // names a user's token (it refuses an installation's, which the viewer above names).
        if (!client.tokens.app) {
          const user = await client.call<{ login?: unknown }>('read who the token is (GET /user)', 'GET /user', {}).catch(() => undefined);
          if (typeof user?.login === 'string' && user.login !== '') return user.login;
        }
        if (refused) throw refused;
        const why = (answer?.errors ?? []).map((e) => e.message).join('; ') || 'no login in the answer';
        throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: ${why}`);
      })();
      hit.catch(() => logins.delete(key));
      logins.set(key, hit);
    }
    return hit;
  }

  /**
   * One GraphQL request for who the token is and the first page of open issues. Undefined when
   * it did not tell both (no GraphQL, no viewer, no access to the issues): the REST reads decide.
   */
  async function viewerAndIssues(
    repo: GitHubRepo,
  ): Promise<{ answer?: ViewerAndIssues; refused?: unknown; issues?: { nodes: IssueNode[]; more: boolean } }> {
    let answer: ViewerAndIssues;
    try {
      answer = await client.graphqlData<ViewerAndIssues>(
        `read who the token is and the open issues of ${keyOf(repo)} (GraphQL)`,
        repo,
        VIEWER_AND_ISSUES,
        { owner: repo.owner, name: repo.repo },
      );
    } catch (refused) {
      return { refused };
    }
    const connection = answer.data?.repository?.issues;
    if (!connection || !Array.isArray(connection.nodes)) return { answer };
    const nodes = connection.nodes.filter((n): n is IssueNode => !!n && typeof n.number === 'number');
    return { answer, issues: { nodes, more: connection.pageInfo?.hasNextPage === true } };
  }

  function dashboardRepo(target: DashboardTarget): GitHubRepo {
    const m = /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+)$/.exec(target.repository ?? '');
    if (!m) {
      throw new ForgeError(
        'unsupported-repository',
        `the dashboard's repository must be owner/name on ${client.serverUrl} (got ${JSON.stringify(target.repository ?? '')})`,
      );
    }
    return { owner: m[1]!, repo: m[2]! };
  }

  return {
    async readDashboard(target) {
      const repo = dashboardRepo(target);
      const isOurs = (me: string, author: string, title: string, body: string | null | undefined) =>
        author.toLowerCase() === me.toLowerCase() && title === target.title && (body ?? '').includes(target.marker);
      // Who the token is, and the oldest open issues, in one GraphQL request while its login is not known yet.
      const combined = logins.has(loginKey(repo)) ? undefined : await viewerAndIssues(repo);
      const me = await ownLogin(repo, combined);
      if (combined?.issues) {
        const found = combined.issues.nodes.find((i) => isOurs(me, restLogin(i.author), i.title, i.body));
        if (found) return { id: String(found.number), body: found.body ?? '', url: found.url };
        if (!combined.issues.more) return undefined;
      }
      // The list holds pull requests too.
      const ours = (i: IssueJson) => !i.pull_request && isOurs(me, i.user?.login ?? '', i.title, i.body);
      const issues = await client.allPages<IssueJson>(
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
        ? await client.call<IssueJson>(
            `update the dashboard #${existing.id} of ${keyOf(repo)}`,
            'PATCH /repos/{owner}/{repo}/issues/{issue_number}',
            {
              ...repo,
              issue_number: Number(existing.id),
              title: target.title,
              body,
            },
          )
        : await client.call<IssueJson>(`open the dashboard issue in ${keyOf(repo)}`, 'POST /repos/{owner}/{repo}/issues', {
            ...repo,
            title: target.title,
            body,
          });
      return dashboardOf(issue);
    },
  };
}
