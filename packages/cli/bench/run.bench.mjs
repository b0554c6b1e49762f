// Benchmark: `kdelta run` over a fleet of local repositories, through the built CLI.
//   1. 100 variants over 100 downstream repositories, all changed: the first run (100 new
//      proposals), then, the proposals merged and the set moved from v1 to v2, the update run
//      (100 3-way updates).
//   2. 1,000 variants (10 packages in each of the 100 repositories), nothing new: the run after
//      the one that proposed them all.
// Goals: each timed run of 1. under 60 s, the no-op run of 2. under 60 s; the no-op run of 1. at
// most 1× its floor: one `git ls-remote` per downstream repository, one after the other (what any
// run must do to learn that nothing moved; kdelta's look-ups need not be sequential). The no-op run
// and its floor are timed 5 times each, alternating, in the same sitting: min/median/max of both
// and the ratio of the medians (the machine may be shared: the ratio is the figure compared).
// The first run (all new) is also timed TIMES times on its own, the fleet reset between (proposal
// branches, records and fetch cache removed): min/median/max; goal ≤ 10 s. KDELTA_BENCH_ONLY=first
// stops after it; KDELTA_BENCH_BASELINE=<another kdelta.js> times that CLI too, alternating, in
// the same sitting (a before/after comparison on a shared machine).
//   3. The same 100 variants with every proposal merged, nothing open, nothing new (a fleet's most
//      common state): the no-op run, timed 5 times alternating with the same ls-remote floor;
//      goal ≤ 1× the floor. KDELTA_BENCH_ONLY=merged runs only this (its setup runs untimed);
//      KDELTA_BENCH_FORGET=1 removes what runs remember of up-to-date packages (the cache's
//      run-up-to-date/) before each of its runs: the same runs as before runs remembered it.
// Build first: `npx turbo run build --filter=kdelta`, then `node packages/cli/bench/run.bench.mjs`.
// KDELTA_BENCH_REPOS (default 100) and KDELTA_BENCH_PACKAGES (default 10) scale it; with
// KDELTA_BENCH_PACKAGES=1, 2. is left out.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createBenchFleet, median, spread, timedRun, write } from './local-fleet.mjs';

const ownBin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
let bin = ownBin;
const REPOS = Number(process.env.KDELTA_BENCH_REPOS ?? 100);
const PACKAGES = Number(process.env.KDELTA_BENCH_PACKAGES ?? 10);
const GOAL_MS = 60_000;
const { root, env, git, names, control, controlFiles, mergeAll } = createBenchFleet('run', REPOS);

function kdelta(label, expectCount) {
  return timedRun({ bin, control, env, label, expectCount });
}

const NOOP_GOAL = 1;
const FIRST_GOAL_MS = 10_000;
const TIMES = 5;

/** What every run must pay to learn that nothing moved: one ls-remote per downstream. */
function lsRemoteFloor() {
  const start = performance.now();
  for (const n of names) git(root, 'ls-remote', join(root, `${n}.git`));
  return performance.now() - start;
}

/** `times` no-op runs alternating with the floor, so that a burst of load on the shared machine falls on both. */
function noopBesideFloor(label, times, forget = false) {
  const noops = [];
  const floors = [];
  for (let i = 0; i < times; i++) {
    if (forget) rmSync(join(root, 'cache', 'run-up-to-date'), { recursive: true, force: true });
    noops.push(kdelta(label, REPOS));
    floors.push(lsRemoteFloor());
  }
  return { noops, floors };
}

/** Prints the no-op run beside its floor: medians, min/median/max of both, and the ratio against the goal. */
function reportNoop(what, { noops, floors }) {
  const noop = { ms: median(noops.map((n) => n.ms)), actions: noops[0].actions };
  show(`${REPOS} variants, ${what} (median of ${noops.length})`, REPOS, noop);
  const floor = median(floors);
  show(`floor: ${REPOS} × git ls-remote, sequential (median of ${floors.length})`, REPOS, { ms: floor, actions: {} }, false);
  console.log(`  ${what} min/median/max: ${spread(noops.map((n) => n.ms))}`);
  console.log(`  floor min/median/max: ${spread(floors)}`);
  const ratio = noop.ms / floor;
  console.log(`${what} / floor: ${ratio.toFixed(2)}× (goal ≤ ${NOOP_GOAL}×)${ratio > NOOP_GOAL ? `  ← over the ${NOOP_GOAL}× goal` : ''}`);
}

/**
 * Every open proposal merged into its downstream, then one run to record the merges and one to
 * find the packages up to date with nothing open (which a run remembers): the state the timed
 * no-op runs of 3. start from.
 */
