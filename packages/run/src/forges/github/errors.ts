import type { ForgeErrorCode } from '../errors.js';

/**
 * GitHub's refusals, as a user can act on them: which permission the token lacks (GitHub names it
 * in the `X-Accepted-GitHub-Permissions` header) and what to change; bad credentials; rate limits.
 */

/** The parts of an Octokit RequestError this reads (anything thrown may be passed). */
interface ErrorLike {
  readonly status?: number;
  readonly message?: string;
  readonly response?: { readonly headers?: Readonly<Record<string, string | number | undefined>>; readonly data?: unknown };
}

/** GitHub's permission names → the workflow's `permissions:` key and the App's setting. */
const PERMISSIONS: Record<string, { workflow?: string; app: string }> = {
  pull_requests: { workflow: 'pull-requests', app: 'Pull requests' },
  contents: { workflow: 'contents', app: 'Contents' },
  issues: { workflow: 'issues', app: 'Issues' },
  statuses: { workflow: 'statuses', app: 'Commit statuses' },
  checks: { workflow: 'checks', app: 'Checks' },
  metadata: { app: 'Metadata' },
  workflows: { app: 'Workflows' },
  members: { app: 'Members' },
};

/**
 * `X-Accepted-GitHub-Permissions: contents=read; pull_requests=write,issues=write` lists
 * alternatives separated by `;`, each a comma list of `name=level` that together suffice.
 */
export function parseAcceptedPermissions(header: string): Array<Array<{ name: string; level: string }>> {
  return header
    .split(';')
    .map((alt) =>
      alt
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .map((p) => {
          const [name, level] = p.split('=');
          return { name: (name ?? '').trim(), level: (level ?? '').trim() };
        }),
    )
    .filter((alt) => alt.length > 0);
}

/** "the token lacks pull_requests=write: give the workflow `permissions: pull-requests: write`, or use …" */
export function missingPermissionAdvice(header: string): string {
  const alternatives = parseAcceptedPermissions(header);
  if (alternatives.length === 0) return 'the token lacks a permission this request needs';
  const first = alternatives[0]!;
  const named = first.map((p) => `${p.name}=${p.level}`).join(', ');
  const workflow = first
    .map((p) => (PERMISSIONS[p.name]?.workflow ? `${PERMISSIONS[p.name]!.workflow}: ${p.level}` : undefined))
    .filter((s): s is string => s !== undefined);
  const app = first
    .map(
      (p) =>
        `${PERMISSIONS[p.name]?.app ?? p.name}: ${p.level === 'write' ? 'Read and write' : p.level === 'read' ? 'Read-only' : p.level}`,
    )
    .join(', ');
  const workflowAdvice = workflow.length > 0 ? `give the workflow \`permissions: ${workflow.join(', ')}\`, or ` : '';
  const others =
    alternatives.length > 1
      ? ` (GitHub also accepts ${alternatives
          .slice(1)
          .map((alt) => alt.map((p) => `${p.name}=${p.level}`).join(', '))
          .join(' or ')})`
      : '';
  return `the token lacks ${named}: ${workflowAdvice}use a GitHub App token with ${app}${others}`;
}

function header(error: ErrorLike, name: string): string | undefined {
  const headers = error.response?.headers ?? {};
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name && v !== undefined) return String(v);
  return undefined;
}

function detail(error: ErrorLike): string {
  const data = error.response?.data as { message?: unknown; errors?: unknown } | undefined;
  const parts: string[] = [];
  if (data && typeof data.message === 'string') parts.push(data.message);
  if (data && Array.isArray(data.errors)) {
    for (const e of data.errors) {
      if (typeof e === 'string') parts.push(e);
      else if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string')
        parts.push((e as { message: string }).message);
    }
  }
  if (parts.length === 0 && error.message) parts.push(error.message.split('\n')[0]!);
  return [...new Set(parts)].join('; ');
}

/**
 * GitHub's 403 "This installation has been suspended": the App's installation on an owner was
 * suspended by one of its owners. Neither a permission nor another token of the same App helps,
 * so it is told apart from a plain refusal (whose advice is to pass a different token).
 */
function isSuspendedInstallation(e: ErrorLike): boolean {
  return e.status === 403 && /installation has been suspended/i.test(detail(e));
}

/**
 * The code of a failed GitHub request: a permission GitHub named, a refusal (403) without one,
 * or any other failure (rate limits included: the next run continues, no permission to give).
 */
export function githubErrorCode(error: unknown): ForgeErrorCode {
  const e = (error ?? {}) as ErrorLike;
  if (isSuspendedInstallation(e)) return 'installation-suspended';
  if ((e.status === 403 || e.status === 404) && header(e, 'x-accepted-github-permissions') !== undefined) return 'missing-permission';
  if (e.status === 403 && !/rate limit/i.test(detail(e))) return 'forbidden';
  return 'github-request-failed';
}

/**
 * One line for a failed GitHub request: `what` says what kdelta was doing ("open the pull
 * request for kdelta/web in org/cluster-01"). Never includes the token (the error's request
 * headers are not read).
 */
export function describeGitHubError(error: unknown, what: string, tokenName = 'the token', owner?: string): string {
  const e = (error ?? {}) as ErrorLike;
  const status = typeof e.status === 'number' ? e.status : undefined;
  if (status === undefined) return `GitHub: cannot ${what}: ${e.message ?? String(error)}`;
  if (status === 401) {
    return `GitHub: cannot ${what}: GitHub refused ${tokenName} (401 bad credentials: expired, revoked or mistyped)`;
  }
  const accepted = header(e, 'x-accepted-github-permissions');
  if ((status === 403 || status === 404) && accepted !== undefined) {
    return `GitHub: cannot ${what}: ${missingPermissionAdvice(accepted)}`;
  }
  if (isSuspendedInstallation(e)) {
    return `GitHub: cannot ${what}: ${installationSuspendedAdvice(owner)}`;
  }
  const text = detail(e);
  if ((status === 403 || status === 429) && /rate limit/i.test(text)) {
    const retry = header(e, 'retry-after');
    return `GitHub: cannot ${what}: rate limited (${status}${retry ? `, retry after ${retry}s` : ''}) after retrying: ${text}; the next run continues`;
  }
  if (status === 404) {
    return `GitHub: cannot ${what}: not found (404): the repository does not exist or the token cannot see it (a GITHUB_TOKEN reaches only its own repository; use a GitHub App token or a PAT for others)`;
  }
  return `GitHub: cannot ${what}: ${status}${text ? ` ${text}` : ''}`;
}

/** What to do about a suspended installation (`owner`: the account it is installed on, where known). */
export function installationSuspendedAdvice(owner?: string): string {
  const on = owner ? ` on ${owner}` : '';
  return `the GitHub App's installation${on} is suspended (403 "This installation has been suspended"): an owner of ${owner ?? 'the account'} must unsuspend it (Settings → GitHub Apps → the App → Configure → Unsuspend); no other token or permission helps until then`;
}
