import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryIdentity } from '@kdelta/git-source';
import { hashOf } from './plan.js';
import type { Removal } from '../jobs/removal.js';
import type { RemovalScanKey } from './scan-memory.js';

export type { RemovalScanKey } from './scan-memory.js';

/**
 * The removals found in a downstream, kept between runs. What `findRemovals` finds depends only
 * on the branch's commit, the package directory, the run's variant names, its control repository
 * and kdelta's version: while none of these changes, a run reads the answer from a file instead of
 * cloning the downstream to read its Kptfiles again. So a run with nothing new asks each
 * downstream for its branches (one `ls-remote`) and clones nothing.
 *
 * One file per downstream branch and directory, replaced when the answer changes; it holds no URL
 * (credentials stay out of the cache) and is written whole (a temporary file, then a rename).
 */

type Stored = { readonly key: string; readonly removals: readonly Pick<Removal, 'variant' | 'directory' | 'policy'>[] };

function fileOf(cacheRoot: string, k: RemovalScanKey): string {
  const where = hashOf({ url: repositoryIdentity(k.url), branch: k.branch, directory: k.directory }).slice(0, 32);
  return join(cacheRoot, 'run-removal-scans', `${where}.json`);
}

function keyOf(k: RemovalScanKey): string {
  return hashOf({
    url: repositoryIdentity(k.url),
    repository: k.repository,
    branch: k.branch,
    directory: k.directory,
    commit: k.commit,
    variants: [...k.variants].sort(),
    control: k.control ?? null,
    version: k.version,
  });
}

/** The removals stored for exactly this key, or undefined (none stored, another key, unreadable). */
export async function storedRemovals(cacheRoot: string, k: RemovalScanKey): Promise<Removal[] | undefined> {
  let stored: Stored;
  try {
    stored = JSON.parse(await readFile(fileOf(cacheRoot, k), 'utf8')) as Stored;
  } catch {
    return undefined;
  }
  if (stored?.key !== keyOf(k) || !Array.isArray(stored.removals)) return undefined;
  return stored.removals.map((r) => ({
    variant: r.variant,
    repository: k.repository,
    url: k.url,
    branch: k.branch,
    directory: r.directory,
    policy: r.policy === 'orphan' ? 'orphan' : 'delete',
  }));
}

/** Keep the removals found at `k.commit`; a cache that cannot be written only costs the next run a clone. */
export async function storeRemovals(cacheRoot: string, k: RemovalScanKey, removals: readonly Removal[]): Promise<void> {
  const file = fileOf(cacheRoot, k);
  const stored: Stored = {
    key: keyOf(k),
    removals: removals.map((r) => ({ variant: r.variant, directory: r.directory, policy: r.policy })),
  };
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await mkdir(join(cacheRoot, 'run-removal-scans'), { recursive: true });
    await writeFile(tmp, JSON.stringify(stored));
    await rename(tmp, file);
  } catch {
    // a read-only or full cache directory: the next run scans again
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
