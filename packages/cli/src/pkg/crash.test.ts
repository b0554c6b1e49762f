// `pkg update` of a 300-resource package killed at random moments and at each stage of its swap,
// through the built CLI (`packages/cli/bin/kdelta.js`; run `pnpm build` first) on real git
// repositories. The swap is two renames of the package directory whatever its size: 300 resources
// make an update long enough for random kills to land in each phase (the update benchmark measures
// 1,000), at a third of the cost of every command here. After every kill the package must be wholly the old tree or wholly the new one
// (a hash of every file), nothing may be left where users commit, and the next command must work at
// once (a cache lock left by the killed process would otherwise hold it for 5 minutes: the test
// would time out) and say when it finished or rolled back an interrupted swap.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMergeComments } from '@kdelta/kptfile-model';
import { bin, crashRounds, crashTimeout, killGroup, seededRandom, startKdelta, treeHash } from '../__fixtures__/crash.js';
// @ts-expect-error: a plain ES module without types, shared with the benchmarks
import { syntheticPackage } from '../../../merge-core/bench/synthetic.mjs';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-crash-')));
const upstream = join(root, 'upstream');
const ws = join(root, 'ws');
const pkg = join(ws, 'app');
const pristine = join(root, 'pristine');
const scratchTmp = join(root, 'tmp');
const cache = join(root, 'cache');
const env = { ...process.env, KDELTA_CACHE_DIR: cache, TMPDIR: scratchTmp };
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();

/** Paths `git add -A` would take that are not the package's (untracked or changed outside `app/`). */
function outsideThePackage(): string[] {
  const out = execFileSync('git', ['status', '--porcelain', '-z', '--untracked-files=all'], { cwd: ws, encoding: 'utf8' });
  return out
    .split('\0')
    .filter(Boolean)
    .map((l) => l.slice(3))
    .filter((p) => !p.startsWith('app/'));
}

function start(args: string[], extraEnv: Record<string, string> = {}) {
  return startKdelta(args, ws, { ...env, ...extraEnv });
}

const kdelta = (...args: string[]) => start(args).done;

function restoreOld(): void {
  rmSync(pkg, { recursive: true, force: true });
  cpSync(pristine, pkg, { recursive: true });
}

/** What a killed process may leave where it must not: work dirs, scratch fetches, cache locks, hidden copies. */
function leftovers(): string[] {
  const out: string[] = [];
  const kdeltaDir = join(ws, '.git', 'kdelta');
  if (existsSync(kdeltaDir)) out.push(...readdirSync(kdeltaDir).map((n) => `.git/kdelta/${n}`));
  out.push(...readdirSync(scratchTmp).map((n) => `TMPDIR/${n}`));
  for (const repo of existsSync(cache) ? readdirSync(cache) : []) {
    out.push(
      ...readdirSync(join(cache, repo))
        .filter((n) => n.includes('lock'))
        .map((n) => `cache/${repo}/${n}`),
    );
  }
  out.push(...readdirSync(ws).filter((n) => n !== 'app' && n !== '.git'));
  return out;
}

let oldHash = '';
let newHash = '';
let updateMs = 0;

