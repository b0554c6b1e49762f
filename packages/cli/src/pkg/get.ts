import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import type { GetArgs } from './args.js';
import { addMergeCommentsToTree, copyTree, moveTree } from './fs-util.js';
import { type FetchContext, cleanScratch, fetchToScratch } from './fetch.js';
import { readKptfile, withUpstream } from './kptfile.js';
import { makeWorkDir, recoverInterruptedSwap } from './swap.js';
import { removeTempDir } from './temp.js';
import { KPTFILE, exists, subpackagePaths } from './tree.js';
import { UpdateError } from './strategies.js';

export interface GetResult {
  readonly destination: string;
  readonly commit: string;
}

/**
 * Fetch remote subpackages that are declared but not fetched yet (a Kptfile with `upstream` and no
 * `upstreamLock`) inside `dir`, recursively.
 */
export async function fetchUnfetchedSubpackages(ctx: FetchContext, dir: string): Promise<void> {
  for (const rel of subpackagePaths(dir, { includeRemote: true, recurseIntoRemote: false })) {
    const sub = join(dir, rel);
    const parsed = readKptfile(sub);
    const git = parsed?.kptfile.upstream?.git;
    if (!parsed || !git?.repo || parsed.kptfile.upstreamLock?.git?.commit) continue;
    const fetched = await fetchToScratch(ctx, git.repo, git.directory ?? '/', git.ref || undefined);
    const record = { repo: git.repo, directory: fetched.directory, ref: fetched.ref, updateStrategy: parsed.kptfile.upstream?.updateStrategy };
    const fetchedKptfile = readKptfile(fetched.path);
    writeFileSync(join(fetched.path, KPTFILE), withUpstream(fetchedKptfile, basename(sub), record, fetched.commit));
    await fetchUnfetchedSubpackages(ctx, fetched.path);
    rmSync(sub, { recursive: true, force: true });
    copyTree(fetched.path, sub);
  }
}

/** `dest` as the user would name it: relative to the current directory when inside it. */
function shown(dest: string, cwd: string): string {
  const rel = relative(cwd, dest);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : dest;
}

function alreadyExists(dest: string, cwd: string): Error {
  return new UpdateError(`destination directory "${shown(dest, cwd)}" already exists: pkg get writes a new directory, never into an existing one; nothing was written`, 'destination-exists');
}

/**
 * `kdelta pkg get`: fetch a package, record upstream and lock, add merge comments, and put it at
 * `args.destination`, which must not exist (its missing parents are created). All or nothing: the
 * package is assembled in a work directory and appears at its path in one rename.
 */
export async function getPackage(args: GetArgs, ctx: FetchContext): Promise<GetResult> {
  const dest = args.destination;
  // an update killed half way through its swap leaves the path empty: put that package back first
  const recovered = recoverInterruptedSwap(dest);
  if (recovered) (ctx.notice ?? ctx.progress)(recovered);
  if (exists(dest)) throw alreadyExists(dest, ctx.cwd);
  try {
    ctx.progress(`Fetching ${args.repo}@${args.ref}`);
    const fetched = await fetchToScratch(ctx, args.repo, args.directory, args.ref);
    const record = { repo: args.repo, directory: fetched.directory, ref: args.ref, updateStrategy: args.updateStrategy };
    writeFileSync(join(fetched.path, KPTFILE), withUpstream(readKptfile(fetched.path), basename(dest), record, fetched.commit));
    await fetchUnfetchedSubpackages(ctx, fetched.path);
    addMergeCommentsToTree(fetched.path);
    const work = makeWorkDir(dest, 'get');
      try {
      const ready = join(work, 'pkg');
      moveTree(fetched.path, ready);
      // like git clone: missing parents are made, and removed again when the package cannot follow
      const madeParent = mkdirSync(dirname(dest), { recursive: true });
      try {
        // onto an existing empty directory this rename succeeds (POSIX); onto anything else it fails
        renameSync(ready, dest);
      } catch (error) {
        if (madeParent) rmSync(madeParent, { recursive: true, force: true });
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') throw alreadyExists(dest, ctx.cwd);
        throw error;
      }
    } finally {
      removeTempDir(work);
    }
    return { destination: dest, commit: fetched.commit };
  } finally {
    cleanScratch(ctx);
  }
}
