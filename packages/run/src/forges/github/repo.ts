import { withoutCredentials } from '@kdelta/git-source';

/**
 * Where a Repository's `spec.git.repo` lives on the configured GitHub server: `owner/repo`, or a
 * clear error for a URL elsewhere (the github forge opens pull requests only on its own server).
 */

export interface GitHubRepo {
  readonly owner: string;
  readonly repo: string;
}

export type RepoMapping = { readonly ok: true; readonly value: GitHubRepo } | { readonly ok: false; readonly error: string };

const NAME = /^[A-Za-z0-9_.-]+$/;

/** The server's URL parts; `pathname` without a trailing `/` ('' at the root). */
function server(serverUrl: string) {
  const u = new URL(serverUrl);
  return { origin: u.origin, host: u.host, hostname: u.hostname, protocol: u.protocol, pathname: u.pathname.replace(/\/+$/, '') };
}

/**
 * `https://github.com/org/repo(.git)`, `<serverUrl>/org/repo`, `git@<host>:org/repo.git` or
 * `ssh://git@<host>/org/repo.git` → `{ owner: 'org', repo: 'repo' }` when the host is the server's.
 */
export function githubRepoOf(url: string, serverUrl: string): RepoMapping {
  const plain = withoutCredentials(url);
  const base = server(serverUrl);
  const expected = `${base.origin}${base.pathname}/<owner>/<repo>`;
  const refuse = (why: string): RepoMapping => ({
    ok: false,
    error: `repository "${plain}" ${why}: the github forge opens pull requests on ${base.origin}${base.pathname} only (expected ${expected}; use --forge local for other hosts)`,
  });
  let path: string | undefined;
  const scp = /^[A-Za-z0-9_.-]+@([^:/]+):(.*)$/.exec(plain);
  if (scp) {
    if (scp[1]!.toLowerCase() !== base.hostname.toLowerCase()) return refuse(`is on ${scp[1]}`);
    path = `/${scp[2]}`;
  } else {
    let u: URL;
    try {
      u = new URL(plain);
    } catch {
      return refuse('is not a URL');
    }
    if (u.protocol === 'ssh:') {
      if (u.hostname.toLowerCase() !== base.hostname.toLowerCase()) return refuse(`is on ${u.hostname}`);
      path = u.pathname;
    } else if (u.protocol === 'http:' || u.protocol === 'https:') {
      if (u.host.toLowerCase() !== base.host.toLowerCase() || u.protocol !== base.protocol) return refuse(`is on ${u.protocol}//${u.host}`);
      if (!u.pathname.startsWith(`${base.pathname}/`)) return refuse(`is not under ${base.pathname}`);
      path = u.pathname.slice(base.pathname.length);
    } else {
      return refuse(`is a ${u.protocol.replace(/:$/, '')} URL`);
    }
  }
  const parts = path.replace(/\/+$/, '').split('/').filter(Boolean);
  if (parts.length !== 2) return refuse('does not name <owner>/<repo>');
  const owner = parts[0]!;
  const repo = parts[1]!.replace(/\.git$/, '');
  if (!NAME.test(owner) || !NAME.test(repo)) return refuse('does not name <owner>/<repo>');
  return { ok: true, value: { owner, repo } };
}

/** The server's compare page between two commits of `upstreamUrl`, when that repository is on the server. */
export function compareUrlOf(upstreamUrl: string, from: string, to: string, serverUrl: string): string | undefined {
  if (!from || !to || from === to) return undefined;
  const mapped = githubRepoOf(upstreamUrl, serverUrl);
  if (!mapped.ok) return undefined;
  const base = server(serverUrl);
  return `${base.origin}${base.pathname}/${mapped.value.owner}/${mapped.value.repo}/compare/${from}...${to}`;
}

/** The server's page of commit `sha` of `upstreamUrl`, when that repository is on the server. */
export function commitUrlOf(upstreamUrl: string, sha: string, serverUrl: string): string | undefined {
  if (!/^[0-9a-f]{40}$/i.test(sha)) return undefined;
  const mapped = githubRepoOf(upstreamUrl, serverUrl);
  if (!mapped.ok) return undefined;
  const base = server(serverUrl);
  return `${base.origin}${base.pathname}/${mapped.value.owner}/${mapped.value.repo}/commit/${sha}`;
}
