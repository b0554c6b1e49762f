import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryIdentity } from '@kdelta/git-source';
import { hashOf } from './plan.js';
import type { Removal } from '../jobs/removal.js';

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

export interface RemovalScanKey {
  readonly repository: string;
  readonly url: string;
  readonly branch: string;
  readonly directory: string;
  /** The branch's commit the removals were (or are to be) found at. */
  readonly commit: string;
  readonly variants: ReadonlySet<string>;
  readonly control: string | undefined;
  readonly version: string;
}

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

/**
 * The common answer, "no removals here", kept also in the fleet dashboard's hidden data, which
 * every run reads anyway: a run on a fresh machine (an empty cache, as on a new CI runner) then
 * clones no downstream whose branch is still at the commit a run before found no removals at.
 *
 * Compact and without a URL: per downstream, a short hash of where it is (repository identity,
 * branch, directory) and the commit's first {@link SCAN_HEX} hex digits; once for the dashboard, a
 * short hash of everything else the answer depends on (the run's variant names, its control
 * repository, kdelta's version). What is not there, or does not match, is scanned as before: a
 * dashboard edited by hand can at worst make a run skip looking for removals at one commit.
 */
export interface RemovalScanMemory {
  /** {@link scanContextOf}: what every answer depends on besides the downstream and its commit. */
  readonly context: string;
  /** Per downstream ({@link scanPlaceOf}): the commit (short) at which the scan found no removals. */
  readonly clear: ReadonlyMap<string, string>;
}

/** Hex digits of each hash and commit the dashboard keeps (64 bits: no one finds a second commit to match). */
export const SCAN_HEX = 16;
const HEX = new RegExp(`^[0-9a-f]{${SCAN_HEX}}$`);

export function scanContextOf(k: Pick<RemovalScanKey, 'variants' | 'control' | 'version'>): string {
  return hashOf({ variants: [...k.variants].sort(), control: k.control ?? null, version: k.version }).slice(0, SCAN_HEX);
}

export function scanPlaceOf(k: Pick<RemovalScanKey, 'url' | 'repository' | 'branch' | 'directory'>): string {
  return hashOf({ url: repositoryIdentity(k.url), repository: k.repository, branch: k.branch, directory: k.directory }).slice(0, SCAN_HEX);
}

/** Whether the dashboard's memory says the scan found no removals for exactly this key. */
export function clearInMemory(memory: RemovalScanMemory | undefined, k: RemovalScanKey): boolean {
  if (memory === undefined || memory.context !== scanContextOf(k)) return false;
  return memory.clear.get(scanPlaceOf(k)) === k.commit.slice(0, SCAN_HEX);
}

/** The memory as the dashboard's data block holds it: `{ k, c }`, places in order, as many as `max`. */
export function scanMemoryData(memory: RemovalScanMemory, max: number): { k: string; c: Record<string, string> } {
  const places = [...memory.clear.keys()].sort().slice(0, Math.max(0, max));
  return { k: memory.context, c: Object.fromEntries(places.map((p) => [p, memory.clear.get(p)!])) };
}

/** Characters one place adds to the data block (`"<place>":"<commit>",`). */
export const SCAN_ENTRY_CHARS = 2 * SCAN_HEX + 6;

/** The memory a data block holds; anything not of the form is no memory (its downstreams are scanned). */
export function readScanMemory(data: unknown): RemovalScanMemory | undefined {
  const d = data as { k?: unknown; c?: unknown } | null | undefined;
  if (typeof d?.k !== 'string' || !HEX.test(d.k) || typeof d.c !== 'object' || d.c === null || Array.isArray(d.c)) return undefined;
  const clear = new Map<string, string>();
  for (const [place, commit] of Object.entries(d.c as Record<string, unknown>)) {
    if (HEX.test(place) && typeof commit === 'string' && HEX.test(commit)) clear.set(place, commit);
  }
  return { context: d.k, clear };
}