function mergeAndSettle() {
  mergeAll(['web']);
  show('setup: the merges recorded', REPOS, kdelta('merges recorded', REPOS), false);
  show('setup: up to date, nothing open', REPOS, kdelta('settled', REPOS), false);
}

const FORGET = process.env.KDELTA_BENCH_FORGET === '1';
const MERGED = `merged, nothing new${FORGET ? ' (nothing remembered)' : ''}`;
const rows = [];
const show = (label, variants, { ms, actions }, goal = true) => {
  const what = Object.entries(actions)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
  rows.push({ label, variants, ms, what });
  console.log(
    `${label}: ${variants} variants in ${(ms / 1000).toFixed(2)} s (${what})${goal && ms > GOAL_MS ? '  ← over the 60 s goal' : ''}`,
  );
};

/** The fleet as before its first run: no proposal branch, no record, no fetch cache. */
function resetFleet() {
  for (const n of names) {
    const bare = join(root, `${n}.git`);
    const branches = git(bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/kdelta/').split('\n').filter(Boolean);
    if (branches.length > 0)
      execFileSync('git', ['update-ref', '--stdin'], { cwd: bare, env, input: branches.map((b) => `delete ${b}\n`).join('') });
  }
  rmSync(join(control, '.kdelta', 'proposals'), { recursive: true, force: true });
  rmSync(join(root, 'cache'), { recursive: true, force: true });
}

try {
  mkdirSync(control);
  write(control, controlFiles(['web'], 'v1'));
  if (process.env.KDELTA_BENCH_ONLY === 'merged') {
    show('setup: first run (all new)', REPOS, kdelta('first', REPOS), false);
    mergeAndSettle();
    reportNoop(MERGED, noopBesideFloor('merged no-op', TIMES, FORGET));
  } else everything();
} finally {
  // KDELTA_BENCH_KEEP=1 leaves the fleet for profiling: `cd <root>/control && kdelta run --mode variants`
  if (process.env.KDELTA_BENCH_KEEP === '1') console.log(`kept: ${root}`);
  else rmSync(root, { recursive: true, force: true });
}

/** 1., 2. and 3. */
function everything() {
  const firsts = { [ownBin]: [] };
  const baseline = process.env.KDELTA_BENCH_BASELINE;
  if (baseline) firsts[baseline] = [];
  for (let i = 0; i < TIMES; i++) {
    for (const b of Object.keys(firsts)) {
      bin = b;
      firsts[b].push(kdelta('first', REPOS).ms);
      resetFleet();
    }
  }
  bin = ownBin;
  for (const [b, times] of Object.entries(firsts)) {
    const m = median(times);
    console.log(
      `${REPOS} variants, first run (all new)${b === ownBin ? '' : ` [${b}]`} min/median/max of ${TIMES}: ${spread(times)}${m > FIRST_GOAL_MS ? '  ← over the 10 s goal' : ''}`,
    );
  }
  if (baseline) console.log(`  this build / baseline (medians): ${(median(firsts[ownBin]) / median(firsts[baseline])).toFixed(2)}×`);
  if (process.env.KDELTA_BENCH_ONLY !== 'first') {
    show('100 variants, first run (all new)', REPOS, kdelta('first', REPOS));
    mergeAll(['web']);
    write(control, controlFiles(['web'], 'v2'));
    show('100 variants, v1 → v2 (all updated, 3-way)', REPOS, kdelta('update', REPOS));
    reportNoop('nothing new, proposals open', noopBesideFloor('no-op', TIMES));
    // 3. every proposal merged, nothing open, nothing new
    mergeAndSettle();
    reportNoop(MERGED, noopBesideFloor('merged no-op', TIMES, FORGET));

    if (PACKAGES > 1) {
      const packages = ['web', ...Array.from({ length: PACKAGES - 1 }, (_, i) => `web-${i + 2}`)];
      write(control, controlFiles(packages, 'v2'));
      show(
        `${REPOS * PACKAGES} variants, first run (setup: ${REPOS * (PACKAGES - 1)} new)`,
        REPOS * PACKAGES,
        kdelta('setup', REPOS * PACKAGES),
        false,
      );
      show(`${REPOS * PACKAGES} variants, nothing new`, REPOS * PACKAGES, kdelta('no-op 1000', REPOS * PACKAGES));
    }
    console.log('\n| run | variants | time | actions |\n| --- | ---: | ---: | --- |');
    for (const r of rows) console.log(`| ${r.label} | ${r.variants} | ${(r.ms / 1000).toFixed(1)} s | ${r.what} |`);
  }
}
