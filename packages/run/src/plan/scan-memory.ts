import { repositoryIdentity } from '@kdelta/git-source';
import { hashOf } from './plan.js';

/** What a removal scan's answer depends on, and the short form of it the fleet dashboard keeps: a leaf the dashboard imports. */

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
