import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GitError } from './errors.js';
import { parseServerTokens, SERVER_TOKENS_ENV, type ServerToken, tokenOfServer } from './server-tokens.js';
import { type RepoLocation, repoLocation } from './url.js';

/**
 * What the user vouched for. A repository the user named (a `pkg get` argument, the control
 * repository, a Repository of the control resources) is fetched as today; one that only package
 * content names (a nested Kptfile's `upstream.git.repo`, an adopted copy's `upstreamLock`) is held
 * to this: the user's credentials go only to the repositories here (never to a whole host because
 * a named repository lives there), and a repository on this machine is read only when the user
 * named it or allowed local upstreams. Made once by {@link sourceTrust}, passed as `trust` to
 * every read of a repository that content named.
 */
export interface SourceTrust {
  /** The repositories that get the user's credentials: those named, and the patterns listed. */
  readonly repositories: readonly RepositoryPattern[];
  /** Hosts (lower case) whose owner and repository names compare without case: GitHub's. */
  readonly githubHosts: ReadonlySet<string>;
  /** Repositories on this machine that the user named (absolute paths, symlinks resolved, no `.git`). */
  readonly localRepos: ReadonlySet<string>;
  /** Package content may name any repository on this machine (`KDELTA_ALLOW_LOCAL_UPSTREAMS=1`). */
  readonly allowLocal: boolean;
  /**
   * The run's own token for a repository, when it has one for it (the forge's token for its own
   * server, or the GitHub App installation token of the repository's owner): sent by git, for
   * `ls-remote` and `fetch` alike, to the repositories above only. A function, not a value: an
   * installation token is minted per owner and renewed before it expires.
   */
  readonly tokenFor?: ((url: string) => string | undefined) | undefined;
  /** What `tokenFor`'s token is, for the message when the server refuses it. */
  readonly tokenName?: ((url: string) => string | undefined) | undefined;
  /** A token per git server: sent to that server's repositories above only (see {@link serverTokenFor}). */
  readonly serverTokens?: readonly ServerToken[] | undefined;
}

/**
 * One repository, the repositories under a path (`owner/*`), or a whole host, as the user named
 * or listed it. Compared with {@link RemoteRepository} by {@link patternMatches}.
 */
export interface RepositoryPattern {
  /** `https`, `http`, `ssh` or `git`; absent: any (a listed pattern names a repository, not a transport). */
  readonly scheme?: string;
  /** Lower case; an IPv6 address in brackets. */
  readonly hostname: string;
  /** Absent: every port. */
  readonly port?: string;
  /** The path's segments (without `.git`); absent: the whole host. */
  readonly path?: readonly string[];
  /** Written `…/*`: every repository under `path`, not `path` itself. */
  readonly under?: boolean;
}

/** A remote repository's normalised address: what a pattern is compared with. */
export interface RemoteRepository {
  readonly scheme: string;
  readonly hostname: string;
  /** Filled in from the scheme when the URL names none. */
  readonly port: string;
  /** Segments of the path, without a trailing `/` or `.git`. */
  readonly path: readonly string[];
}

/** The environment variable listing repositories that get credentials (comma, space or newline separated). */
export const CREDENTIAL_REPOSITORIES_ENV = 'KDELTA_CREDENTIAL_REPOSITORIES';
/** The older list of whole hosts that get credentials: read by the same rules (a path there names repositories). */
export const CREDENTIAL_HOSTS_ENV = 'KDELTA_CREDENTIAL_HOSTS';
/** The environment variable that lets package content name repositories on this machine. */
export const ALLOW_LOCAL_UPSTREAMS_ENV = 'KDELTA_ALLOW_LOCAL_UPSTREAMS';

/** How the user may allow more repositories, for every message that withholds credentials. */
export const CREDENTIAL_REPOSITORIES_SETTING = `${CREDENTIAL_REPOSITORIES_ENV} (kdelta run's --credential-repository, the Action's credential-repositories input)`;

