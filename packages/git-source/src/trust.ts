import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GitError } from './errors.js';
import { type RepoLocation, repoLocation } from './url.js';

/**
 * What the user vouched for. A repository the user named (a `pkg get` argument, a Repository of
 * the control resources, the forge's server) is fetched as today; one that only package content
 * names (a nested Kptfile's `upstream.git.repo`) is held to this: the user's credentials go only
 * to the hosts here, and a repository on this machine is read only when the user named it or
 * allowed local upstreams. Made once by {@link sourceTrust}, passed as `trust` to every read of a
 * repository that content named.
 */
export interface SourceTrust {
  /**
   * Hosts that get the user's credentials, lower case: `host:port` (a named repository's, its
   * scheme's port filled in) for that port only, a listed `host` without a port for every port.
   */
  readonly hosts: ReadonlySet<string>;
  /** Repositories on this machine that the user named (absolute paths, symlinks resolved). */
  readonly localRepos: ReadonlySet<string>;
  /** Package content may name any repository on this machine (`KDELTA_ALLOW_LOCAL_UPSTREAMS=1`). */
  readonly allowLocal: boolean;
  /**
   * The run's own token for a repository, when it has one for it (the forge's token for its own
   * server, or the GitHub App installation token of the repository's owner): sent by git, for
   * `ls-remote` and `fetch` alike, to repositories on the hosts above only. A function, not a
   * value: an installation token is minted per owner and renewed before it expires.
   */
  readonly tokenFor?: ((url: string) => string | undefined) | undefined;
  /** What `tokenFor`'s token is, for the message when the server refuses it. */
  readonly tokenName?: ((url: string) => string | undefined) | undefined;
}

/** The environment variable listing more hosts that get credentials (comma or space separated). */
export const CREDENTIAL_HOSTS_ENV = 'KDELTA_CREDENTIAL_HOSTS';
/** The environment variable that lets package content name repositories on this machine. */
export const ALLOW_LOCAL_UPSTREAMS_ENV = 'KDELTA_ALLOW_LOCAL_UPSTREAMS';

export interface SourceTrustOptions {
  /** Repositories and servers the user named (URLs or paths; relative paths against `cwd`). */
  readonly named?: readonly (string | undefined)[];
  /** Hosts the user listed (`host`, `host:port` or a URL), besides `KDELTA_CREDENTIAL_HOSTS`. */
  readonly hosts?: readonly string[];
  readonly cwd?: string;
  /** Default: whether `KDELTA_ALLOW_LOCAL_UPSTREAMS` is `1` (or `true`). */
  readonly allowLocal?: boolean;
  /** See {@link SourceTrust.tokenFor}. */
  readonly tokenFor?: ((url: string) => string | undefined) | undefined;
  readonly tokenName?: ((url: string) => string | undefined) | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export function sourceTrust(options: SourceTrustOptions = {}): SourceTrust {
  const env = options.env ?? process.env;
  const listed = (env[CREDENTIAL_HOSTS_ENV] ?? '').split(/[\s,]+/).filter(Boolean);
  const hosts = new Set<string>();
  for (const h of [...listed, ...(options.hosts ?? [])]) {
    const host = hostOfEntry(h);
    if (host) hosts.add(host);
  }
  const allowLocal = options.allowLocal ?? /^(1|true)$/i.test(env[ALLOW_LOCAL_UPSTREAMS_ENV] ?? '');
  return trustNamed(
    {
      hosts,
      localRepos: new Set(),
      allowLocal,
      ...(options.tokenFor ? { tokenFor: options.tokenFor } : {}),
      ...(options.tokenName ? { tokenName: options.tokenName } : {}),
    },
    options.named ?? [],
    options.cwd,
  );
}

/** `trust` with more repositories the user named (their hosts, or their paths on this machine). */
export function trustNamed(trust: SourceTrust, named: readonly (string | undefined)[], cwd: string = process.cwd()): SourceTrust {
  const hosts = new Set(trust.hosts);
  const localRepos = new Set(trust.localRepos);
  for (const repo of named) {
    if (!repo) continue;
    let location: RepoLocation;
    try {
      location = repoLocation(repo, cwd);
    } catch {
      continue; // refused when it is used, with the reason
    }
    const path = localPath(location);
    if (path !== undefined) localRepos.add(path);
    const endpoint = endpointOf(location);
    if (endpoint) hosts.add(`${endpoint.hostname}:${endpoint.port}`);
  }
  return {
    hosts,
    localRepos,
    allowLocal: trust.allowLocal,
    ...(trust.tokenFor ? { tokenFor: trust.tokenFor } : {}),
    ...(trust.tokenName ? { tokenName: trust.tokenName } : {}),
  };
}

/** The host (`host` or `host:port`, lower case) a repository is reached at; undefined on this machine. */
export function hostOf(location: RepoLocation): string | undefined {
  switch (location.kind) {
    case 'https':
    case 'http':
      return urlHost(location.url);
    case 'ssh': {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location.url)) return urlHost(location.url);
      // scp-like: [user@]host:path
      const m = /^(?:[^@/:]+@)?([^/:]+):/.exec(location.url);
      return m?.[1]?.toLowerCase();
    }
    case 'file':
    case 'local':
      return undefined;
    default:
      return location.kind satisfies never;
  }
}

