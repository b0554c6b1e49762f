import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { GitError } from './errors.js';
import { runGit } from './exec.js';
import { withLock } from './lock.js';
import { type RemoteOptions, type ResolvedRef, defaultBranch, remoteContext, resolveRef } from './refs.js';
import { assertSafeArgument, isFullCommit, repoCacheKey, withoutCredentials } from './url.js';

/** Where cached partial clones live: `KDELTA_CACHE_DIR`, else `~/.kdelta/repos`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const dir = env.KDELTA_CACHE_DIR;
  return dir && dir.length > 0 ? resolve(dir) : join(homedir(), '.kdelta', 'repos');
}

export interface FetchPackageOptions extends RemoteOptions {
  /** Branch, tag (`<directory>/<ref>` or plain) or commit; default: the remote's default branch. */
  readonly ref?: string;
  /** Package directory inside the repository, `/` or '' for the root. */
  readonly directory?: string;
  /** Where to write the package; must not exist (written to a temp sibling, then renamed). */
  readonly dest: string;
  /** Cache root (default {@link defaultCacheDir}). */
  readonly cacheDir?: string;
  /** Receives human progress lines (for stderr). */
  readonly onProgress?: (line: string) => void;
}

export interface FetchedPackage {
  /** The resolved ref (what `ref` named on the remote). */
  readonly resolved: ResolvedRef;
  /** The ref used (the default branch's name when none was given). */
  readonly ref: string;
  /** Full commit id the package was read at. */
  readonly commit: string;
  /** Normalized directory (`/` or `/a/b`). */
  readonly directory: string;
  readonly dest: string;
  /** Whether the commit was already in the cache (no fetch of history was needed). */
  readonly cacheHit: boolean;
}

export function normalizeDirectory(directory: string | undefined): string {
  const parts = (directory ?? '').split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) {
    throw new GitError({ code: 'refused-argument', message: `directory "${directory}" may not contain ".."` });
  }
  return `/${parts.join('/')}`;
}

/** Options for upload-pack on local and file:// remotes so they honour partial clone like hosted servers. */
const localUploadPack = 'git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack';

