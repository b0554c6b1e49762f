import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { type UrlCredentials, splitCredentials } from '@kdelta/git-source';
import { UsageError } from '../command.js';
import { type UpdateStrategy, isUpdateStrategy, pendingSwapTarget, updateStrategies } from '@kdelta/package-update';

/** `pkg get` arguments, as kpt parses them. */
export interface GetArgs {
  /** Repository as recorded in the Kptfile: `.git` stripped, `file://` kept when given, no credentials. */
  readonly repo: string;
  /** Credentials that were written into the repository URL: for the fetch only, never recorded. */
  readonly credentials?: UrlCredentials;
  /** `/` or `/a/b`. */
  readonly directory: string;
  /** The ref given after `@`, else the remote's default branch. */
  readonly ref: string;
  /** Absolute destination directory of the package. */
  readonly destination: string;
  readonly updateStrategy: UpdateStrategy;
}

export interface UpdateArgs {
  /** Absolute, symlink-resolved path of the local package. */
  readonly pkgPath: string;
  /** `''` when no `@ref` was given. */
  readonly ref: string;
  /** The --strategy flag; undefined when not given (the Kptfile's or the default applies). */
  readonly strategy: UpdateStrategy | undefined;
}

/**
 * Split `<repo>[.git]/<dir>[@<ref>]`. The `.git` marker must be followed by `/`, `@` or the end of
 * the argument; without it the split is ambiguous (kpt's rule) unless the argument is a local
 * directory holding a git repository.
 */
export function splitRepoArg(arg: string): { repo: string; directory: string; ref: string | undefined } {
  const m = /^(.+?)\.git(\/[^@]*)?(?:@(.*))?$/.exec(arg);
  if (!m?.[1]) throw new UsageError(`ambiguous repo/dir@version specify '.git' in argument: "${arg}"`);
  const repo = m[1];
  const dir = (m[2] ?? '/').split('/').filter((p) => p !== '' && p !== '.');
  if (dir.includes('..')) throw new UsageError(`package directory may not contain "..": "${arg}"`);
  const ref = m[3] === undefined || m[3] === '' ? undefined : m[3];
  return { repo, directory: `/${dir.join('/')}`, ref };
}

export function parseStrategy(value: string | undefined, flagWord = 'unknown update strategy'): UpdateStrategy | undefined {
  if (value === undefined) return undefined;
  if (isUpdateStrategy(value)) return value;
  throw new UsageError(`${flagWord} "${value}" (one of ${updateStrategies.join(', ')})`);
}

/**
 * kpt's destination rules: an existing directory (symlinks resolved; `.` is the current one) gets
 * the package in `<dest>/<base name of the package directory, else of the repository>`; a path that
 * does not exist is used as is, its missing parents created later as `git clone` does (kpt refuses
 * those). Whether the final directory already exists is for `pkg get` to refuse.
 */
export function resolveDestination(arg: string | undefined, cwd: string, repo: string, directory: string): string {
  const name = directory !== '/' ? basename(directory) : basename(repo.replace(/\/+$/, ''));
  if (arg === undefined) return resolve(cwd, name);
  const cleaned = resolve(cwd, arg);
  let exists = false;
  try {
    lstatSync(cleaned);
    exists = true;
  } catch {
    exists = false;
  }
  if (!exists) {
    let ancestor = dirname(cleaned);
    while (!existsSync(ancestor) && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
    if (!statSync(ancestor).isDirectory()) throw new UsageError(`destination "${arg}": "${ancestor}" is not a directory`);
    return cleaned;
  }
  let real: string;
  try {
    real = realpathSync(cleaned);
  } catch {
    throw new UsageError(`destination "${arg}" is a broken symlink: no such file or directory`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`destination "${arg}" exists and is not a directory`);
  return resolve(real, name);
}

export async function parseGetArgs(
  positionals: readonly string[],
  options: {
    cwd: string;
    strategy?: string | undefined;
    defaultBranch: (repo: string, credentials: UrlCredentials | undefined) => Promise<string>;
  },
): Promise<GetArgs> {
  if (positionals.length === 0) throw new UsageError('requires at least 1 arg(s), only received 0');
  if (positionals.length > 2)
    throw new UsageError(`ambiguous repo/dir@version specify '.git' in argument (got ${positionals.length} arguments)`);
  const [source, dest] = positionals as [string, string | undefined];
  const updateStrategy = parseStrategy(options.strategy) ?? 'resource-merge';
  // Credentials leave the argument first: nothing below (errors included) ever sees them.
  const { url: cleanSource, credentials } = splitCredentials(source);
  const split = splitRepoArg(cleanSource);
  // A relative local path is recorded absolute, so later updates work from any directory.
  const repo = isLocalPath(split.repo) && !isAbsolute(split.repo) ? resolve(options.cwd, split.repo) : split.repo;
  const { directory, ref } = split;
  const destination = resolveDestination(dest, options.cwd, repo, directory);
  return {
    repo,
    ...(credentials ? { credentials } : {}),
    directory,
    ref: ref ?? (await options.defaultBranch(repo, credentials)),
    destination,
    updateStrategy,
  };
}

export function parseUpdateArgs(positionals: readonly string[], options: { cwd: string; strategy?: string | undefined }): UpdateArgs {
  if (positionals.length > 1) throw new UsageError(`accepts at most 1 arg(s), received ${positionals.length}`);
  const arg = positionals[0] ?? '.';
  const at = arg.indexOf('@');
  const path = at >= 0 ? arg.slice(0, at) || '.' : arg;
  const ref = at >= 0 ? arg.slice(at + 1) : '';
  const strategy = parseStrategy(options.strategy, 'unrecognized update strategy');
  let pkgPath: string;
  const cwd = realpathSync(options.cwd);
  try {
    pkgPath = realpathSync(resolve(options.cwd, path));
  } catch {
    // absent only for the instant of an update's swap, unless that update was killed there; then
    // the update or diff finishes or rolls back that swap first
    const pending = pendingSwapTarget(resolve(options.cwd, path));
    if (!pending) throw new UsageError(`package "${path}": no such file or directory`);
    pkgPath = pending;
  }
  const rel = relative(cwd, pkgPath);
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new UsageError(`package path must be under current working directory (got "${path}")`);
  }
  return { pkgPath, ref, strategy };
}

function isLocalPath(repo: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(repo) && !/^[^/:]+@[^/:]+:/.test(repo) && !/^[a-z0-9.-]+\.[a-z]{2,}[:/]/i.test(repo);
}
