// Benchmark: `kdelta preview` of 1,000 variants on local git beside a no-op run of the same fleet,
// through the built CLI. 100 downstream repositories with 10 packages each (one PackageVariantSet,
// a 7-file package), proposed and merged at web/v2; then, timed:
//   - a no-op run (`kdelta run`, nothing new upstream) that checks every variant against its base
//     branch: what runs remember of up-to-date packages (the cache's run-up-to-date/) is removed
//     before each of these runs, as run.bench.mjs's KDELTA_BENCH_FORGET does; the goal is on it;
//   - for information, the no-op run as it usually is, answered from that memory;
//   - a preview of upstream branch `next` (web/v3 not yet released: every package changes, a 3-way
//     update each, rendered, nothing written).
// Each is timed KDELTA_BENCH_TIMES times (default 3), alternating, in the same sitting:
// min/median/max of each and the ratios of the medians. Goal: the preview ≤ 1.5× the checking
// no-op run.
// Build first: `npx turbo run build --filter=kdelta`, then `node packages/cli/bench/preview.bench.mjs`.
// KDELTA_BENCH_REPOS (default 100) and KDELTA_BENCH_PACKAGES (default 10) scale it.
// KDELTA_BENCH_BASELINE=<another kdelta.js> times that CLI's preview too, alternating with this
// one's, in the same sitting (a before/after comparison on a shared machine).
// KDELTA_BENCH_KEEP=1 leaves the fleet for profiling, its root printed at the end:
// `cd <root>/control && node --cpu-prof kdelta.js preview --upstream-ref next --json`.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createBenchFleet, median, spread, upstreamFiles, write } from './local-fleet.mjs';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const REPOS = Number(process.env.KDELTA_BENCH_REPOS ?? 100);
const PACKAGES = Number(process.env.KDELTA_BENCH_PACKAGES ?? 10);
const TIMES = Number(process.env.KDELTA_BENCH_TIMES ?? 3);
const GOAL = 1.5;
const { root, env, git, upstream, control, controlFiles, mergeAll } = createBenchFleet('preview', REPOS);
const forgetUpToDate = () => rmSync(join(root, 'cache', 'run-up-to-date'), { recursive: true, force: true });

const BASELINE = process.env.KDELTA_BENCH_BASELINE;

function timed(label, args, expectCount, read, cli = bin) {
  const start = performance.now();
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: control, env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = performance.now() - start;
  if (r.status !== 0) {
    process.stderr.write(r.stderr.slice(-4000));
    process.stderr.write(r.stdout.slice(-4000));
    throw new Error(`${label}: kdelta ${args[0]} exited ${r.status}`);
  }
  const { count, what } = read(r.stdout);
  if (count !== expectCount) throw new Error(`${label}: ${count} results, expected ${expectCount}`);
  console.log(`${label}: ${count} variants in ${(ms / 1000).toFixed(2)} s (${what})`);
  return ms;
}

const runReport = () => {
  const report = JSON.parse(execFileSync('cat', [join(control, 'report.json')], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const actions = {};
  for (const x of report.results) actions[x.action] = (actions[x.action] ?? 0) + 1;
  return {
    count: report.results.length,
    what: Object.entries(actions)
      .map(([a, n]) => `${n} ${a}`)
      .join(', '),
  };
};
const runArgs = ['run', '--mode', 'variants', '--report', 'report.json'];

try {
  const packages = ['web', ...Array.from({ length: PACKAGES - 1 }, (_, i) => `web-${i + 2}`)];
  const total = REPOS * PACKAGES;
  mkdirSync(control);
  write(control, controlFiles(packages, 'v2'));
  timed('setup: first run (all new)', runArgs, total, runReport);
  mergeAll(packages);
  // the merged proposals are recorded as merged: the runs after it are the fleet at rest
  timed('setup: the proposals merged', runArgs, total, runReport);
  // web/v3, not released: branch next of the upstream
  git(upstream, 'checkout', '--quiet', '-b', 'next');
  write(upstream, upstreamFiles(3));
  git(upstream, 'add', '-A');
  git(upstream, 'commit', '--quiet', '-m', 'v3');
  git(upstream, 'checkout', '--quiet', 'main');
  // the runs after it answer from what it remembers of the up-to-date packages
  timed('setup: up to date, nothing open', runArgs, total, runReport);
  const noops = [];
  const remembered = [];
  const previews = [];
  const baselines = [];
  // alternating, so that a burst of load on the shared machine falls on all three
  for (let i = 0; i < TIMES; i++) {
    forgetUpToDate();
    noops.push(timed('no-op run, every variant checked', runArgs, total, runReport));
    remembered.push(timed('no-op run, answered from memory', runArgs, total, runReport));
    const previewOf = (label, cli) =>
      timed(
        label,
        ['preview', '--upstream-ref', 'next', '--json'],
        total,
        (stdout) => {
          const report = JSON.parse(stdout);
          const s = report.summary;
          return {
            count: s.total,
            what: `${s.changed} changed, ${s.conflicted} with conflicts, ${s.unchanged} unchanged, ${s.failed} failed`,
          };
        },
        cli,
      );
    previews.push(previewOf('preview of upstream branch next', bin));
    if (BASELINE) baselines.push(previewOf(`preview of upstream branch next [${BASELINE}]`, BASELINE));
  }
  const noop = median(noops);
  const preview = median(previews);
  console.log(`\n| ${total} variants | min / median / max of ${TIMES} |\n| --- | ---: |`);
  console.log(`| no-op run, every variant checked | ${spread(noops)} |`);
  console.log(`| no-op run, answered from memory | ${spread(remembered)} |`);
  console.log(`| preview of an unreleased upstream change | ${spread(previews)} |`);
  if (BASELINE) console.log(`| preview, baseline [${BASELINE}] | ${spread(baselines)} |`);
  const ratio = preview / noop;
  console.log(
    `preview / no-op run, every variant checked (medians): ${ratio.toFixed(2)}×${ratio > GOAL ? `  ← over the ${GOAL}× goal` : ''}`,
  );
  console.log(`preview / no-op run, answered from memory (medians, for information): ${(preview / median(remembered)).toFixed(2)}×`);
  if (BASELINE) {
    console.log(`baseline preview / no-op run, every variant checked (medians): ${(median(baselines) / noop).toFixed(2)}×`);
    console.log(`this build / baseline, preview (medians): ${(preview / median(baselines)).toFixed(2)}×`);
  }
} finally {
  if (process.env.KDELTA_BENCH_KEEP === '1') console.log(`kept: ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
