import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { createFleet, repository, type Fleet } from '@kdelta/test-support';
import type { RunOptions } from '@kdelta/run';
import type { Io } from '../../../src/command.js';
import { main } from '../../../src/main.js';

/** An `Io` for the CLI's `main` that collects what it prints. */
export function captureIo(cwd: string, env: NodeJS.ProcessEnv): { io: Io; out: { stdout: string; stderr: string } } {
  const out = { stdout: '', stderr: '' };
  const io: Io = {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    cwd,
    env,
  };
  return { io, out };
}

/**
 * The fleets of one test file, each removed after its test, and one fetch cache for the file:
 * `fleet` makes one with a Repository per downstream (and `catalog`, the upstream; `labels` on
 * each downstream's), `kdelta` runs the CLI in its control repository, `io` collects what `main`
 * prints from a folder, `opts` are `run()`'s options for a fleet. Call at the top of the file (it
 * registers the hooks).
 */
export function cliFleets(options: { labels?: Record<string, string>; downstreams?: string[] } = {}): {
  readonly cacheDir: string;
  readonly env: () => NodeJS.ProcessEnv;
  fleet(downstreams?: string[]): Fleet;
  kdelta(f: Fleet, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  io(cwd: string): ReturnType<typeof captureIo>;
  opts(f: Fleet, extra?: Partial<RunOptions>): RunOptions;
} {
  const fleets: Fleet[] = [];
  const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-run-cache-'));
  afterEach(() => {
    for (const f of fleets.splice(0)) f.cleanup();
  });
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const env = () => ({ ...process.env, KDELTA_CACHE_DIR: cacheDir });
  return {
    cacheDir,
    env,
    fleet(downstreams = options.downstreams ?? ['cluster-01']) {
      const f = createFleet(downstreams);
      fleets.push(f);
      f.writeControl({
        'repositories.yaml': [
          repository('catalog', f.upstream),
          ...downstreams.map((d) => repository(d, f.downstream(d), options.labels)),
        ].join('---\n'),
      });
      return f;
    },
    async kdelta(f, ...args) {
      const { io, out } = captureIo(f.control, env());
      const code = await main(args, io);
      return { code, ...out };
    },
    io: (cwd) => captureIo(cwd, env()),
    opts: (f, extra = {}) => ({ cwd: f.control, cacheDir, env: env(), ...extra }),
  };
}

/** A reviewer merges a proposal branch into main with a merge commit, as a forge's merge button does. */
export function mergeBranch(f: Fleet, downstream: string, branch: string): void {
  const work = join(f.root, `merge-${downstream}-${branch.replace(/\//g, '-')}-${Date.now()}`);
  execFileSync('git', ['clone', '--quiet', f.downstream(downstream), work]);
  execFileSync('git', ['-c', 'user.name=r', '-c', 'user.email=r@example.com', 'merge', '--quiet', '--no-edit', `origin/${branch}`], {
    cwd: work,
  });
  execFileSync('git', ['push', '--quiet', 'origin', 'main'], { cwd: work });
  rmSync(work, { recursive: true, force: true });
}

/** The local forge's record of a variant's proposal. */
export const proposalRecord = (f: Fleet, downstream: string, variant: string): string =>
  readFileSync(join(f.control, '.kdelta', 'proposals', downstream, `${variant}.md`), 'utf8');
