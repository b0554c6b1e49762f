/// <reference types="node" preserve="true" />
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { KdeltaError } from '@kdelta/errors';
import { isRunning, makeTempDir, sweepAbandoned } from './temp.js';

/*
 * Where the work of a command on a package happens, and how its result replaces the package.
 *
 * Work directories (the copy an update works on, a fetched package on its way to its place) must
 * be on the package's filesystem, since only a rename within one filesystem is atomic, and must be
 * where users do not commit them (`git add -A` takes any hidden sibling). In order of preference:
 *
 *   1. `<git common dir>/kdelta/` when the package's parent is in a git work tree: git never tracks
 *      its own directory, it is almost always on the work tree's filesystem, and it outlives a
 *      reboot (which matters for the swap journal).
 *   2. The OS temp directory, when it is on the same filesystem as the package.
 *   3. Hidden entries (`.kdelta-…`) in the package's parent directory, the last resort.
 *
 * A place inside the package itself (a package that is the root of its own repository) is never
 * used: the swap moves the package, and its journal must stay put.
 *
 * What is and is not atomic. POSIX rename replaces a file or an empty directory atomically, but
 * Node offers no exchange of two non-empty directories (Linux's renameat2 RENAME_EXCHANGE), so the
 * swap is two renames: package → work/old, then work/new → package. Between them (microseconds,
 * no other work) the package path is absent. That window is covered by a journal, written and
 * fsynced before the first rename: the next kdelta command on the package (pkg get, update, diff,
 * variant apply, fn render) finds it and finishes the swap (the new tree is complete before the
 * journal is written) or rolls it back, and says which. A signal handler cannot run inside the window either: the whole swap is
 * synchronous, and Node runs signal handlers between turns of the event loop. The renames and the
 * journal are fsynced; the files of the new tree are not (that would cost a sync per file), so after
 * a power loss, as opposed to a killed process, the new tree may hold files the disk never got.
 */

export type SwapErrorCode =
  | 'invalid-swap-journal' // a journal file kdelta cannot read, or one naming a place kdelta never uses
  | 'swap-in-progress' // another live process is swapping the package right now
  | 'interrupted-swap-unresolved'; // an interrupted swap left the package in a state kdelta will not guess about

/** A package swap that cannot be made or recovered; `file` is the journal or work directory to look at. */
export class SwapError extends KdeltaError {
  override readonly name = 'SwapError';
  declare readonly code: SwapErrorCode;
  constructor(code: SwapErrorCode, message: string, file?: string) {
    super({ code, message, file });
  }
}

/** A journal older than this is abandoned even if a process with its pid runs (the pid was reused). */
const journalLiveMs = 60 * 1000;

interface Place {
  readonly root: string;
  /** Entries are hidden (leading dot): they sit beside the user's files. */
  readonly hidden: boolean;
}

interface Journal {
  readonly kdelta: 'swap';
  readonly target: string;
  readonly work: string;
  readonly pid: number;
  readonly host: string;
  readonly started: string;
}

/** The nearest directory at or above `path` that exists (the destination of a get may not yet). */
function existingAncestor(path: string): string {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** `path` with the symlinks of its existing part resolved: one package, one journal name. */
export function canonical(path: string): string {
  const anchor = existingAncestor(dirname(path));
  return join(realpathSync(anchor), relative(anchor, path));
}

function inside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Whether a directory at or above `dir` holds a `.git`: without one, git finds no work tree there
 * and need not be asked (a git process is a fork of this one, dear when repeated per package).
 */
function mayBeInWorkTree(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return true;
    if (dirname(d) === d) return false;
  }
}

