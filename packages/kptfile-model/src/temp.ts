/// <reference types="node" preserve="true" />
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Temporary directories of this process: every one is registered here when made, so a SIGINT or
 * SIGTERM handler can remove them before the process exits (`finally` blocks do not run then).
 * Their names carry the pid and a host tag, so one left behind by a killed process (SIGKILL, power
 * loss) is recognised and removed by the next command ({@link sweepAbandoned}).
 */
const live = new Set<string>();

const hostTag = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** `kdelta-<tag>-<pid>.<host>-XXXXXX`, hidden (leading dot) when it sits beside the user's files. */
const NAME = /^\.?kdelta-[a-z-]+?-(\d+)\.([0-9a-f]{8})-[^/]+$/;

/** A new temporary directory under `root` (created if missing), registered for removal on a signal. */
export function makeTempDir(root: string, tag: string, hidden = false): string {
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(join(root, `${hidden ? '.' : ''}kdelta-${tag}-${process.pid}.${hostTag}-`));
  live.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  live.delete(dir);
}

/**
 * Remove every temporary directory this process still has (for the signal handler; synchronous).
 * Never throws: a directory that cannot be removed (a process still writing into it) is left to
 * the next command's {@link sweepAbandoned}, and the handler goes on to release its locks and exit.
 */
export function removeAllTempDirs(): void {
  for (const dir of live) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } catch {
      // swept by the next command: its pid is gone by then
    }
  }
  live.clear();
}

/** Whether process `pid` runs on this host (EPERM: it does, as another user). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Remove the temporary directories under `root` that a process of this host left when it was
 * killed: the pid in the name no longer runs. `keep` holds directories still needed (the work
 * directory of an interrupted swap, which its recovery removes).
 */
export function sweepAbandoned(root: string, keep: ReadonlySet<string> = new Set()): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m || m[2] !== hostTag || Number(m[1]) === process.pid || isRunning(Number(m[1]))) continue;
    const dir = join(root, name);
    if (keep.has(dir)) continue;
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // a git child of the killed process may still be writing there; the next command sweeps again
    }
  }
}
