import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isKdeltaError } from '@kdelta/errors';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recoverInterruptedSwap, SwapError } from './index.js';

// A package in a git work tree: its swap journals live in `.git/kdelta/` (see swap.ts).
let repo = '';
let pkg = '';
let place = '';
let journal = '';

beforeEach(() => {
  repo = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-swap-')));
  execFileSync('git', ['init', '--quiet'], { cwd: repo });
  pkg = join(repo, 'web');
  mkdirSync(pkg);
  writeFileSync(join(pkg, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n');
  place = join(repo, '.git', 'kdelta');
  mkdirSync(place, { recursive: true });
  journal = join(place, `kdelta-journal-${createHash('sha256').update(pkg).digest('hex').slice(0, 16)}.json`);
});

afterEach(() => rmSync(repo, { recursive: true, force: true }));

function writeJournal(fields: Record<string, unknown>): void {
  writeFileSync(journal, JSON.stringify({ kdelta: 'swap', target: pkg, host: hostname(), started: new Date().toISOString(), ...fields }));
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('an interrupted swap that cannot be recovered is a KdeltaError with a code and the file to look at', () => {
  it('a journal that is not one', () => {
    writeFileSync(journal, 'not json');
    const error = thrown(() => recoverInterruptedSwap(pkg));
    expect(error).toBeInstanceOf(SwapError);
    expect(isKdeltaError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'invalid-swap-journal', file: journal });
    expect((error as Error).message).toBe(`${journal}: not a kdelta swap journal; remove it if no kdelta command is running`);
  });

  it('a journal naming a work directory where kdelta puts none', () => {
    writeJournal({ work: join(tmpdir(), 'elsewhere'), pid: 1 });
    expect(thrown(() => recoverInterruptedSwap(pkg))).toMatchObject({ code: 'invalid-swap-journal', file: journal });
  });

  it('a swap another live process is making', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeJournal({ work: join(place, 'work-1'), pid: other.pid });
      const error = thrown(() => recoverInterruptedSwap(pkg));
      expect(error).toMatchObject({ code: 'swap-in-progress', file: pkg });
      expect((error as Error).message).toBe(`process ${other.pid} is replacing ${pkg} right now; try again in a moment`);
    } finally {
      other.kill();
    }
  });

  it('a swap that left neither version of the package', () => {
    const work = join(place, 'work-2');
    mkdirSync(work);
    rmSync(pkg, { recursive: true });
    writeJournal({ work, pid: 999_999_999 });
    expect(thrown(() => recoverInterruptedSwap(pkg))).toMatchObject({ code: 'interrupted-swap-unresolved', file: work });
  });
});