export interface SourceTrustOptions {
  /** Repositories the user named (URLs or paths; relative paths against `cwd`). */
  readonly named?: readonly (string | undefined)[];
  /**
   * Repository patterns the user listed, besides `KDELTA_CREDENTIAL_REPOSITORIES` and
   * `KDELTA_CREDENTIAL_HOSTS` (see {@link parseRepositoryPattern}).
   */
  readonly repositories?: readonly string[];
  /** Same as `repositories` (the older name: a whole host is still written `host` or `host:port`). */
  readonly hosts?: readonly string[];
  /**
   * The GitHub server that `owner/repo` and `owner/*` name repositories of, and whose names
   * compare without case. Default: `GITHUB_SERVER_URL` from `env`, else https://github.com.
   */
  readonly githubServer?: string | undefined;
  readonly cwd?: string;
  /** Default: whether `KDELTA_ALLOW_LOCAL_UPSTREAMS` is `1` (or `true`). */
  readonly allowLocal?: boolean;
  /** See {@link SourceTrust.tokenFor}. */
  readonly tokenFor?: ((url: string) => string | undefined) | undefined;
  readonly tokenName?: ((url: string) => string | undefined) | undefined;
  /** Tokens per server, besides `KDELTA_SERVER_TOKENS` (`<server>=<token>` a line); given twice, these win. */
  readonly serverTokens?: readonly ServerToken[] | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The trust of one command or run. A listed pattern that is not one throws a `GitError` (code
 * `invalid-pattern`) naming where it was listed.
 */
export function sourceTrust(options: SourceTrustOptions = {}): SourceTrust {
  const env = options.env ?? process.env;
  const server = githubServerOf(options.githubServer ?? env.GITHUB_SERVER_URL);
  const githubHosts = new Set(['github.com', server.hostname]);
  const repositories: RepositoryPattern[] = [];
  const listed: [string, readonly string[]][] = [
    [CREDENTIAL_REPOSITORIES_ENV, splitList(env[CREDENTIAL_REPOSITORIES_ENV])],
    [CREDENTIAL_HOSTS_ENV, splitList(env[CREDENTIAL_HOSTS_ENV])],
    ['the repositories listed', [...(options.repositories ?? []), ...(options.hosts ?? [])]],
  ];
  for (const [where, entries] of listed) {
    for (const entry of entries) repositories.push(listedPattern(entry, where, server));
  }
  const allowLocal = options.allowLocal ?? /^(1|true)$/i.test(env[ALLOW_LOCAL_UPSTREAMS_ENV] ?? '');
  const serverTokens = serverTokensOf(env, options.serverTokens ?? []);
  return trustNamed(
    {
      repositories,
      githubHosts,
      localRepos: new Set(),
      allowLocal,
      ...(options.tokenFor ? { tokenFor: options.tokenFor } : {}),
      ...(options.tokenName ? { tokenName: options.tokenName } : {}),
      ...(serverTokens.length > 0 ? { serverTokens } : {}),
    },
    options.named ?? [],
    options.cwd,
  );
}

function splitList(text: string | undefined): string[] {
  return (text ?? '').split(/[\s,]+/).filter(Boolean);
}

function listedPattern(entry: string, where: string, server: GitHubServer): RepositoryPattern {
  const parsed = parseRepositoryPattern(entry, server.url);
  if (typeof parsed === 'string') {
    throw new GitError({ code: 'invalid-pattern', message: `${where}: "${entry}" ${parsed}` });
  }
  return parsed;
}

/** `trust` with more repositories the user named (remote ones exactly, or their paths on this machine). */
export function trustNamed(trust: SourceTrust, named: readonly (string | undefined)[], cwd: string = process.cwd()): SourceTrust {
  const repositories = [...trust.repositories];
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
    const remote = remoteRepository(location);
    if (remote) repositories.push({ ...remote });
  }
  return {
    repositories,
    githubHosts: trust.githubHosts,
    localRepos,
    allowLocal: trust.allowLocal,
    ...(trust.tokenFor ? { tokenFor: trust.tokenFor } : {}),
    ...(trust.tokenName ? { tokenName: trust.tokenName } : {}),
    ...(trust.serverTokens ? { serverTokens: trust.serverTokens } : {}),
  };
}

/** `given` (a flag, an input), then those of `KDELTA_SERVER_TOKENS` for the other servers. */
function serverTokensOf(env: Readonly<Record<string, string | undefined>>, given: readonly ServerToken[]): ServerToken[] {
  const parsed = parseServerTokens((env[SERVER_TOKENS_ENV] ?? '').split(/[\n,]/));
  if ('problem' in parsed) throw new GitError({ code: 'invalid-server-token', message: `${SERVER_TOKENS_ENV}: ${parsed.problem}` });
  return [...given, ...parsed.tokens.filter((t) => !given.some((g) => g.server === t.server))];
}

