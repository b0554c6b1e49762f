import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { GitError } from './errors.js';

/** A lock on another host (its pid cannot be checked) is stale after this long. */
const staleMs = 10 * 60 * 1000;
/** A lock without a readable owner (written by an older kdelta, or half removed) is stale after this long. */
const ownerlessStaleMs = 30 * 1000;

/** Who holds a lock: written inside the lock directory before it becomes the lock. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  /** Unique per acquisition: a lock is only ever removed by the holder of this token or after its owner died. */
  readonly token: string;
}

const OWNER = 'owner.json';

/**
 * Locks this process holds now, and its staging directories, so a signal handler can remove them
 * before the process exits.
 */
const held = new Map<string, string>();

/**
 * Remove every lock this process holds, synchronously (for a SIGINT/SIGTERM handler that is about to
 * exit the process: `finally` blocks do not run then). A lock of a process that died without this
 * is taken over by the next one anyway, at once when it is on the same host.
 */
export function releaseHeldLocks(): void {
  for (const path of held.keys()) {
    try {
      rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } catch {
      // the next command takes over a lock whose process is gone
    }
  }
  held.clear();
}

/** Whether process `pid` is running on this host (EPERM: it runs, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    const v = JSON.parse(await readFile(`${lockPath}/${OWNER}`, 'utf8')) as Partial<LockOwner>;
    return typeof v.pid === 'number' && typeof v.host === 'string' && typeof v.token === 'string' ? (v as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Create `lockPath` holding its owner record, atomically: the record is written into a private
 * directory which is then renamed to `lockPath`. A rename onto an existing non-empty directory
 * fails, so exactly one process wins and a lock is never seen without its owner. (An empty
 * directory, the lock of kdelta versions before owners were recorded, is replaced by the rename.)
 */
async function tryCreate(lockPath: string, owner: LockOwner): Promise<boolean> {
  const staging = stagingPath(lockPath, owner);
  // held from before it exists until after it is gone: a signal between two of these steps leaves nothing
  held.set(staging, owner.token);
  try {
    await mkdir(staging);
    await writeFile(`${staging}/${OWNER}`, JSON.stringify(owner));
    await rename(staging, lockPath);
    held.set(lockPath, owner.token);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EPERM' || code === 'EACCES' || code === 'EISDIR') return false;
    throw error;
  } finally {
    await rm(staging, { recursive: true, force: true });
    held.delete(staging);
  }
}

/** Whether the lock as seen (`owner`, or none) is abandoned: its process is gone, or it is too old. */
async function isStale(lockPath: string, owner: LockOwner | undefined): Promise<boolean> {
  if (owner && owner.host === hostname()) return !running(owner.pid);
  const info = await stat(lockPath).catch(() => undefined);
  if (!info) return false; // gone already: the next attempt takes it
  return Date.now() - info.mtimeMs > (owner ? staleMs : ownerlessStaleMs);
}

/**
 * Remove an abandoned lock, but only the one that was judged abandoned: the removal happens under a
 * second lock (`<lock>.takeover`, the same kind) and after the owner is read again, so two waiters
 * that both saw the dead owner cannot between them remove the live lock the first one took next.
 */
async function takeOver(lockPath: string, seen: LockOwner | undefined, self: LockOwner): Promise<void> {
  const guard = `${lockPath}.takeover`;
  if (!(await tryCreate(guard, self))) {
    const guardOwner = await readOwner(guard);
    if (await isStale(guard, guardOwner)) await rm(guard, { recursive: true, force: true });
    else await new Promise((r) => setTimeout(r, 10)); // another waiter is taking over: a few ms
    return;
  }
  try {
    const now = await readOwner(lockPath);
    if (now?.token === seen?.token && (await isStale(lockPath, now))) await rm(lockPath, { recursive: true, force: true });
  } finally {
    await rm(guard, { recursive: true, force: true });
    held.delete(guard);
  }
}

/**
 * A private directory of one process (`<lock>.<pid>-<token>`): where it builds its lock record, and
 * where it moves its lock to remove it. The pid in the name lets a sweep tell a dead process's
 * directory even when the kill came before the owner record was written.
 */
function stagingPath(lockPath: string, owner: LockOwner): string {
  return `${lockPath}.${owner.pid}-${owner.token}`;
}

/** Remove the staging directories (`<lock>.<pid>-<token>`) that processes killed while creating or releasing the lock left. */
async function sweepStaging(lockPath: string): Promise<void> {
  const prefix = `${basename(lockPath)}.`;
  const names = await readdir(dirname(lockPath)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || name === `${prefix}takeover`) continue;
    const path = join(dirname(lockPath), name);
    const owner = await readOwner(path);
    // no record yet: killed between creating the directory and writing the record; the pid in
    // the name says whether its process is gone (a staging directory of another host, or of an
    // older kdelta without a pid in the name, goes by age)
    const pid = /^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length))?.[1];
    const dead = owner === undefined && pid !== undefined && !running(Number(pid));
    if (dead || (await isStale(path, owner))) await rm(path, { recursive: true, force: true });
  }
}

/**
 * Run `fn` holding a directory lock. The lock records its owner (pid, host); a lock whose process no
 * longer runs on this host is taken over at once, one from another host after 10 minutes.
 */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>, timeoutMs = 5 * 60 * 1000): Promise<T> {
  const started = Date.now();
  const self: LockOwner = { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex') };
  let delay = 20;
  for (;;) {
    if (await tryCreate(lockPath, self)) break;
    const owner = await readOwner(lockPath);
    if (await isStale(lockPath, owner)) {
      await takeOver(lockPath, owner, self);
      continue;
    }
    if (Date.now() - started > timeoutMs) {
      const who = owner ? ` (held by process ${owner.pid} on ${owner.host})` : '';
      throw new GitError({ code: 'lock-timeout', message: `timed out waiting for the cache lock ${lockPath}${who}` });
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
  // tryCreate holds the lock from the moment it exists
  await sweepStaging(lockPath);
  try {
    return await fn();
  } finally {
    // only our own lock: one taken over from us (we looked dead to another host) is not ours to remove
    if ((await readOwner(lockPath))?.token === self.token) {
      // Renamed away first, then removed: a lock directory emptied in place would, for an instant,
      // be an empty directory another waiter's rename can replace (and this removal then fail).
      // Each name is held until it is gone, so that a signal in between leaves nothing behind.
      const released = stagingPath(lockPath, self);
      held.set(released, self.token);
      await rename(lockPath, released);
      held.delete(lockPath);
      await rm(released, { recursive: true, force: true });
      held.delete(released);
    } else held.delete(lockPath);
  }
}