function urlHost(url: string): string | undefined {
  try {
    return new URL(url).host.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

/** A listed host: `host`, `host:port`, or any URL (its host, with the scheme's port when it names none). */
function hostOfEntry(entry: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) {
    try {
      const endpoint = endpointOf(repoLocation(entry));
      return endpoint ? `${endpoint.hostname}:${endpoint.port}` : undefined;
    } catch {
      return undefined;
    }
  }
  return entry.replace(/\/+$/, '').toLowerCase() || undefined;
}

/**
 * Whether the user's credentials may go to `location`: its host was named or listed. A listed
 * `host` without a port covers every port of that host; `host:port` that port only.
 */
export function credentialsAllowed(trust: SourceTrust, location: RepoLocation): boolean {
  const endpoint = endpointOf(location);
  if (!endpoint) return false;
  return trust.hosts.has(`${endpoint.hostname}:${endpoint.port}`) || trust.hosts.has(endpoint.hostname);
}

const defaultPorts: Readonly<Record<string, string>> = { 'https:': '443', 'http:': '80', 'ssh:': '22', 'git+ssh:': '22', 'git:': '9418' };

/** Host name and port (the scheme's default when the URL names none) of a remote repository. */
function endpointOf(location: RepoLocation): { hostname: string; port: string } | undefined {
  const host = hostOf(location);
  if (!host) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(location.url)?.[1]?.toLowerCase() ?? 'ssh:';
  let url: URL;
  try {
    url = new URL(`${scheme === 'https:' || scheme === 'http:' ? scheme : 'https:'}//${host}/`);
  } catch {
    return undefined;
  }
  const hostname = url.hostname;
  const port = url.port || (/:(\d+)$/.exec(host)?.[1] ?? defaultPorts[scheme] ?? '');
  return { hostname, port };
}

/** The absolute path (symlinks resolved) of a repository on this machine; undefined for a remote one. */
function localPath(location: RepoLocation): string | undefined {
  let path: string;
  if (location.kind === 'local') path = location.url;
  else if (location.kind === 'file') {
    try {
      path = fileURLToPath(location.url);
    } catch {
      return undefined;
    }
  } else return undefined;
  const clean = resolve(path).replace(/\/+$/, '') || '/';
  try {
    return realpathSync(clean);
  } catch {
    return clean;
  }
}

/**
 * Refuses a repository on this machine that package content named and the user did not (nor
 * allowed local upstreams): its files would be copied into the package and pushed. `namedBy`
 * (the Kptfile that names it) leads the message.
 */
export function assertContentSource(location: RepoLocation, trust: SourceTrust, namedBy?: string): void {
  const path = localPath(location);
  if (path === undefined || trust.allowLocal || trust.localRepos.has(path)) return;
  throw new GitError({
    code: 'refused-local',
    message: `${namedBy ? `${namedBy}: ` : ''}upstream repository "${location.url}" is on this machine, and package content may not read this machine's files: refused (set ${ALLOW_LOCAL_UPSTREAMS_ENV}=1 or pass --allow-local-upstreams to allow local upstreams named by packages)`,
  });
}
