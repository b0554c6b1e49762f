import type { Author } from './write.js';
import { runGit } from './exec.js';
import { assertSafeArgument } from './url.js';

/**
 * Reads and writes of a repository on this machine (a bare mirror, a scratch clone): one options
 * object each, every ref and path checked before it reaches git's command line.
 */

/** The branches of a repository: name → commit. */
export async function listBranches(options: { dir: string }): Promise<Map<string, string>> {
  const { stdout } = await runGit(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'], { cwd: options.dir });
  const heads = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [ref, sha] = line.trim().split(' ');
    if (ref && sha) heads.set(ref.slice('refs/heads/'.length), sha);
  }
  return heads;
}

/** The paths of the files at `ref`, under `directory` when given. */
export async function listFiles(options: { dir: string; ref: string; directory?: string }): Promise<string[]> {
  assertSafeArgument(options.ref, 'ref');
  const scope = options.directory ? [options.directory] : [];
  const { stdout } = await runGit(['ls-tree', '-r', '--name-only', options.ref, '--', ...scope], { cwd: options.dir });
  return stdout.split('\n').filter(Boolean);
}

/** A file's text at `ref`. */
export async function showFile(options: { dir: string; ref: string; path: string }): Promise<string> {
  assertSafeArgument(options.ref, 'ref');
  return (await runGit(['show', `${options.ref}:${options.path}`], { cwd: options.dir })).stdout;
}

/** Whether `commit` is `of` or one of its ancestors (false too when either is unknown). */
export async function isAncestor(options: { dir: string; commit: string; of: string }): Promise<boolean> {
  assertSafeArgument(options.commit, 'commit');
  assertSafeArgument(options.of, 'commit');
  try {
    await runGit(['merge-base', '--is-ancestor', options.commit, options.of], { cwd: options.dir });
    return true;
  } catch {
    return false;
  }
}

/** A work tree of `branch` of the local repository `source` in `dest`, its objects shared (nothing copied). */
export async function cloneShared(options: { source: string; dest: string; branch: string }): Promise<void> {
  assertSafeArgument(options.branch, 'branch');
  // --template=: no hooks or samples copied from the user's template directory (none may run in a
  // scratch clone, and each copied file is one more to write and remove per job)
  await runGit([
    'clone',
    '--quiet',
    '--template=',
    '--shared',
    '--no-tags',
    '--branch',
    options.branch,
    '--',
    options.source,
    options.dest,
  ]);
}

/** Move a clean work tree to `commit` (HEAD detached there). */
export async function checkoutDetached(options: { dir: string; commit: string }): Promise<void> {
  assertSafeArgument(options.commit, 'commit');
  await runGit(['checkout', '--quiet', '--detach', options.commit, '--'], { cwd: options.dir });
}

export interface StagedChange {
  readonly status: 'added' | 'modified' | 'deleted';
  /** Relative to the repository. */
  readonly path: string;
}

/**
 * Stage every change of the work tree and list those under `directory` ('' for all), compared
 * with `against` (default HEAD: another commit when HEAD is not what the change is measured from).
 */
export async function stageAll(options: { dir: string; directory: string; against?: string }): Promise<StagedChange[]> {
  const against = options.against ?? 'HEAD';
  assertSafeArgument(against, 'commit');
  // a pathspec naming a directory that was deleted whole would not match anything: stage all
  await runGit(['add', '--all'], { cwd: options.dir });
  const { stdout } = await runGit(['diff', '--cached', '--name-status', '--no-renames', against, '--', options.directory || '.'], {
    cwd: options.dir,
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [s, path] = line.split('\t') as [string, string];
      return { status: s === 'A' ? 'added' : s === 'D' ? 'deleted' : 'modified', path };
    });
}

/**
 * Commit what is staged as `author` (author and committer), hooks left out; `allowEmpty`: even
 * when nothing differs from HEAD.
 */
export async function commitStaged(options: { dir: string; message: string; author: Author; allowEmpty?: boolean }): Promise<void> {
  const { name, email } = options.author;
  // maintenance.auto off: a scratch clone is thrown away, and its `maintenance run --auto` is one
  // more process per commit
  await runGit(
    [
      '-c',
      'maintenance.auto=false',
      'commit',
      '--quiet',
      '--no-verify',
      ...(options.allowEmpty ? ['--allow-empty'] : []),
      '-m',
      options.message,
    ],
    {
      cwd: options.dir,
      env: { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email },
    },
  );
}

