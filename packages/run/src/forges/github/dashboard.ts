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

export function createDashboard(client: GitHubClient): Dashboard {
  /** Who the forge writes as, per token (an App's installation token per owner): read once. */
  const logins = new Map<string, Promise<string>>();

  /**
   * The login of the token's owner, as GitHub's GraphQL `viewer` names it: a user, or an App's
   * installation as `<slug>[bot]` (REST's GET /user refuses installation tokens, GITHUB_TOKEN's too).
   */
  function ownLogin(repo: GitHubRepo): Promise<string> {
    const key = client.tokens.app ? repo.owner.toLowerCase() : '';
    let hit = logins.get(key);
    if (!hit) {
      hit = (async () => {
        const what = 'read who the token is (the GraphQL viewer)';
        let viewer: { data?: { viewer?: { login?: unknown } }; errors?: Array<{ message?: string }> } | undefined;
        let refused: unknown;
        try {
          viewer = await client.graphqlData(what, repo, 'query { viewer { login } }');
        } catch (error) {
          refused = error;
        }
        const login = viewer?.data?.viewer?.login;
        if (typeof login === 'string' && login !== '') return login;
        // A server without GraphQL's viewer (an older Enterprise Server, a proxy): REST's GET /user
        // names a user's token (it refuses an installation's, which the viewer above names).
        if (!client.tokens.app) {
          const user = await client.call<{ login?: unknown }>('read who the token is (GET /user)', 'GET /user', {}).catch(() => undefined);
          if (typeof user?.login === 'string' && user.login !== '') return user.login;
        }
        if (refused) throw refused;
        const why = (viewer?.errors ?? []).map((e) => e.message).join('; ') || 'no login in the answer';
        throw new ForgeError('github-request-failed', `GitHub: cannot ${what}: ${why}`);
      })();
      hit.catch(() => logins.delete(key));
      logins.set(key, hit);
    }
    return hit;
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
      // The list holds pull requests too.
      const me = await ownLogin(repo);
      const ours = (i: IssueJson) =>
        !i.pull_request &&
        (i.user?.login ?? '').toLowerCase() === me.toLowerCase() &&
        i.title === target.title &&
        (i.body ?? '').includes(target.marker);
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
