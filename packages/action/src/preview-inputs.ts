import type { ServerToken } from '@kdelta/run';
import { type ActionSettings, InputError, type InputReader } from './inputs.js';

/**
 * Whether the Action previews, and what: pure functions of the inputs, the workflow's event and
 * the workspace's repository, unit-tested without a runner.
 */

/** The workflow's event, as far as a preview needs it. */
export interface WorkflowEvent {
  /** `GITHUB_EVENT_NAME`. */
  readonly name: string;
  /** `owner/name` of the repository the workflow runs in (`GITHUB_REPOSITORY`). */
  readonly repository: string;
  /** A pull request event's pull request. */
  readonly pullRequest?: { readonly number: number; readonly headSha: string } | undefined;
}

/** The event from the runner's variables and the event file (`GITHUB_EVENT_PATH`, read by the caller). */
export function workflowEvent(env: Readonly<Record<string, string | undefined>>, payload: unknown): WorkflowEvent {
  const pr = (payload as { pull_request?: { number?: unknown; head?: { sha?: unknown } } } | null)?.pull_request;
  return {
    name: env.GITHUB_EVENT_NAME ?? '',
    repository: env.GITHUB_REPOSITORY ?? '',
    ...(pr && typeof pr.number === 'number' && typeof pr.head?.sha === 'string'
      ? { pullRequest: { number: pr.number, headSha: pr.head.sha } }
      : {}),
  };
}

const PULL_REQUEST_EVENTS: ReadonlySet<string> = new Set(['pull_request', 'pull_request_target']);

/** `mode: preview`, or no mode on a pull request event: the reviewed change is previewed, not run. */
export function isPreview(input: InputReader, event: WorkflowEvent): boolean {
  const mode = input('mode').trim();
  return mode === 'preview' || (mode === '' && PULL_REQUEST_EVENTS.has(event.name));
}

export interface PreviewPlan {
  /** The upstream Repository (a name, or the reviewed repository's URL) of `upstreamRef`. */
  readonly upstream?: string | undefined;
  /** Absent: the control resources of the workspace are the change. */
  readonly upstreamRef?: string | undefined;
  /** The pull request the report is commented on. */
  readonly comment?: { readonly repository: string; readonly number: number } | undefined;
}

/**
 * What to preview. Inputs `upstream-ref` (and `upstream`) say it; else a pull request of another
 * repository than the workspace's (the control repository, checked out by the upstream's
 * workflow) is that upstream's change, at the pull request's head commit; else the workspace's
 * own control resources are the change (a pull request of the control repository).
 */
export function previewPlan(
  input: InputReader,
  event: WorkflowEvent,
  where: { readonly serverUrl: string; readonly workspaceRepository?: string | undefined },
): PreviewPlan {
  const upstream = input('upstream').trim() || undefined;
  const upstreamRef = input('upstream-ref').trim() || undefined;
  const comment = event.pullRequest ? { repository: event.repository, number: event.pullRequest.number } : undefined;
  if (upstreamRef !== undefined) return { upstream, upstreamRef, comment };
  const reviewed = `${where.serverUrl.replace(/\/+$/, '')}/${event.repository}`;
  const ofWorkspace = where.workspaceRepository !== undefined && sameRepository(where.workspaceRepository, reviewed);
  if (event.pullRequest && !ofWorkspace) return { upstream: upstream ?? reviewed, upstreamRef: event.pullRequest.headSha, comment };
  if (upstream !== undefined)
    throw new InputError(
      'upstream',
      `names the Repository of input "upstream-ref": set the ref to preview (got upstream "${upstream}" alone)`,
    );
  return { comment };
}

/** Two spellings of one repository: credentials, `.git` and a trailing `/` aside, host in any case. */
function sameRepository(a: string, b: string): boolean {
  const norm = (u: string) =>
    u
      .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1')
      .replace(/\/+$/, '')
      .replace(/\.git$/i, '')
      .toLowerCase();
  return norm(a) === norm(b);
}

/**
 * The preview's connection when the downstreams are on another GitHub than the workflow's (input
 * `downstream-server`): an upstream on a GitHub Enterprise Server previewed by its own workflow,
 * its downstreams on github.com. The downstreams' proposals are then read on that server with its
 * `server-tokens` line, and the workflow's `token` becomes the token of the workflow's own server
 * (where the reviewed upstream is), on the same terms as any server token. The comment stays on
 * the workflow's server. Unset, or the workflow's own server: the settings as they are.
 */
export function previewConnection(input: InputReader, settings: ActionSettings, workflowServer: string): ActionSettings {
  const text = input('downstream-server').trim();
  if (text === '' || settings.forge !== 'github') return settings;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError('downstream-server', `expected the downstreams' GitHub, https://host (got "${text}")`);
  }
  if (url.protocol !== 'https:' || url.pathname.replace(/\/+$/, '') !== '' || url.search || url.hash) {
    throw new InputError('downstream-server', `expected the downstreams' GitHub, https://host without a path (got "${text}")`);
  }
  const server = url.origin.toLowerCase();
  const own = new URL(workflowServer).origin.toLowerCase();
  if (server === own) return settings;
  const given = settings.options.settings.values.serverTokens ?? [];
  const token = given.find((t) => t.server === server);
  if (!token) {
    throw new InputError(
      'downstream-server',
      `the downstreams on ${server} are read with a token for that server: add a line "${server}=<token>" to input server-tokens`,
    );
  }
  // the workflow's token, for the reviewed upstream on the workflow's own server (a line given for it wins)
  const serverTokens: ServerToken[] =
    given.some((t) => t.server === own) || settings.token.trim() === ''
      ? [...given]
      : [...given, { server: own, token: settings.token.trim() }];
  const github = {
    token: token.token,
    tokenName: `the server-tokens line for ${server}`,
    serverUrl: server,
    apiUrl: server === 'https://github.com' ? 'https://api.github.com' : `${server}/api/v3`,
    graphqlUrl: server === 'https://github.com' ? 'https://api.github.com/graphql' : `${server}/api/graphql`,
  };
  const checked = settings.options.settings;
  return {
    ...settings,
    options: {
      ...settings.options,
      github,
      settings: {
        values: { ...checked.values, serverTokens },
        origins: { ...checked.origins, serverTokens: { type: 'input', name: 'server-tokens' } },
      },
    },
  };
}