/** A value of a git config file, quoted: any character of a URL or a path reads back as written. */
function configValue(value: string): string {
  if (/[\0\r\n]/.test(value))
    throw new GitError({ code: 'refused-argument', message: 'a repository URL contains a control character; refused' });
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * For the cache's fetches, the one asked for and those a partial clone makes for missing blobs:
 * no `git maintenance` process after each (gc.auto is 0 in the cache: it would find nothing to do).
 */
const noMaintenance = ['-c', 'maintenance.auto=false'] as const;

interface CacheRepo {
  readonly gitDir: string;
  readonly root: string;
}

async function openCacheRepo(options: FetchPackageOptions | (RemoteOptions & { cacheDir?: string })): Promise<CacheRepo> {
  const { location, secrets } = remoteContext(options);
  const cacheRoot = options.cacheDir ?? defaultCacheDir(options.env ?? process.env);
  const root = join(cacheRoot, repoCacheKey(location.url));
  const gitDir = join(root, 'git');
  if (!existsSync(join(gitDir, 'HEAD'))) {
    await mkdir(root, { recursive: true });
    const tmp = await mkdtemp(join(root, 'init-'));
    await runGit(['init', '--quiet', '--bare', tmp], { secrets });
    // One write instead of a `git config` process per key: the last value of a key wins, so the
    // [core] section below overrides the one `git init` wrote.
    const local = location.kind === 'local' || location.kind === 'file';
    await appendFile(
      join(tmp, 'config'),
      [
        '[core]',
        '\trepositoryformatversion = 1',
        '\tsparseCheckout = true',
        '[remote "origin"]',
        `\turl = ${configValue(location.url)}`,
        '\tpromisor = true',
        '\tpartialclonefilter = blob:none',
        ...(local ? [`\tuploadpack = ${configValue(localUploadPack)}`] : []),
        '[extensions]',
        '\tpartialClone = origin',
        '[gc]',
        '\tauto = 0',
        '',
      ].join('\n'),
    );
    await rename(tmp, gitDir).catch(async (error: NodeJS.ErrnoException) => {
      // Someone else created it first: use theirs.
      await rm(tmp, { recursive: true, force: true });
      if (!existsSync(join(gitDir, 'HEAD'))) throw error;
    });
  }
  return { gitDir, root };
}

/**
 * A cache made by an older version may hold the URL it was created with, credentials and all, as
 * its remote: it gets the clean URL (the credentials now travel in the environment).
 */
async function forgetStoredCredentials(gitDir: string, cleanUrl: string, secrets: readonly string[]): Promise<void> {
  const config = await readFile(join(gitDir, 'config'), 'utf8').catch(() => '');
  const stored = [...config.matchAll(/^\s*url\s*=\s*(.*?)\s*$/gm)].map((m) => (m[1] ?? '').replace(/^"(.*)"$/, '$1'));
  if (stored.every((url) => withoutCredentials(url) === url)) return;
  await runGit(['--git-dir', gitDir, 'config', 'remote.origin.url', cleanUrl], { secrets });
}

/**
 * Whether a commit was fetched before. Asked through our own refs, not the object store: in a
 * partial clone a lookup of a missing object would itself fetch it from the promisor remote.
 */
async function hasCommit(gitDir: string, commit: string): Promise<boolean> {
  // The cache never packs its refs (gc is off): the ref's own file answers without a git process.
  if (/^[0-9a-f]{40,64}$/.test(commit) && existsSync(join(gitDir, 'refs', 'kdelta', 'commits', commit))) return true;
  try {
    await runGit(['--git-dir', gitDir, 'show-ref', '--verify', '--quiet', `refs/kdelta/commits/${commit}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fetch one package directory at a ref into `dest`, through a cached partial clone
 * (`--filter=blob:none`, depth 1) and a sparse checkout of just that directory: only the blobs of
 * the package travel. The ref is resolved on the remote every time, so a moved tag is never
 * served stale; a commit already in the cache needs no fetch at all.
 */
export async function fetchPackage(options: FetchPackageOptions): Promise<FetchedPackage> {
  const directory = normalizeDirectory(options.directory);
  const { location, env, secrets } = remoteContext(options);
  const progress = options.onProgress;
  const ref = options.ref ?? (await defaultBranch(options));
  assertSafeArgument(ref, 'ref');
  const resolved = await resolveRef({ ...options, ref, packagePath: directory === '/' ? '' : directory });
  const repo = await openCacheRepo(options);
  const dest = resolve(options.cwd ?? process.cwd(), options.dest);
  if (existsSync(dest)) throw new GitError({ code: 'failed', message: `destination ${dest} already exists` });

  return withLock(join(repo.root, 'lock'), async () => {
    const git = (args: readonly string[], extra: { onProgress?: (l: string) => void } = {}) =>
      runGit([...noMaintenance, '--git-dir', repo.gitDir, ...args], { env, secrets, ...extra });
    await forgetStoredCredentials(repo.gitDir, location.url, secrets);
    let commit = resolved.commit;
    let cacheHit = commit !== undefined && (await hasCommit(repo.gitDir, commit));
    if (!cacheHit) {
      progress?.(`Fetching ${location.url}@${ref}`);
      const fetchArgs = ['fetch', '--quiet', '--no-tags', '--filter=blob:none', '--no-write-fetch-head'];
      if (commit !== undefined) {
        await git([...fetchArgs, '--depth=1', 'origin', `+${commit}:refs/kdelta/commits/${commit}`]).catch(async (error) => {
          if (!resolved.fullName) throw error;
          // Servers that refuse a want by id: fetch the ref by name and take what it points at now.
          await git([...fetchArgs, '--depth=1', 'origin', `+${resolved.fullName}:refs/kdelta/fetched`]);
          const { stdout } = await git(['rev-parse', 'refs/kdelta/fetched^{commit}']);
          commit = stdout.trim();
          await git(['update-ref', `refs/kdelta/commits/${commit}`, commit]);
        });
      } else {
        commit = await fetchAbbreviated(repo.gitDir, ref, git, location.url, secrets);
        await git(['update-ref', `refs/kdelta/commits/${commit}`, commit]);
      }
      cacheHit = false;
    }
    if (commit === undefined) throw new GitError({ code: 'unknown-revision', message: `cannot resolve "${ref}"`, secrets });

    // The directory must exist at that commit (trees are all local after a blob:none fetch).
    if (directory !== '/') {
      const { stdout } = await git(['ls-tree', '-d', commit, '--', directory.slice(1)]);
      if (!stdout.trim()) {
        throw new GitError({
          code: 'not-found',
          message: `directory "${directory}" does not exist in ${location.url} at ${ref} (${commit.slice(0, 12)})`,
          secrets,
        });
      }
    }

    // Sparse checkout of just the package into a staging work tree beside the destination.
    await mkdir(dirname(dest), { recursive: true });
    const stage = await mkdtemp(join(dirname(dest), `.${basename(dest)}.kdelta-`));
    try {
      const pattern = directory === '/' ? '/*\n' : `${directory}/\n`;
      await mkdir(join(repo.gitDir, 'info'), { recursive: true });
      await writeFile(join(repo.gitDir, 'info', 'sparse-checkout'), pattern);
      const tree = join(stage, 'tree');
      await mkdir(tree);
      await runGit(
        [
          ...noMaintenance,
          '--git-dir',
          repo.gitDir,
          '--work-tree',
          tree,
          '-c',
          'core.sparseCheckout=true',
          'read-tree',
          '--reset',
          '-u',
          commit,
        ],
        {
          env: { ...env, GIT_INDEX_FILE: join(stage, 'index') },
          secrets,
          ...(progress ? { onProgress: progress } : {}),
        },
      );
      const source = directory === '/' ? tree : join(tree, ...directory.slice(1).split('/'));
      if (!existsSync(source)) await mkdir(source, { recursive: true });
      await rename(source, dest);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
    return { resolved: { ...resolved, commit }, ref, commit, directory, dest, cacheHit };
  });
}

type CacheGit = (args: readonly string[]) => Promise<{ stdout: string }>;

/** An abbreviated commit id: fetch the history of every branch and tag, then let git expand it. */
async function fetchAbbreviated(gitDir: string, ref: string, git: CacheGit, url: string, secrets: readonly string[]): Promise<string> {
  const fetchArgs = ['fetch', '--quiet', '--no-tags', '--filter=blob:none', '--no-write-fetch-head'];
  const shallow = existsSync(join(gitDir, 'shallow'));
  await git([
    ...fetchArgs,
    ...(shallow ? ['--unshallow'] : []),
    'origin',
    '+refs/heads/*:refs/kdelta/heads/*',
    '+refs/tags/*:refs/kdelta/tags/*',
  ]);
  try {
    const { stdout } = await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return stdout.trim();
  } catch {
    throw new GitError({
      code: 'unknown-revision',
      message: `unknown revision or path not in the working tree: "${ref}" is not a branch, tag or commit of ${url}`,
      secrets,
    });
  }
}

/**
 * The full commit id an abbreviated one names in the repository, as `pkg get` and `pkg update`
 * take it: the history of every branch and tag is fetched into the cache (blobs left out), and
 * git expands the id. Throws GitError `unknown-revision` when no such commit is there.
 */
export async function expandCommit(options: RemoteOptions & { readonly ref: string; readonly cacheDir?: string }): Promise<string> {
  assertSafeArgument(options.ref, 'ref');
  const { location, env, secrets } = remoteContext(options);
  if (!/^[0-9a-f]{4,40}$/i.test(options.ref)) {
    throw new GitError({ code: 'unknown-revision', message: `"${options.ref}" is not a commit id of ${location.url}`, secrets });
  }
  const repo = await openCacheRepo(options);
  return withLock(join(repo.root, 'lock'), async () => {
    const git: CacheGit = (args) => runGit(['--git-dir', repo.gitDir, ...args], { env, secrets });
    await forgetStoredCredentials(repo.gitDir, location.url, secrets);
    const commit = await fetchAbbreviated(repo.gitDir, options.ref, git, location.url, secrets);
    await git(['update-ref', `refs/kdelta/commits/${commit}`, commit]);
    return commit;
  });
}

/** Remove every cached repository under the cache root (or one repository's cache). */
export async function clearCache(options: { cacheDir?: string; repo?: string; cwd?: string } = {}): Promise<void> {
  const root = options.cacheDir ?? defaultCacheDir();
  if (options.repo) {
    const { location } = remoteContext({ repo: options.repo, ...(options.cwd ? { cwd: options.cwd } : {}) });
    await rm(join(root, repoCacheKey(location.url)), { recursive: true, force: true });
    return;
  }
  for (const entry of await readdir(root).catch(() => [] as string[])) await rm(join(root, entry), { recursive: true, force: true });
}

/** A commit of an upstream's history, as a proposal names it. */
export interface HistoryCommit {
  readonly sha: string;
  /** Its author's name. */
  readonly name: string;
  /** The first line of its message. */
  readonly subject: string;
}

export interface CommitsBetween {
  /** The commits of `to` not in `from` that touch the directory, newest first, at most `limit`. */
  readonly commits: readonly HistoryCommit[];
  /**
   * How many there are in all; undefined when `from` is not within `depth` commits of `to` (a long
   * history, or `from` not before `to`): then `commits` are the newest of `to`'s that touch it.
   */
  readonly total: number | undefined;
}

/**
 * The commits between two commits of a repository that touch one directory (`git log from..to --
 * <directory>`), read in the cache: `to`'s history is fetched (commits and trees, no file
 * contents) to at most `depth` commits, once; a history already there is read as it is.
 */
export async function commitsBetween(
  options: RemoteOptions & {
    readonly from: string;
    readonly to: string;
    readonly directory?: string;
    readonly cacheDir?: string;
    readonly limit?: number;
    readonly depth?: number;
  },
): Promise<CommitsBetween> {
  const { from, to } = options;
  for (const c of [from, to]) {
    if (!isFullCommit(c)) throw new GitError({ code: 'refused-argument', message: `"${c}" is not a full commit id` });
  }
  const directory = normalizeDirectory(options.directory);
  const path = directory === '/' ? '.' : directory.slice(1);
  const limit = options.limit ?? 20;
  const depth = options.depth ?? 200;
  const { location, env, secrets } = remoteContext(options);
  const repo = await openCacheRepo(options);
  return withLock(join(repo.root, 'lock'), async () => {
    const git = (args: readonly string[]) => runGit([...noMaintenance, '--git-dir', repo.gitDir, ...args], { env, secrets });
    await forgetStoredCredentials(repo.gitDir, location.url, secrets);
    const fetchArgs = ['fetch', '--quiet', '--no-tags', '--filter=blob:none', '--no-write-fetch-head'];
    for (const c of [from, to]) {
      if (!(await hasCommit(repo.gitDir, c))) await git([...fetchArgs, '--depth=1', 'origin', `+${c}:refs/kdelta/commits/${c}`]);
    }
    const reaches = () =>
      git(['merge-base', '--is-ancestor', from, to]).then(
        () => true,
        () => false,
      );
    // the cache holds commits one deep: the history between is fetched when it is not there yet
    if (!(await reaches())) await git([...fetchArgs, `--depth=${depth}`, 'origin', `+${to}:refs/kdelta/commits/${to}`]);
    const complete = await reaches();
    const range = complete ? [to, `^${from}`] : [to];
    const { stdout } = await git(['log', `--max-count=${limit}`, '--format=%H%x1f%an%x1f%s%x1e', ...range, '--', path]);
    const commits: HistoryCommit[] = [];
    for (const entry of stdout.split('\x1e')) {
      const [sha, name, subject] = entry.trim().split('\x1f');
      if (sha) commits.push({ sha, name: name ?? '', subject: subject ?? '' });
    }
    const total = complete ? Number((await git(['rev-list', '--count', ...range, '--', path])).stdout.trim()) : undefined;
    return { commits, total };
  });
}
