import { readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryIdentity } from '@kdelta/git-source';
import type { Change } from '../jobs/change.js';
import { hashOf } from '../plan/plan.js';

/**
 * "Up to date", kept between runs. With nothing open and nothing new, a fleet whose proposals were
 * merged would check out every downstream, rebuild every package and find nothing changed. What
 * that rebuild finds is a function of its inputs: the change's fingerprint (upstream commit,
 * variant, injected objects, Repository specs, kdelta's version), the base branch's commit (the
 * downstream's package, its owner annotation, its lock), the proposal branch's commit (or its
 * absence), and the run's settings that shape the content (render, allow-exec, allowed images, the
 * control repository the Kptfile records). While none of these moves, the answer is the same, so a
 * run reads it from a file instead of checking the downstream out.
 *
 * A cache only: an entry missing, unreadable or for other inputs costs the run the slow path, never
 * a wrong answer. One file per downstream branch, proposal branch and package directory, replaced
 * whole (a temporary file, then a rename); it holds hashes only (no URL, so no credentials).
 */

/** Where the memo lives and the run's content-shaping settings, as one hash (see {@link upToDateMemo}). */
export interface UpToDateMemo {
  readonly root: string;
  readonly settings: string;
}

/** The run's settings that shape a package's content: a change of any of them rebuilds it. */
export interface ContentSettings {
  readonly render: boolean;
  readonly allowExec: boolean | undefined;
  readonly allowedImages: readonly string[] | undefined;
  readonly version: string;
  /** What the Kptfile records of the control repository (its remote URL). */
  readonly controlRecord: string | undefined;
}

const DIRECTORY = 'run-up-to-date';

/** The memo of a run: under `cacheRoot`, keyed by the settings that shape the content. */
export function upToDateMemo(cacheRoot: string, settings: ContentSettings): UpToDateMemo {
  return {
    root: cacheRoot,
    settings: hashOf({
      render: settings.render,
      allowExec: settings.allowExec === true,
      allowedImages: settings.allowedImages ?? null,
      version: settings.version,
      controlRecord: settings.controlRecord ?? null,
    }),
  };
}

/**
 * Whether the memo can answer for a change: only a variant's or a package update's. A group's
 * outcome also holds its members' failures (a fetch that failed this time), and removals are
 * planned from a scan of their own; both always take the slow path.
 */
export function memoApplies(change: Pick<Change, 'kind'>): boolean {
  switch (change.kind) {
    case 'variant':
    case 'update':
      return true;
    case 'removal':
    case 'orphan':
    case 'group':
      return false;
    default:
      return change.kind satisfies never;
  }
}

/** What an up-to-date answer was found at. */
export interface UpToDateKey {
  readonly change: Pick<Change, 'target' | 'fingerprint' | 'kind' | 'variant' | 'directory'>;
  /** The base branch's commit the package was built on. */
  readonly baseCommit: string;
  /** The proposal branch's commit, or undefined when the branch does not exist. */
  readonly headCommit: string | undefined;
}

type Stored = { readonly key: string };

function fileOf(memo: UpToDateMemo, k: UpToDateKey): string {
  const { target, directory } = k.change;
  const where = hashOf({ url: repositoryIdentity(target.repo), base: target.base, head: target.head, directory }).slice(0, 32);
  return join(memo.root, DIRECTORY, `${where}.json`);
}

function keyOf(memo: UpToDateMemo, k: UpToDateKey): string {
  const { target, fingerprint, kind, variant, directory } = k.change;
  return hashOf({
    url: repositoryIdentity(target.repo),
    base: target.base,
    head: target.head,
    directory,
    kind,
    variant,
    fingerprint,
    baseCommit: k.baseCommit,
    headCommit: k.headCommit ?? null,
    settings: memo.settings,
  });
}

/** Whether the change was found up to date at exactly these inputs (false: unknown, another key, unreadable). */
export async function wasUpToDate(memo: UpToDateMemo, k: UpToDateKey): Promise<boolean> {
  try {
    // one small file per change: read at once (a promise's open, stat, read and close cost more than the read)
    const stored = JSON.parse(readFileSync(fileOf(memo, k), 'utf8')) as Stored | null;
    return stored?.key === keyOf(memo, k);
  } catch {
    return false;
  }
}

/** Keep that the change was up to date at these inputs; a cache that cannot be written only costs the next run a checkout. */
export async function rememberUpToDate(memo: UpToDateMemo, k: UpToDateKey): Promise<void> {
  const file = fileOf(memo, k);
  const stored: Stored = { key: keyOf(memo, k) };
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await mkdir(join(memo.root, DIRECTORY), { recursive: true });
    await writeFile(tmp, JSON.stringify(stored));
    await rename(tmp, file);
  } catch {
    // a read-only or full cache directory: the next run builds the package again
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
