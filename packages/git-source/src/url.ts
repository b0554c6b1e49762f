import { createHash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { GitError } from './errors.js';

/** Refuse a value that git would read as an option (`-…`), and control characters. */
export function assertSafeArgument(value: string, what: string): void {
  if (value.startsWith('-')) {
    throw new GitError({ code: 'refused-argument', message: `${what} "${value}" starts with "-" and would be read as an option; refused` });
  }
  if (/[\0\r\n]/.test(value)) {
    throw new GitError({ code: 'refused-argument', message: `${what} contains a control character; refused` });
  }
  if (value === '') throw new GitError({ code: 'refused-argument', message: `${what} is empty` });
}

export type RepoKind = 'https' | 'http' | 'ssh' | 'file' | 'local';

/** How git should be told about a repository, and how to print it without credentials. */
export interface RepoLocation {
  readonly kind: RepoKind;
  /** The URL or absolute path handed to git. */
  readonly url: string;
}

/** Credentials that were written into a repository URL (`https://user:password@host/…`), percent-decoded. */
export interface UrlCredentials {
  readonly username: string;
  /** '' when the URL named a user only (`https://TOKEN@host/…`). */
  readonly password: string;
}

/** A repository with its credentials taken out: `url` is what may be stored, printed or used as a key. */
export interface SplitRepo {
  readonly url: string;
  readonly credentials?: UrlCredentials;
}

const schemeAuthority = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is;

/**
 * Take the userinfo out of a repository URL. For http(s) the whole userinfo goes (a lone user
 * name is as likely a token as a name); for ssh, git:// and file:// only a password goes, since
 * the user name is part of the address (`ssh://git@host/…`). scp-like ssh (`git@host:repo`) and
 * local paths carry no password and come back unchanged.
 */
export function splitCredentials(repo: string): SplitRepo {
  const m = schemeAuthority.exec(repo);
  if (!m) return { url: repo };
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  if (at < 0) return { url: repo };
  const userinfo = authority.slice(0, at);
  const host = authority.slice(at + 1);
  const colon = userinfo.indexOf(':');
  const username = decode(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const password = colon < 0 ? '' : decode(userinfo.slice(colon + 1));
  const http = /^https?:\/\/$/i.test(scheme);
  if (!http && colon < 0) return { url: repo };
  const kept = http ? '' : `${userinfo.slice(0, colon)}@`;
  return { url: `${scheme}${kept}${host}${rest}`, credentials: { username, password } };
}

/** The repository URL without credentials (see {@link splitCredentials}). */
export function withoutCredentials(repo: string): string {
  return splitCredentials(repo).url;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Accept https, ssh (`ssh://…` and scp-like `git@host:path`), `file://` URLs and plain local paths
 * (made absolute against `cwd`). Anything starting with `-` is refused. Credentials in the URL are
 * left out of the location (see {@link splitCredentials}; {@link remoteContext} passes them on).
 */
export function repoLocation(rawRepo: string, cwd: string = process.cwd()): RepoLocation {
  assertSafeArgument(rawRepo, 'repository');
  const repo = withoutCredentials(rawRepo);
  if (/^[a-z0-9+.-]+::/i.test(repo)) {
    throw new GitError({ code: 'refused-argument', message: `repository "${repo}": git remote-helper transports are not accepted` });
  }
  if (/^https:\/\//i.test(repo)) return { kind: 'https', url: repo };
  if (/^http:\/\//i.test(repo)) return { kind: 'http', url: repo };
  if (/^(ssh|git\+ssh):\/\//i.test(repo)) return { kind: 'ssh', url: repo };
  if (/^file:\/\//i.test(repo)) return { kind: 'file', url: repo };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repo)) {
    if (/^git:\/\//i.test(repo)) return { kind: 'ssh', url: repo };
    throw new GitError({ code: 'refused-argument', message: `repository "${repo}": unsupported URL scheme` });
  }
  // scp-like ssh syntax: user@host:path (a colon before any slash, not a Windows drive letter).
  if (/^[^/:]+@[^/:]+:/.test(repo) || /^[a-z0-9.-]+\.[a-z]{2,}:[^/]/i.test(repo)) return { kind: 'ssh', url: repo };
  return { kind: 'local', url: isAbsolute(repo) ? resolve(repo) : resolve(cwd, repo) };
}

/**
 * One spelling per repository, to tell whether two URLs name the same one: without credentials,
 * trailing `/` and `.git` (git itself tries `<path>.git` for `<path>`), scheme and host in lower
 * case, a `file://` URL as its path. Different schemes stay different (they may be different servers).
 */
export function repositoryIdentity(url: string): string {
  const clean = withoutCredentials(url)
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .replace(/\/+$/, '');
  const file = /^file:\/\/(\/.*)$/i.exec(clean);
  if (file) return decode(file[1]!);
  return clean.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, (schemeAndHost) => schemeAndHost.toLowerCase());
}

/**
 * A stable, filesystem-safe cache key for a repository URL. Credentials are removed first, so a
 * new token reuses the cache and no directory name carries a secret.
 */
export function repoCacheKey(url: string): string {
  const clean = repositoryIdentity(url);
  const base = (clean.split(/[/:]/).filter(Boolean).pop() ?? 'repo').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
  return `${base}-${createHash('sha256').update(clean).digest('hex').slice(0, 16)}`;
}

/** A full or abbreviated commit id. */
export function looksLikeCommit(ref: string): boolean {
  return /^[0-9a-f]{7,40}$/i.test(ref);
}

export function isFullCommit(ref: string): boolean {
  return /^[0-9a-f]{40}$/i.test(ref);
}
