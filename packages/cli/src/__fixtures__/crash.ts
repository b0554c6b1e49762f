// Shared by the crash tests: the built CLI run in its own process group (so that a kill takes it
// and its children together, as a cancelled CI job does), a hash of a whole tree, a seeded random,
// and how many random kills to make.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'kdelta.js');

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `kdelta <args>` detached: `killGroup` then takes the command and its children. */
export function startKdelta(args: string[], cwd: string, env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

/** SIGKILL to the whole process group of a child from {@link startKdelta}. */
export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** One hash of every file of a tree: paths and bytes. */
export function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (abs: string, rel: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(abs, e.name), r);
      else
        h.update(`${r}\0`)
          .update(readFileSync(join(abs, e.name)))
          .update('\0');
    }
  };
  walk(dir, '');
  return h.digest('hex');
}

/** A random number generator in [0, 1) that repeats for a seed (the test prints it). */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/**
 * Rounds of random kills: KDELTA_CRASH_ROUNDS when set (`pnpm bench` sets many), else the test's
 * few. The deterministic kill at each stage of the swap runs whatever this says.
 */
export function crashRounds(fallback: number): number {
  const raw = process.env.KDELTA_CRASH_ROUNDS;
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`KDELTA_CRASH_ROUNDS: expected a whole number of rounds, got "${raw}"`);
  return n;
}

/** A random-kill test's timeout: about 3 s a round on a shared 2-core machine, with room. */
export function crashTimeout(rounds: number): number {
  return 120_000 + rounds * 10_000;
}
