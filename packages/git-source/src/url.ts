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

/**
 * Accept https, ssh (`ssh://…` and scp-like `git@host:path`), `file://` URLs and plain local paths
 * (made absolute against `cwd`). Anything starting with `-` is refused.
 */
export function repoLocation(repo: string, cwd: string = process.cwd()): RepoLocation {
  assertSafeArgument(repo, 'repository');
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

/** A stable, filesystem-safe cache key for a repository URL (credentials removed first). */
export function repoCacheKey(url: string): string {
  const clean = url.replace(/(\/\/)[^/@]+@/, '$1').replace(/\.git$/, '').replace(/\/+$/, '');
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
