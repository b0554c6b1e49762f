import { GitError } from './errors.js';
import { runGit } from './exec.js';
import { listRemoteRefs, remoteContext } from './refs.js';
import { assertSafeArgument } from './url.js';

export interface Author {
  readonly name: string;
  readonly email: string;
}

export interface WorkTreeOptions {
  /** A git work tree (a clone of the downstream repository). */
  readonly dir: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly token?: string;
  /** What `token` is, for the message when the server refuses it. */
  readonly tokenName?: string | undefined;
}

function checkBranch(branch: string): void {
  assertSafeArgument(branch, 'branch');
  if (!/^[A-Za-z0-9._/+-]+$/.test(branch) || branch.includes('..') || branch.endsWith('/') || branch.endsWith('.lock')) {
    throw new GitError({ code: 'refused-argument', message: `"${branch}" is not a valid branch name` });
  }
}

/** Create (or with `force`, reset) branch `branch` at `base` and check it out. */
export async function createBranch(options: WorkTreeOptions & { branch: string; base: string; force?: boolean }): Promise<string> {
  checkBranch(options.branch);
  assertSafeArgument(options.base, 'base');
  await runGit(['switch', '--quiet', options.force ? '-C' : '-c', options.branch, options.base, '--'], { cwd: options.dir });
  return readLocalHead({ dir: options.dir });
}

/** The commit a local ref points at (default HEAD). */
export async function readLocalHead(options: { dir: string; ref?: string }): Promise<string> {
  const ref = options.ref ?? 'HEAD';
  assertSafeArgument(ref, 'ref');
  const { stdout } = await runGit(['rev-parse', '--verify', `${ref}^{commit}`], { cwd: options.dir });
  return stdout.trim();
}

/**
 * Stage everything (or `paths`) and commit as `author` (author and committer). Returns the new
 * commit, or undefined when there was nothing to commit.
 */
export async function commitAll(
  options: WorkTreeOptions & { message: string; author: Author; paths?: readonly string[]; allowEmpty?: boolean },
): Promise<string | undefined> {
  const paths = options.paths ?? ['.'];
  for (const p of paths) assertSafeArgument(p, 'path');
  await runGit(['add', '--all', '--', ...paths], { cwd: options.dir });
  const { stdout: staged } = await runGit(['diff', '--cached', '--name-only'], { cwd: options.dir });
  if (!staged.trim() && !options.allowEmpty) return undefined;
  const { name, email } = options.author;
  await runGit(['commit', '--quiet', '--no-verify', ...(options.allowEmpty ? ['--allow-empty'] : []), '-m', options.message], {
    cwd: options.dir,
    env: {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
    },
  });
  return readLocalHead({ dir: options.dir });
}

/**
 * Push local `branch` to `remote` (a URL or path, or a configured remote name such as `origin`).
 * With `expectedHead` the push is a `--force-with-lease` against exactly that commit (`null`:
 * the remote branch must not exist yet); without it a plain fast-forward push.
 */
export async function push(
  options: WorkTreeOptions & { remote: string; branch: string; expectedHead?: string | null; localRef?: string },
): Promise<void> {
  checkBranch(options.branch);
  const local = options.localRef ?? options.branch;
  assertSafeArgument(local, 'ref');
  const target = await remoteTarget(options);
  const lease = options.expectedHead === undefined ? [] : [`--force-with-lease=refs/heads/${options.branch}:${options.expectedHead ?? ''}`];
  await runGit(['push', '--quiet', ...lease, '--', target.url, `${local}:refs/heads/${options.branch}`], {
    cwd: options.dir,
    env: target.env,
    secrets: target.secrets,
  });
}

async function remoteTarget(options: WorkTreeOptions & { remote: string }) {
  assertSafeArgument(options.remote, 'remote');
  if (/^[A-Za-z0-9_.-]+$/.test(options.remote)) {
    try {
      const { stdout } = await runGit(['remote', 'get-url', options.remote], { cwd: options.dir });
      const ctx = remoteContext({
        repo: stdout.trim(),
        cwd: options.dir,
        ...(options.env ? { env: options.env } : {}),
        ...(options.token ? { token: options.token, tokenName: options.tokenName } : {}),
      });
      return { url: options.remote, env: ctx.env, secrets: ctx.secrets };
    } catch {
      // not a remote name: a relative path
    }
  }
  const ctx = remoteContext({
    repo: options.remote,
    cwd: options.dir,
    ...(options.env ? { env: options.env } : {}),
    ...(options.token ? { token: options.token, tokenName: options.tokenName } : {}),
  });
  return { url: ctx.location.url, env: ctx.env, secrets: ctx.secrets };
}

/**
 * Fetch `branch` of `remote` into the local ref `into` (replaced): what another writer pushed
 * there, to compare with. Returns the fetched commit.
 */
export async function fetchBranch(options: WorkTreeOptions & { remote: string; branch: string; into: string }): Promise<string> {
  checkBranch(options.branch);
  assertSafeArgument(options.into, 'ref');
  const target = await remoteTarget(options);
  await runGit(['fetch', '--quiet', '--no-tags', '--', target.url, `+refs/heads/${options.branch}:${options.into}`], {
    cwd: options.dir,
    env: target.env,
    secrets: target.secrets,
  });
  return readLocalHead({ dir: options.dir, ref: options.into });
}

/** The commit a branch points at on a remote repository, or undefined when it does not exist. */
export async function readRemoteHead(options: {
  repo: string;
  branch: string;
  cwd?: string;
  token?: string;
  env?: Readonly<Record<string, string | undefined>>;
}): Promise<string | undefined> {
  checkBranch(options.branch);
  const refs = await listRemoteRefs({ ...options, patterns: [`refs/heads/${options.branch}`] });
  return refs.find((r) => r.name === `refs/heads/${options.branch}`)?.commit;
}

/**
 * Delete `branch` on `remote`, only if it still points at `expectedHead` (a lease: a branch that
 * someone moved since it was read is never deleted).
 */
export async function deleteRemoteBranch(
  options: WorkTreeOptions & { remote: string; branch: string; expectedHead: string },
): Promise<void> {
  checkBranch(options.branch);
  assertSafeArgument(options.expectedHead, 'expectedHead');
  const target = await remoteTarget(options);
  await runGit(
    [
      'push',
      '--quiet',
      `--force-with-lease=refs/heads/${options.branch}:${options.expectedHead}`,
      '--',
      target.url,
      `:refs/heads/${options.branch}`,
    ],
    { cwd: options.dir, env: target.env, secrets: target.secrets },
  );
}

/**
 * A bare clone of `repo` (every branch, no tags) in `dest`, which must not exist: the local copy
 * a run reads a downstream repository from. Credentials stay in the environment.
 */
export async function cloneBare(options: {
  repo: string;
  dest: string;
  cwd?: string;
  token?: string;
  tokenName?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
}): Promise<void> {
  assertSafeArgument(options.dest, 'dest');
  const ctx = remoteContext({
    repo: options.repo,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.token ? { token: options.token, tokenName: options.tokenName } : {}),
  });
  // --template=: no hooks or samples from the user's template directory in a run's mirror
  await runGit(['clone', '--quiet', '--template=', '--bare', '--no-tags', '--', ctx.location.url, options.dest], {
    env: ctx.env,
    secrets: ctx.secrets,
  });
}