beforeAll(async () => {
  if (!existsSync(join(dirname(bin), '..', 'dist', 'main.js')))
    throw new Error('build the CLI first (pnpm build): this test runs packages/cli/bin/kdelta.js');
  mkdirSync(scratchTmp);
  const synthetic = syntheticPackage(300, { upstreamChangeEvery: 10 }) as Record<
    'origin' | 'upstream' | 'local',
    { path: string; text: string }[]
  >;
  const writeVersion = (files: { path: string; text: string }[]) => {
    rmSync(join(upstream, 'pkg', 'apps'), { recursive: true, force: true });
    for (const f of files) {
      mkdirSync(dirname(join(upstream, 'pkg', f.path)), { recursive: true });
      writeFileSync(join(upstream, 'pkg', f.path), f.text);
    }
  };
  mkdirSync(join(upstream, 'pkg'), { recursive: true });
  git(upstream, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(upstream, 'pkg', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n');
  writeVersion(synthetic.origin);
  git(upstream, 'add', '-A');
  git(upstream, 'commit', '--quiet', '-m', 'v1');
  mkdirSync(ws);
  git(ws, 'init', '--quiet');
  const got = await kdelta('pkg', 'get', `${upstream}.git/pkg`, 'app');
  expect(got.code, got.stderr).toBe(0);
  for (const f of synthetic.local) writeFileSync(join(pkg, f.path), addMergeComments(f.text));
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '-m', 'local edits');
  writeVersion(synthetic.upstream);
  git(upstream, 'add', '-A');
  git(upstream, 'commit', '--quiet', '-m', 'v2');
  cpSync(pkg, pristine, { recursive: true });
  oldHash = treeHash(pkg);
  const t0 = Date.now();
  const updated = await kdelta('pkg', 'update', 'app');
  updateMs = Date.now() - t0;
  expect(updated.code, updated.stderr).toBe(0);
  newHash = treeHash(pkg);
  expect(newHash).not.toBe(oldHash);
  expect(leftovers()).toEqual([]);
}, 120_000);

describe('pkg update killed at any moment', () => {
  for (const stage of ['journaled', 'between', 'swapped'] as const) {
    it(`killed ${stage === 'between' ? 'between the two renames of the swap' : `at swap stage "${stage}"`}: the next command recovers, says so, and works`, async () => {
      restoreOld();
      const killed = await start(['pkg', 'update', 'app'], { KDELTA_TEST_KILL_IN_SWAP: stage }).done;
      expect(killed.signal).toBe('SIGKILL');
      if (stage === 'between')
        expect(existsSync(pkg)).toBe(false); // the one instant without a package, covered by the journal
      else expect(treeHash(pkg)).toBe(stage === 'journaled' ? oldHash : newHash);
      expect(outsideThePackage()).toEqual([]);

      const next = await kdelta('pkg', 'diff', 'app');
      expect(next.code, next.stderr).toBe(0);
      const said = next.stderr.split('\n').filter((l) => l.includes('interrupted update'));
      expect(said).toEqual([
        stage === 'journaled'
          ? `Rolled back an interrupted update of ${pkg}: the package is as it was before.`
          : stage === 'between'
            ? `Finished an interrupted update of ${pkg}: the updated package is in place.`
            : `Finished an interrupted update of ${pkg}: the updated package was already in place.`,
      ]);
      expect(treeHash(pkg)).toBe(stage === 'journaled' ? oldHash : newHash);
      if (stage !== 'journaled') expect(next.stdout).toBe('No changes.\n');
      expect(leftovers()).toEqual([]);
    });
  }

  it('killed between the renames, then pkg get to the same place: the package is put back, and get refuses', async () => {
    restoreOld();
    await start(['pkg', 'update', 'app'], { KDELTA_TEST_KILL_IN_SWAP: 'between' }).done;
    expect(existsSync(pkg)).toBe(false);
    const get = await kdelta('pkg', 'get', `${upstream}.git/pkg`, 'app');
    expect(get.code).toBe(1);
    expect(get.stderr).toContain('Finished an interrupted update');
    expect(get.stderr).toContain('destination directory "app" already exists');
    expect(treeHash(pkg)).toBe(newHash);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} while fetching: exit ${signal === 'SIGINT' ? 130 : 143}, the package as it was, nothing left behind`, async () => {
      restoreOld();
      const run = start(['pkg', 'update', 'app']);
      // progress is held until success, so the fetch shows by its scratch directory in TMPDIR
      let polling: NodeJS.Timeout | undefined;
      const fetching = new Promise<void>((resolve) => {
        polling = setInterval(() => {
          if (readdirSync(scratchTmp).some((n) => n.startsWith('kdelta-fetch-'))) resolve();
        }, 5);
      });
      await Promise.race([fetching, run.done]);
      clearInterval(polling);
      run.child.kill(signal);
      const r = await run.done;
      expect(r.code).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(treeHash(pkg)).toBe(oldHash);
      expect(leftovers()).toEqual([]);
    });
  }

  // A signal sent to kdelta alone (`kill <pid>`, a supervisor stopping the main process), not to its
  // process group as a terminal's Ctrl-C is: the git it runs would go on writing into the scratch
  // directory the handler removes. A git on PATH that, after the real `read-tree` of the package,
  // goes on writing files into that work tree (for up to 3 s) stands for a slow checkout.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} to kdelta alone while git writes the package into a scratch directory: git is stopped, exit ${signal === 'SIGINT' ? 130 : 143}, nothing left`, async () => {
      restoreOld();
      const bin = join(root, `slow-git-${signal}`);
      const marker = join(root, `writing-${signal}`);
      mkdirSync(bin);
      const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
      writeFileSync(
        join(bin, 'git'),
        `#!/bin/bash
tree=; prev=
for a in "$@"; do [ "$prev" = --work-tree ] && tree=$a; prev=$a; done
case " $* " in *" read-tree "*) ;; *) tree= ;; esac
[ -z "$tree" ] && exec ${realGit} "$@"
${realGit} "$@" || exit $?
: > ${marker}
i=0
while (( SECONDS < 3 )); do echo x > "$tree/slow-$i" 2>/dev/null; i=$((i + 1)); done
`,
        { mode: 0o755 },
      );
      const run = start(['pkg', 'update', 'app'], { PATH: `${bin}:${process.env.PATH}` });
      let polling: NodeJS.Timeout | undefined;
      const writing = new Promise<void>((resolve) => {
        polling = setInterval(() => existsSync(marker) && resolve(), 2);
      });
      await Promise.race([writing, run.done]);
      clearInterval(polling);
      expect(existsSync(marker)).toBe(true);
      run.child.kill(signal);
      const r = await run.done;
      expect(r.stderr).not.toContain('node:');
      expect(r.code).toBe(signal === 'SIGINT' ? 130 : 143);
      await new Promise((resolve) => setTimeout(resolve, 300)); // a git left running would write on
      expect(treeHash(pkg)).toBe(oldHash);
      expect(leftovers()).toEqual([]);
    });
  }

  // Kills at random moments. A round is one update killed at a random point of its run (up to 1.4
  // times the reference update: late kills land in the swap and its clean-up) and one next command:
  // `pkg update` when the kill left a swap to finish (that command must recover it), else a
  // `pkg get` of the same upstream into a new directory, which goes through the same cache lock and
  // sweep at a fraction of an update's cost. About 3 s a round on a shared 2-core machine. Each
  // stage of the swap has its deterministic kill above, so a few rounds by default check that a kill
  // anywhere else leaves a whole tree too; `pnpm bench` runs many (KDELTA_CRASH_ROUNDS), enough to
  // land kills in every phase: start-up, the fetches under the cache lock, the merge, the swap. A
  // last full update must then give exactly the new tree.
  const rounds = crashRounds(4);
  const timeout = crashTimeout(rounds);
  it(`${rounds} SIGKILLs at random moments: wholly old or wholly new each time, and the next command works at once`, {
    timeout,
  }, async () => {
    const seed = Number(process.env.KDELTA_CRASH_SEED ?? Date.now() % 1_000_000);
    console.log(`crash test seed ${seed} (KDELTA_CRASH_SEED=${seed} repeats it); a full update took ${updateMs} ms`);
    const random = seededRandom(seed);
    const seen = { old: 0, new: 0, absent: 0, pending: 0, locks: 0 };
    const journals = () =>
      existsSync(join(ws, '.git', 'kdelta')) ? readdirSync(join(ws, '.git', 'kdelta')).filter((n) => n.includes('journal')) : [];
    for (let i = 0; i < rounds; i++) {
      restoreOld();
      const delay = Math.floor(random() * updateMs * 1.4);
      const run = start(['pkg', 'update', 'app']);
      const timer = new Promise((r) => setTimeout(r, delay));
      const ended = await Promise.race([timer.then(() => false), run.done.then(() => true)]);
      const context = `round ${i}, seed ${seed}, kill after ${delay} ms`;
      if (ended) expect((await run.done).code, `${context}: ${(await run.done).stderr}`).toBe(0);
      // The whole process group, as a cancelled CI job or `kill -9` of a job is: a git fetch left
      // running after its parent would go on writing into a scratch directory the next command
      // has already swept.
      killGroup(run.child);
      await run.done;
      const absent = !existsSync(pkg);
      if (absent) seen.absent++;
      else {
        const h = treeHash(pkg);
        expect([oldHash, newHash], context).toContain(h);
        seen[h === oldHash ? 'old' : 'new']++;
      }
      const pending = journals().length > 0;
      if (pending) seen.pending++;
      if (leftovers().some((l) => l.startsWith('cache/'))) seen.locks++;
      // nothing a `git add -A` would take besides the package itself
      expect(outsideThePackage(), context).toEqual([]);
      if (pending) {
        const next = await kdelta('pkg', 'update', 'app');
        expect(next.code, `${context}: ${next.stderr}`).toBe(0);
        expect(next.stderr, context).toContain('an interrupted update');
        expect(treeHash(pkg), context).toBe(newHash);
      } else {
        const next = await kdelta('pkg', 'get', `${upstream}.git/pkg`, 'other');
        expect(next.code, `${context}: ${next.stderr}`).toBe(0);
        rmSync(join(ws, 'other'), { recursive: true });
      }
      expect(leftovers(), context).toEqual([]);
    }
    console.log(
      `crash test: after the kill the package was old ${seen.old}, new ${seen.new}, absent ${seen.absent} times; ` +
        `a swap was left to finish ${seen.pending} times and a cache lock ${seen.locks} times`,
    );
    restoreOld();
    const last = await kdelta('pkg', 'update', 'app');
    expect(last.code, last.stderr).toBe(0);
    expect(treeHash(pkg)).toBe(newHash);
  });
});
