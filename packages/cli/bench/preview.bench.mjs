// Benchmark: `kdelta preview` of 1,000 variants on local git beside a no-op run of the same fleet,
// through the built CLI. 100 downstream repositories with 10 packages each (one PackageVariantSet,
// a 7-file package), proposed and merged at web/v2; then, timed:
//   - a no-op run (`kdelta run`, nothing new upstream): every variant checked against its base branch;
//   - a preview of upstream branch `next` (web/v3 not yet released: every package changes, a 3-way
//     update each, rendered, nothing written).
// Goal (issue 24): the preview within a few times the no-op run.
// Build first: `npx turbo run build --filter=kdelta`, then `node packages/cli/bench/preview.bench.mjs`.
// KDELTA_BENCH_REPOS (default 100) and KDELTA_BENCH_PACKAGES (default 10) scale it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createBenchFleet, upstreamFiles, write } from './local-fleet.mjs';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const REPOS = Number(process.env.KDELTA_BENCH_REPOS ?? 100);
const PACKAGES = Number(process.env.KDELTA_BENCH_PACKAGES ?? 10);
const { root, env, git, upstream, control, controlFiles, mergeAll } = createBenchFleet('preview', REPOS);

function timed(label, args, expectCount, read) {
  const start = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: control, env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = performance.now() - start;
  if (r.status !== 0) {
    process.stderr.write(r.stderr.slice(-4000));
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
  const noop = timed('no-op run', runArgs, total, runReport);
  // web/v3, not released: branch next of the upstream
  git(upstream, 'checkout', '--quiet', '-b', 'next');
  write(upstream, upstreamFiles(3));
  git(upstream, 'add', '-A');
  git(upstream, 'commit', '--quiet', '-m', 'v3');
  git(upstream, 'checkout', '--quiet', 'main');
  const preview = timed('preview of upstream branch next', ['preview', '--upstream-ref', 'next', '--json'], total, (stdout) => {
    const report = JSON.parse(stdout);
    const s = report.summary;
    return { count: s.total, what: `${s.changed} changed, ${s.conflicted} with conflicts, ${s.unchanged} unchanged, ${s.failed} failed` };
  });
  console.log(`\n| ${total} variants | time |\n| --- | ---: |`);
  console.log(`| no-op run | ${(noop / 1000).toFixed(1)} s |`);
  console.log(
    `| preview of an unreleased upstream change | ${(preview / 1000).toFixed(1)} s (${(preview / noop).toFixed(1)}× the no-op run) |`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
