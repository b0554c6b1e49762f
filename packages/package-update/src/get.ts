import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type PackageView, PackageTree } from '@kdelta/kptfile-model';
import { addMergeCommentsToTree } from './comments.js';
import { siblingTemp, writeTree } from './commit.js';
import { type GitOptions, fetchTree } from './fetch.js';
import { KPTFILE, type UpdateStrategy, readKptfile, withUpstream } from './kptfile.js';
import { type ProgressListener, progressLines } from './progress.js';

export interface GetPackageOptions extends GitOptions {
  /** Repository as recorded in the Kptfile (`.git` stripped, `file://` kept when given). */
  readonly repo: string;
  /** Package directory in the repository: `/` or `/a/b`. */
  readonly directory: string;
  /** Branch, tag or commit. */
  readonly ref: string;
  /** Absolute destination directory: a new one, or an existing one without a Kptfile. */
  readonly destination: string;
  readonly updateStrategy?: UpdateStrategy;
  readonly progress?: ProgressListener;
}

export interface GetResult {
  readonly destination: string;
  /** The commit fetched. */
  readonly commit: string;
  /** Remote packages declared inside the package and fetched with it (paths relative to the package). */
  readonly nested: readonly string[];
  /** The package as written. */
  readonly tree: PackageTree;
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
    const fetched = await fetchTree(git, upstream.repo, upstream.directory ?? '/', upstream.ref || undefined);
    const record = { repo: upstream.repo, directory: fetched.directory, ref: fetched.ref, updateStrategy: parsed.kptfile.upstream?.updateStrategy };
    const root = fetched.tree.package();
    root.write(KPTFILE, withUpstream(readKptfile(root, root.describe(KPTFILE)), basename(rel), record, fetched.commit));
    fetchedPaths.push(`${prefix}${rel}`, ...(await fetchUnfetched(git, root, `${prefix}${rel}/`)));
    sub.delete('');
    sub.copyFrom(root, '');
  }
  return fetchedPaths;
}

/** kpt's `pkg get`: fetch a package, record upstream and lock, add merge comments; nothing written on failure. */
export async function getPackage(options: GetPackageOptions): Promise<GetResult> {
  const dest = options.destination;
  const progress = progressLines(options.progress);
  const intoExisting = existsSync(dest);
  if (intoExisting && readdirSync(dest).some((n) => n === KPTFILE)) {
    throw new Error(`destination directory "${dest}" already holds a package`);
  }
  progress(`Fetching ${options.repo}@${options.ref}`);
  const fetched = await fetchTree(options, options.repo, options.directory, options.ref);
  const pkg = fetched.tree.package();
  const record = { repo: options.repo, directory: fetched.directory, ref: options.ref, updateStrategy: options.updateStrategy };
  pkg.write(KPTFILE, withUpstream(readKptfile(pkg, pkg.describe(KPTFILE)), basename(dest), record, fetched.commit));
  const nested = await fetchUnfetched(options, pkg);
  addMergeCommentsToTree(pkg);
  if (intoExisting) {
    writeTree(dest, fetched.tree, PackageTree.empty());
  } else {
    const holder = siblingTemp(dest, 'get');
    try {
      writeTree(join(holder, 'pkg'), fetched.tree, PackageTree.empty());
      renameSync(join(holder, 'pkg'), dest);
    } finally {
      rmSync(holder, { recursive: true, force: true });
    }
  }
  return { destination: dest, commit: fetched.commit, nested, tree: fetched.tree };
}