/**
 * The token given for `location`'s server, when the user named or listed that repository (the
 * rule every credential keeps): a server token never goes to another host, nor to a repository
 * of its server that only package content names.
 */
export function serverTokenFor(trust: SourceTrust, location: RepoLocation): ServerToken | undefined {
  const given = tokenOfServer(trust.serverTokens ?? [], location);
  return given && credentialsAllowed(trust, location) ? given : undefined;
}

/**
 * The servers of `trust`'s tokens that none of its repositories is on: a token given for nothing
 * (a mistyped server, or a Repository missing), for a warning.
 */
export function unusedServerTokens(trust: SourceTrust): string[] {
  return (trust.serverTokens ?? [])
    .filter((t) => {
      const url = new URL(t.server);
      const port = url.port || defaultPorts.https!;
      return !trust.repositories.some(
        (p) => p.hostname === url.hostname && (p.port === undefined || p.port === port) && (p.scheme === undefined || p.scheme === 'https'),
      );
    })
    .map((t) => t.server);
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

const defaultPorts: Readonly<Record<string, string>> = { https: '443', http: '80', ssh: '22', git: '9418' };

/**
 * The normalised address of a remote repository: scheme (`git+ssh` and scp-like are `ssh`), host
 * in lower case, port (the scheme's when none is written), path without a trailing `/` or `.git`.
 * Undefined on this machine, and for a path with `.` or `..` segments (it names no repository
 * by itself, so no pattern matches it).
 */
export function remoteRepository(location: RepoLocation): RemoteRepository | undefined {
  if (location.kind === 'file' || location.kind === 'local') return undefined;
  let scheme: string;
  let hostname: string;
  let port: string;
  let pathname: string;
  const scp = /^(?:[^@/:]+@)?([^/:]+):(.*)$/s.exec(location.url);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(location.url) && scp) {
    scheme = 'ssh';
    hostname = scp[1]!.toLowerCase();
    port = defaultPorts.ssh!;
    pathname = scp[2]!;
  } else {
    let url: URL;
    try {
      url = new URL(location.url);
    } catch {
      return undefined;
    }
    scheme = url.protocol.slice(0, -1).toLowerCase();
    if (scheme === 'git+ssh') scheme = 'ssh';
    hostname = url.hostname.toLowerCase();
    port = url.port || defaultPorts[scheme] || '';
    pathname = url.pathname;
  }
  if (!hostname) return undefined;
  const path = pathSegments(pathname);
  if (path === undefined) return undefined;
  return { scheme, hostname, port, path };
}

/** A path's segments without the trailing `/` or `.git`; undefined when a segment is `.` or `..`. */
function pathSegments(pathname: string): string[] | undefined {
  const segments = pathname
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .split('/')
    .filter((s) => s !== '');
  return segments.some((s) => s === '.' || s === '..') ? undefined : segments;
}

interface GitHubServer {
  readonly url: string;
  readonly hostname: string;
  readonly port: string | undefined;
}

function githubServerOf(url: string | undefined): GitHubServer {
  try {
    const parsed = new URL(url || 'https://github.com');
    return { url: parsed.origin, hostname: parsed.hostname.toLowerCase(), port: parsed.port || undefined };
  } catch {
    return { url: 'https://github.com', hostname: 'github.com', port: undefined };
  }
}

