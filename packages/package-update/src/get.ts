import { existsSync, lstatSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { withoutCredentials } from '@kdelta/git-source';
import { makeWorkDir, type PackageView, PackageTree, recoverInterruptedSwap, removeTempDir } from '@kdelta/kptfile-model';
import { addMergeCommentsToTree } from './comments.js';
import { writeTree } from './commit.js';
import { UpdateError } from './errors.js';
import { type GitOptions, fetchTree, withTrust } from './fetch.js';
import { KPTFILE, type UpdateStrategy, readKptfile, withUpstream } from './kptfile.js';
import { type ProgressListener, progressLines, reportRecovery } from './progress.js';
import { labelled, sideLabel } from './side.js';

/** What a get fetches, on disk or in memory. */
interface GetRequest extends GitOptions {
  /** Repository as recorded in the Kptfile (`.git` stripped, `file://` kept when given); credentials in it are used, never recorded. */
  readonly repo: string;
  /** Package directory in the repository: `/` or `/a/b`. */
  readonly directory: string;
  /** Branch, tag or commit. */
  readonly ref: string;
  readonly updateStrategy?: UpdateStrategy;
  readonly progress?: ProgressListener;
}

export interface GetPackageOptions extends GetRequest {
  /**
   * Absolute path of the package: it must not exist (an existing one is refused, whatever it
   * holds); missing parent directories are created. kpt's rule that an existing directory gets
   * the package below it is the caller's to apply (the CLI's argument parsing does).
   */
  readonly destination: string;
}

export interface GetPackageTreeOptions extends GetRequest {
  /** The package's name: its Kptfile's `metadata.name` (`getPackage` takes the destination's base name). */
  readonly name: string;
}

export interface GetTreeResult {
  /** The package, upstream and lock recorded, merge comments added; its nested remote packages fetched into it. */
  readonly tree: PackageTree;
  /** The commit fetched. */
  readonly commit: string;
  /** Remote packages declared inside the package and fetched with it (paths relative to the package). */
  readonly nested: readonly string[];
}

/** The package as written at `destination`. */
export interface GetResult extends GetTreeResult {
  readonly destination: string;
}

/**
 * Fetch the remote packages declared in `pkg` but not fetched yet (a Kptfile with `upstream` and
 * no `upstreamLock`), recursively, into memory. Returns their paths.
 */
async function fetchUnfetched(git: GitOptions, pkg: PackageView, prefix = ''): Promise<string[]> {
  const fetchedPaths: string[] = [];
  for (const rel of pkg.nestedPackages({ includeRemote: true, recurseIntoRemote: false })) {
    const sub = pkg.at(rel);
    const parsed = readKptfile(sub, sub.describe(KPTFILE));
    const upstream = parsed?.kptfile.upstream?.git;
    if (!parsed || !upstream?.repo || parsed.kptfile.upstreamLock?.git?.commit) continue;
    // named by package content: fetched under the user's trust, the refusal naming this Kptfile
    const fetched = await fetchTree(git, upstream.repo, upstream.directory ?? '/', upstream.ref || undefined, sub.describe(KPTFILE));
    const record = {
      repo: upstream.repo,
      directory: fetched.directory,
      ref: fetched.ref,
      updateStrategy: parsed.kptfile.upstream?.updateStrategy,
    };
    const root = fetched.tree.package();
    const side = { path: fetched.tree.source, label: sideLabel('upstream', upstream.repo, fetched.directory, fetched.ref) };
    const inside = await labelled([side], async () => {
      root.write(KPTFILE, withUpstream(readKptfile(root, root.describe(KPTFILE)), basename(rel), record, fetched.commit));
      return fetchUnfetched(git, root, `${prefix}${rel}/`);
    });
    fetchedPaths.push(`${prefix}${rel}`, ...inside);
    sub.delete('');
    sub.copyFrom(root, '');
  }
  return fetchedPaths;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `dest` as the user would name it: relative to the working directory when inside it. */
function shown(dest: string, cwd: string): string {
  const rel = relative(cwd, dest);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : dest;
}

function alreadyExists(dest: string, cwd: string): UpdateError {
  return new UpdateError(
    `destination directory "${shown(dest, cwd)}" already exists: pkg get writes a new directory, never into an existing one; nothing was written`,
    'destination-exists',
  );
}

/**
 * kpt's `pkg get` in memory: fetch a package, record upstream and lock, fetch the remote packages
 * declared inside it and add merge comments. Nothing is written ({@link getPackage} writes it).
 */
export async function getPackageTree(options: GetPackageTreeOptions): Promise<GetTreeResult> {
  const progress = progressLines(options.progress);
  progress(`Fetching ${withoutCredentials(options.repo)}@${options.ref}`);
  // the argument is the user's own: trusted, and its host gets credentials
  const git = withTrust(options, [options.repo], false);
  const fetched = await fetchTree(git, options.repo, options.directory, options.ref);
  const pkg = fetched.tree.package();
  const record = { repo: options.repo, directory: fetched.directory, ref: options.ref, updateStrategy: options.updateStrategy };
  const side = { path: fetched.tree.source, label: sideLabel('upstream', options.repo, fetched.directory, options.ref) };
  const nested = await labelled([side], async () => {
    pkg.write(KPTFILE, withUpstream(readKptfile(pkg, pkg.describe(KPTFILE)), options.name, record, fetched.commit));
    const inside = await fetchUnfetched(git, pkg);
    addMergeCommentsToTree(pkg);
    return inside;
  });
  return { tree: fetched.tree, commit: fetched.commit, nested };
}

/**
 * kpt's `pkg get`: fetch a package, record upstream and lock, add merge comments, and put it at
 * `destination`, which must not exist. All or nothing: the package is assembled in memory
 * ({@link getPackageTree}) and in a work directory on the destination's filesystem, and appears
 * at its path in one rename.
 */
export async function getPackage(options: GetPackageOptions): Promise<GetResult> {
  const { destination: dest, ...request } = options;
  const cwd = options.cwd ?? process.cwd();
  // an update killed half way through its swap leaves the path empty: put that package back first
  reportRecovery(options.progress, recoverInterruptedSwap(dest));
  if (exists(dest)) throw alreadyExists(dest, cwd);
  const { tree, commit, nested } = await getPackageTree({ ...request, name: basename(dest) });
  const work = makeWorkDir(dest, 'get');
  try {
    const ready = join(work, 'pkg');
    writeTree(ready, tree, PackageTree.empty());
    // like git clone: missing parents are made, and removed again when the package cannot follow
    const madeParent = existsSync(dirname(dest)) ? undefined : mkdirSync(dirname(dest), { recursive: true });
    try {
      // onto an existing empty directory this rename succeeds (POSIX); onto anything else it fails
      renameSync(ready, dest);
    } catch (error) {
      if (madeParent) rmSync(madeParent, { recursive: true, force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') throw alreadyExists(dest, cwd);
      throw error;
    }
  } finally {
    removeTempDir(work);
  }
  return { destination: dest, commit, nested, tree };
}
