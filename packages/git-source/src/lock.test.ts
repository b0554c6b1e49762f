import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './__fixtures__/repo.js';
import { releaseHeldLocks, withLock } from './lock.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process that has exited (as a process killed in the middle of a fetch leaves). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

function lockHeldBy(path: string, owner: { pid: number; host: string }, ageMs = 0): void {
  mkdirSync(path);
  writeFileSync(join(path, 'owner.json'), JSON.stringify({ ...owner, token: 'abandoned' }));
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(path, t, t);
}

// The waits are bounded by a short timeout: a lock that is not taken over makes withLock throw.
describe('withLock', () => {
  it('records its owner while held and removes the lock afterwards', async () => {
    const lock = join(root, 'a.lock');
    const seen = await withLock(lock, async () => JSON.parse(readFileSync(join(lock, 'owner.json'), 'utf8')));
    expect(seen).toMatchObject({ pid: process.pid, host: hostname() });
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over at once a lock whose process no longer runs on this host', async () => {
    const lock = join(root, 'dead.lock');
    lockHeldBy(lock, { pid: deadPid(), host: hostname() });
    await expect(withLock(lock, async () => 'ran', 2000)).resolves.toBe('ran');
    expect(existsSync(lock)).toBe(false);
  });

  it('waits for a lock held by a running process, and times out naming it', async () => {
    const lock = join(root, 'live.lock');
    lockHeldBy(lock, { pid: process.pid, host: hostname() });
    await expect(withLock(lock, async () => 'ran', 300)).rejects.toThrow(`held by process ${process.pid}`);
    expect(existsSync(lock)).toBe(true);
    rmSync(lock, { recursive: true });
  });

  it('keeps the age rule for a lock of another host: young is waited for, old is taken over', async () => {
    const young = join(root, 'young.lock');
    lockHeldBy(young, { pid: 1, host: `not-${hostname()}` });
    await expect(withLock(young, async () => 'ran', 300)).rejects.toThrow('timed out');
    const old = join(root, 'old.lock');
    lockHeldBy(old, { pid: 1, host: `not-${hostname()}` }, 11 * 60 * 1000);
    await expect(withLock(old, async () => 'ran', 2000)).resolves.toBe('ran');
  });

  it('lets one holder at a time run among many waiters', async () => {
    const lock = join(root, 'many.lock');
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withLock(lock, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 5));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it('releaseHeldLocks frees what this process holds (for a signal handler about to exit)', async () => {
    const lock = join(root, 'held.lock');
    await withLock(lock, async () => {
      expect(existsSync(lock)).toBe(true);
      releaseHeldLocks();
      expect(existsSync(lock)).toBe(false);
    });
  });
});

describe('withLock leftovers', () => {
  it('removes the staging directory a process killed while creating the lock left', async () => {
    const lock = join(root, 'staged.lock');
    const staging = `${lock}.0123456789abcdef`;
    lockHeldBy(staging, { pid: deadPid(), host: hostname() });
    await withLock(lock, async () => undefined, 2000);
    expect(existsSync(staging)).toBe(false);
  });

  it('removes one left before its owner record was written, by the dead pid in its name', async () => {
    const lock = join(root, 'unrecorded.lock');
    const staging = `${lock}.${deadPid()}-0123456789abcdef`;
    mkdirSync(staging);
    // a live process's directory without a record yet is left alone
    const live = `${lock}.${process.pid}-fedcba9876543210`;
    mkdirSync(live);
    await withLock(lock, async () => undefined, 2000);
    expect(existsSync(staging)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });
});