const looksLikeHost = (segment: string) => /[.:[]/.test(segment) || segment.toLowerCase() === 'localhost';

/**
 * A repository pattern the user listed, or why it is not one:
 * - `owner/repo` or `owner/*`: on the GitHub server `githubServer` (default https://github.com),
 *   over any transport;
 * - `host/path/repo` or `host/path/*` (the first segment has a `.` or a `:`, or is `localhost`),
 *   a URL (`https://host:8443/group/repo.git`, `ssh://git@host/group/*`) or scp-like
 *   (`git@host:group/repo`): on that host, the URL's scheme and port only;
 * - a whole host only when written as one: `host`, `host:port` or a URL without a path.
 * `*` stands for every repository under the path before it, and only as its last segment.
 */
export function parseRepositoryPattern(text: string, githubServer = 'https://github.com'): RepositoryPattern | string {
  const entry = text.trim();
  if (entry === '') return 'is empty';
  if (/\s/.test(entry)) return 'is not a repository pattern (owner/repo, owner/*, host/path/repo, a URL, or a whole host)';
  let pattern: { scheme?: string; hostname: string; port?: string };
  let rest: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/is.exec(entry);
  const scp = /^(?:[^@/:]+@)([^/:]+):(.*)$/s.exec(entry);
  if (scheme) {
    const name = scheme[1]!.toLowerCase() === 'git+ssh' ? 'ssh' : scheme[1]!.toLowerCase();
    if (!(name in defaultPorts)) return `has the scheme "${scheme[1]}": https, http, ssh or git only`;
    let url: URL;
    try {
      url = new URL(`${name === 'https' || name === 'http' ? name : 'https'}://${scheme[2]!.replace(/^[^/@]*@/, '')}`);
    } catch {
      return 'is not a URL';
    }
    if (url.search || url.hash) return 'has a query or a fragment';
    // a port written in an ssh or git URL is read back from the text: https defaults differ
    const port = /^[^/]*:(\d+)(?:\/|$)/.exec(scheme[2]!.replace(/^[^/@]*@/, ''))?.[1] ?? (url.port || defaultPorts[name]!);
    pattern = { scheme: name, hostname: url.hostname.toLowerCase(), port };
    rest = url.pathname;
  } else if (scp) {
    pattern = { scheme: 'ssh', hostname: scp[1]!.toLowerCase(), port: defaultPorts.ssh! };
    rest = scp[2]!;
  } else {
    const [first = '', ...others] = entry.split('/');
    if (others.length === 0 || others.every((s) => s === '') || looksLikeHost(first)) {
      const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d+))?$/i.exec(first);
      if (!m) return 'is not a host (host or host:port)';
      pattern = { hostname: m[1]!.toLowerCase(), ...(m[2] ? { port: m[2] } : {}) };
      rest = others.join('/');
    } else {
      const server = githubServerOf(githubServer);
      pattern = { hostname: server.hostname, ...(server.port ? { port: server.port } : {}) };
      rest = entry;
    }
  }
  const segments = rest.split('/').filter((s) => s !== '');
  if (segments.length === 0) return pattern;
  const under = segments[segments.length - 1] === '*';
  if (under) segments.pop();
  if (segments.some((s) => s.includes('*'))) return 'has a "*" that is not its last segment: write owner/* or host/group/*';
  const path = pathSegments(segments.join('/'));
  if (path === undefined) return 'has a "." or ".." segment';
  if (path.length === 0 && under) return pattern; // host/*: the whole host, written as one
  if (path.length === 0) return 'names no repository';
  return { ...pattern, path, ...(under ? { under } : {}) };
}

/** Whether `pattern` covers `repo`: GitHub's owner and repository names compare without case. */
export function patternMatches(pattern: RepositoryPattern, repo: RemoteRepository, githubHosts: ReadonlySet<string>): boolean {
  if (pattern.scheme !== undefined && pattern.scheme !== repo.scheme) return false;
  if (pattern.hostname !== repo.hostname) return false;
  if (pattern.port !== undefined && pattern.port !== repo.port) return false;
  if (pattern.path === undefined) return true;
  const fold = githubHosts.has(repo.hostname) ? (s: string) => s.toLowerCase() : (s: string) => s;
  if (pattern.under ? repo.path.length <= pattern.path.length : repo.path.length !== pattern.path.length) return false;
  return pattern.path.every((segment, i) => fold(segment) === fold(repo.path[i]!));
}

/**
 * Whether the user's credentials may go to `location`: the user named that repository, or listed
 * a pattern that covers it. A repository on this machine gets none (it needs none).
 */
export function credentialsAllowed(trust: SourceTrust, location: RepoLocation): boolean {
  const repo = remoteRepository(location);
  if (!repo) return false;
  return trust.repositories.some((pattern) => patternMatches(pattern, repo, trust.githubHosts));
}

/**
 * The repository on this machine that git opens for `location` (absolute, symlinks resolved);
 * undefined for a remote one. git opens `<path>.git` for a `<path>` that is not there, as kpt
 * records it (kpt drops the `.git` of the URL it was given): both name one repository.
 */
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
  for (const candidate of [clean, `${clean}.git`]) {
    try {
      return realpathSync(candidate);
    } catch {
      // not there: git tries the next one too
    }
  }
  return clean;
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