function gitCommonDir(dir: string): string | undefined {
  if (!mayBeInWorkTree(dir)) return undefined;
  const env = { ...process.env };
  for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR']) delete env[k];
  try {
    const out = execFileSync('git', ['rev-parse', '--is-inside-work-tree', '--git-common-dir'], {
      cwd: dir,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [inTree, common] = out.trim().split('\n');
    return inTree === 'true' && common ? resolve(dir, common) : undefined;
  } catch {
    return undefined;
  }
}

/** The candidate places for work directories of the package at `target`, best first (see above). */
function places(path: string): Place[] {
  const target = canonical(path);
  const anchor = realpathSync(existingAncestor(dirname(target)));
  const device = statSync(anchor).dev;
  const usable = (root: string) => {
    try {
      return !inside(root, target) && statSync(existingAncestor(root)).dev === device;
    } catch {
      return false;
    }
  };
  const out: Place[] = [];
  const git = gitCommonDir(anchor);
  if (git && usable(git)) out.push({ root: join(git, 'kdelta'), hidden: false });
  const tmp = realpathSync(tmpdir());
  if (usable(tmp)) out.push({ root: tmp, hidden: false });
  out.push({ root: anchor, hidden: true });
  return out;
}

/** A new work directory on the filesystem of `target` (the package, existing or to be), outside it. */
export function makeWorkDir(target: string, tag: string): string {
  let last: unknown;
  for (const place of places(target)) {
    try {
      return makeTempDir(place.root, tag, place.hidden);
    } catch (error) {
      last = error; // not writable: the next place
    }
  }
  throw last;
}

function placeOf(work: string): Place {
  return { root: dirname(work), hidden: basename(work).startsWith('.') };
}

const JOURNAL = /^\.?kdelta-journal-[0-9a-f]{16}\.json$/;

function journalPath(place: Place, target: string): string {
  const key = createHash('sha256').update(target).digest('hex').slice(0, 16);
  return join(place.root, `${place.hidden ? '.' : ''}kdelta-journal-${key}.json`);
}

function fsyncPath(path: string): void {
  try {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // directories cannot be opened for fsync on some platforms; the rename itself still happened
  }
}

/**
 * Test-only, for the crash test: `KDELTA_TEST_KILL_IN_SWAP=<stage>` makes the process kill itself
 * (SIGKILL) at that stage of a swap: `journaled` (journal written, nothing renamed), `between` (the
 * package moved aside, the new tree not yet in place) or `swapped` (the journal not yet removed).
 */
function testKillAt(stage: 'journaled' | 'between' | 'swapped'): void {
  if (process.env.KDELTA_TEST_KILL_IN_SWAP === stage) process.kill(process.pid, 'SIGKILL');
}

/**
 * Replace directory `target` by `<work>/new` (a complete tree; `work` from {@link makeWorkDir} for
 * `target`), leaving the old tree in `<work>/old`. Synchronous from the journal to its removal.
 */
export function swap(target: string, work: string): void {
  const journal = journalPath(placeOf(work), target);
  const record: Journal = { kdelta: 'swap', target, work, pid: process.pid, host: hostname(), started: new Date().toISOString() };
  const staged = join(work, 'journal.json');
  writeFileSync(staged, `${JSON.stringify(record)}\n`);
  fsyncPath(staged);
  renameSync(staged, journal);
  fsyncPath(dirname(journal));
  testKillAt('journaled');
  try {
    renameSync(target, join(work, 'old'));
  } catch (error) {
    rmSync(journal, { force: true }); // nothing moved
    throw error;
  }
  try {
    testKillAt('between');
    renameSync(join(work, 'new'), target);
  } catch (error) {
    renameSync(join(work, 'old'), target);
    rmSync(journal, { force: true });
    throw error;
  }
  fsyncPath(dirname(target));
  fsyncPath(work);
  testKillAt('swapped');
  rmSync(journal, { force: true });
  fsyncPath(dirname(journal));
}

function readJournal(path: string): Journal | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const j = JSON.parse(text) as Journal;
    if (j.kdelta === 'swap' && typeof j.target === 'string' && typeof j.work === 'string') return j;
  } catch {
    // handled below
  }
  throw new SwapError('invalid-swap-journal', `${path}: not a kdelta swap journal; remove it if no kdelta command is running`, path);
}

/** The package path `path` names, when a swap of it was interrupted (the path may then be absent). */
export function pendingSwapTarget(path: string): string | undefined {
  const target = canonical(path);
  return places(target).some((place) => existsSync(journalPath(place, target))) ? target : undefined;
}

