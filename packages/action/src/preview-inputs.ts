import { InputError, type InputReader } from './inputs.js';

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
