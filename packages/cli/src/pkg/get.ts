import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { GetArgs } from './args.js';
import { addMergeCommentsToTree, copyTree, siblingTemp } from './fs-util.js';
import { type FetchContext, cleanScratch, fetchToScratch } from './fetch.js';
import { readKptfile, withUpstream } from './kptfile.js';
import { KPTFILE, subpackagePaths } from './tree.js';
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

/** `kdelta pkg get`: fetch a package, record upstream and lock, add merge comments. */
export async function getPackage(args: GetArgs, ctx: FetchContext): Promise<GetResult> {
  const dest = args.destination;
  const intoExisting = existsSync(dest);
  if (intoExisting && readdirSync(dest).some((n) => n === KPTFILE)) {
    throw new UpdateError(`destination directory "${dest}" already holds a package`, 'already-a-package');
  }
  try {
    ctx.progress(`Fetching ${args.repo}@${args.ref}`);
    const fetched = await fetchToScratch(ctx, args.repo, args.directory, args.ref);
    const record = { repo: args.repo, directory: fetched.directory, ref: args.ref, updateStrategy: args.updateStrategy };
    writeFileSync(join(fetched.path, KPTFILE), withUpstream(readKptfile(fetched.path), basename(dest), record, fetched.commit));
    await fetchUnfetchedSubpackages(ctx, fetched.path);
    addMergeCommentsToTree(fetched.path);
    if (intoExisting) {
      copyTree(fetched.path, dest);
    } else {
      const holder = siblingTemp(dest, 'get');
      try {
        renameSync(fetched.path, join(holder, 'pkg'));
        renameSync(join(holder, 'pkg'), dest);
      } finally {
        rmSync(holder, { recursive: true, force: true });
      }
    }
    return { destination: dest, commit: fetched.commit };
  } finally {
    cleanScratch(ctx);
  }
}