/** Work directories named by the journals in `root`: an interrupted swap still needs them. */
function journaledWork(root: string): Set<string> {
  const out = new Set<string>();
  let names: string[] = [];
  try {
    names = readdirSync(root).filter((n) => JOURNAL.test(n));
  } catch {
    // no such place yet
  }
  for (const name of names) {
    try {
      const j = readJournal(join(root, name));
      if (j) out.add(j.work);
    } catch {
      // not ours to judge here; the command on its package reports it
    }
  }
  return out;
}

/**
 * Finish or roll back a swap of `path` that a killed process left half done, and remove what killed
 * kdelta processes left in the work places. Returns the line to tell the user when something was
 * done to the package. Call before reading or writing a package: its path may be absent until then.
 */
export function recoverInterruptedSwap(path: string): string | undefined {
  const target = canonical(path);
  let said: string | undefined;
  const roots = new Set<string>();
  for (const place of places(target)) {
    roots.add(place.root);
    const file = journalPath(place, target);
    const journal = readJournal(file);
    if (!journal) continue;
    // the work directory must be a sibling of the journal: a journal never sends us elsewhere
    if (journal.target !== target || dirname(journal.work) !== place.root) {
      throw new SwapError(
        'invalid-swap-journal',
        `${file}: journal of a swap of ${journal.target} in ${journal.work}, not where kdelta puts one; remove it`,
        file,
      );
    }
    const age = Date.now() - Date.parse(journal.started);
    if (journal.host === hostname() && journal.pid !== process.pid && isRunning(journal.pid) && age < journalLiveMs) {
      throw new SwapError('swap-in-progress', `process ${journal.pid} is replacing ${target} right now; try again in a moment`, target);
    }
    said = finishOrRollBack(journal);
    rmSync(file, { force: true });
    fsyncPath(place.root);
    rmSync(journal.work, { recursive: true, force: true });
  }
  roots.add(realpathSync(tmpdir())); // scratch fetches
  for (const root of roots) sweepAbandonedWork(root);
  return said;
}

/**
 * Remove the temporary directories killed kdelta processes of this host left under `root` (default:
 * the system's temporary directory, where fetches and runs work), keeping the work directory of an
 * interrupted swap, which {@link recoverInterruptedSwap} still needs.
 */
export function sweepAbandonedWork(root: string = realpathSync(tmpdir())): void {
  sweepAbandoned(root, journaledWork(root));
}

function finishOrRollBack(journal: Journal): string {
  const { target, work } = journal;
  const next = join(work, 'new');
  const old = join(work, 'old');
  const present = existsSync(target);
  if (!present && existsSync(next)) {
    renameSync(next, target);
    fsyncPath(dirname(target));
    return `Finished an interrupted update of ${target}: the updated package is in place.`;
  }
  if (!present && existsSync(old)) {
    renameSync(old, target);
    fsyncPath(dirname(target));
    return `Rolled back an interrupted update of ${target}: the package is as it was before.`;
  }
  if (!present)
    throw new SwapError('interrupted-swap-unresolved', `an interrupted update of ${target} left neither version in ${work}`, work);
  if (existsSync(next) && existsSync(old)) {
    throw new SwapError(
      'interrupted-swap-unresolved',
      `an interrupted update of ${target} left both versions in ${work} while the package exists: check them and remove ${work}`,
      work,
    );
  }
  // The package is at its path: either the old one (the swap never started) or the new one (only
  // the clean-up was left). Either way it is whole; what is left in the work directory is not needed.
  return existsSync(next)
    ? `Rolled back an interrupted update of ${target}: the package is as it was before.`
    : `Finished an interrupted update of ${target}: the updated package was already in place.`;
}

/** Copy a whole directory tree as is: `cp -a` where there is one (much faster), else node's cpSync. */
export function copyTreeFast(from: string, to: string): void {
  if (process.platform !== 'win32') {
    try {
      execFileSync('cp', ['-a', '--', from, to], { stdio: 'ignore' });
      return;
    } catch {
      rmSync(to, { recursive: true, force: true });
    }
  }
  cpSync(from, to, { recursive: true, verbatimSymlinks: true });
}