/** Several revisions at once (one git process): their object ids, in order, one per line of output. */
export async function revParse(options: { dir: string; revs: readonly string[] }): Promise<string[]> {
  for (const rev of options.revs) assertSafeArgument(rev, 'revision');
  const { stdout } = await runGit(['rev-parse', ...options.revs], { cwd: options.dir });
  return stdout.trim().split('\n');
}

export interface CommitInfo {
  readonly sha: string;
  readonly name: string;
  readonly email: string;
  /** The whole message. */
  readonly body: string;
}

/** The commits of `head` not on `base`, newest first; when there are none, `head` itself. */
export async function commitsSince(options: { dir: string; head: string; base: string }): Promise<CommitInfo[]> {
  assertSafeArgument(options.head, 'head');
  assertSafeArgument(options.base, 'base');
  const format = '--format=%H%x1f%an%x1f%ae%x1f%B%x1e';
  const log = async (args: string[]) => (await runGit(['log', format, ...args, '--'], { cwd: options.dir })).stdout;
  let out = await log([options.head, `^${options.base}`]);
  if (out.trim() === '') out = await log(['-1', options.head]);
  const commits: CommitInfo[] = [];
  for (const entry of out.split('\x1e')) {
    const [sha, name, email, body] = entry.trim().split('\x1f');
    if (sha) commits.push({ sha, name: name ?? '', email: email ?? '', body: body ?? '' });
  }
  return commits;
}

/** The top-level directory of the work tree `cwd` is in; undefined outside a git work tree. */
export async function workTreeRoot(options: { cwd: string }): Promise<string | undefined> {
  return runGit(['rev-parse', '--show-toplevel'], { cwd: options.cwd }).then(
    (r) => r.stdout.trim(),
    () => undefined,
  );
}

/** The branch a work tree has checked out; undefined when its HEAD is detached. */
export async function currentBranch(options: { dir: string }): Promise<string | undefined> {
  return runGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: options.dir }).then(
    (r) => r.stdout.trim(),
    () => undefined,
  );
}

/** The URL of a configured remote (default `origin`); undefined when there is none. */
export async function remoteUrl(options: { dir: string; remote?: string }): Promise<string | undefined> {
  const remote = options.remote ?? 'origin';
  assertSafeArgument(remote, 'remote');
  return runGit(['config', '--get', `remote.${remote}.url`], { cwd: options.dir }).then(
    (r) => r.stdout.trim() || undefined,
    () => undefined,
  );
}

/**
 * The newest commit of `ref` that touched `path` and whose message has the line `line` (a
 * trailer such as `Kdelta-Variant: web`, matched whole); undefined when there is none.
 */
export async function lastCommitWithLine(options: { dir: string; ref: string; path: string; line: string }): Promise<string | undefined> {
  assertSafeArgument(options.ref, 'ref');
  const { stdout } = await runGit(
    ['log', '--format=%H%x1f%B%x1e', '--fixed-strings', `--grep=${options.line}`, options.ref, '--', options.path || '.'],
    { cwd: options.dir },
  );
  for (const entry of stdout.split('\x1e')) {
    const [sha, body] = entry.trim().split('\x1f');
    // --grep matches a part of a line: `Kdelta-Variant: web` is also in `Kdelta-Variant: web-2`
    if (sha && (body ?? '').split('\n').some((l) => l.trim() === options.line)) return sha;
  }
  return undefined;
}

/** The files under `directory` that differ between two commits, renames as a deletion and an addition. */
export async function changedBetween(options: { dir: string; from: string; to: string; directory: string }): Promise<StagedChange[]> {
  assertSafeArgument(options.from, 'commit');
  assertSafeArgument(options.to, 'commit');
  const { stdout } = await runGit(['diff', '--name-status', '--no-renames', options.from, options.to, '--', options.directory || '.'], {
    cwd: options.dir,
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [s, path] = line.split('\t') as [string, string];
      return { status: s === 'A' ? 'added' : s === 'D' ? 'deleted' : 'modified', path };
    });
}
