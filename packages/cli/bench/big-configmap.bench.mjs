// Benchmark: `kdelta run` over a package holding one big ConfigMap (default 40,000 keys, 8 MB),
// through the built CLI, beside the time `yaml` alone takes to parse that file.
//   1. the first run: the variant is new (the package fetched, mutated, pushed, proposed);
//   2. the proposal merged, upstream changes every tenth value: a 3-way update of the whole map.
// Each scenario runs REPEATS times (default 5) on a fresh fleet, and the parse as often, in the same
// sitting: min/median/max are printed, and the ratio of the medians is what is compared (the floor
// of a 3-way update is three parses; the goal is 3× one parse).
// Build first: `npx turbo run build --filter=kdelta`, then `node packages/cli/bench/big-configmap.bench.mjs`.
// KDELTA_BENCH_MAP_KEYS (default 40000) scales it; KDELTA_BENCH_NODE_ARGS passes options to the
// CLI's node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the runs).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createFleet, git, packageVariant, repository } from '@kdelta/test-support';
import { parseAllDocuments } from 'yaml';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const KEYS = Number(process.env.KDELTA_BENCH_MAP_KEYS ?? 40_000);
const GOAL_RATIO = 3;
const REPEATS = Number(process.env.KDELTA_BENCH_REPEATS ?? 5);
const nodeArgs = (process.env.KDELTA_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** A ConfigMap of `KEYS` keys of about 200 bytes each; `version` changes every tenth value. */
function bigConfigMap(version) {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: big', 'data:'];
  const filler = 'x'.repeat(170);
  for (let i = 0; i < KEYS; i++) {
    const v = i % 10 === 0 ? version : 1;
    lines.push(`  key-${String(i).padStart(6, '0')}: "value ${v} ${filler}"`);
  }
  return `${lines.join('\n')}\n`;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const spread = (xs) => ({ min: Math.min(...xs), median: median(xs), max: Math.max(...xs) });
const secs = (ms) => (ms / 1000).toFixed(2);
const show = ({ min, median: m, max }) => `${secs(min)} / ${secs(m)} / ${secs(max)} s`;

/** One parse with `yaml` (one pass, its quadratic duplicate-key check off, as kdelta parses). */
function yamlParseMs(text) {
  const start = performance.now();
  const docs = parseAllDocuments(text, { version: '1.1', uniqueKeys: false });
  docs[0].toJS();
  return performance.now() - start;
}

/** One fleet: the first run (the variant new), the proposal merged, then the 3-way update to v2. */
function scenario(v1, v2) {
  const f = createFleet(['cluster-01']);
  const env = { ...process.env, KDELTA_CACHE_DIR: join(f.root, 'cache') };
  const kdelta = (label) => {
    const start = performance.now();
    const r = spawnSync(process.execPath, [...nodeArgs, bin, 'run', '--mode', 'variants', '--report', 'report.json'], {
      cwd: f.control,
      env,
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    const ms = performance.now() - start;
    if (r.status !== 0) {
      process.stderr.write(r.stderr.slice(-4000));
      throw new Error(`${label}: kdelta run exited ${r.status}`);
    }
    const report = JSON.parse(readFileSync(join(f.control, 'report.json'), 'utf8'));
    const action = report.results.map((x) => x.action).join(', ');
    if (action !== 'proposed') throw new Error(`${label}: expected a proposal, the run said ${action}`);
    return ms;
  };
  try {
    f.publish({ 'base-ns/big.yaml': v1 }, 'base-ns/v1');
    f.publish({ 'base-ns/big.yaml': v2 }, 'base-ns/v2');
    f.writeControl({
      'repositories.yaml': `${repository('catalog', f.upstream)}---\n${repository('cluster-01', f.downstream('cluster-01'))}`,
      'variant.yaml': packageVariant('big', 'cluster-01', '', 'v1'),
    });
    git(f.control, 'init', '--quiet', '--initial-branch=main');
    const first = kdelta('first');
    // the proposal merged, as a reviewer would; then upstream moves to v2
    const work = join(f.root, 'merge');
    git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), work);
    git(work, 'merge', '--quiet', '--no-edit', 'origin/kdelta/big');
    git(work, 'push', '--quiet', 'origin', 'main');
    f.writeControl({ 'variant.yaml': packageVariant('big', 'cluster-01', '', 'v2') });
    return { first, update: kdelta('update') };
  } finally {
    f.cleanup();
  }
}

const v1 = bigConfigMap(1);
const v2 = bigConfigMap(2);
const mb = (Buffer.byteLength(v1) / 1e6).toFixed(1);
const parses = [];
const firsts = [];
const updates = [];
// interleaved, so a neighbour's load on the shared machine falls on the floor and the runs alike
for (let i = 0; i < REPEATS; i++) {
  parses.push(yamlParseMs(v1));
  const r = scenario(v1, v2);
  firsts.push(r.first);
  updates.push(r.update);
}
const parse = spread(parses);
console.log(`ConfigMap of ${KEYS} keys (${mb} MB), ${REPEATS} runs each, min / median / max`);
console.log(`yaml parse (the floor's unit): ${show(parse)}`);
const rows = [
  ['first run (new variant)', spread(firsts)],
  ['v1 → v2 (3-way update, a tenth of the values changed)', spread(updates)],
];
for (const [label, t] of rows) {
  const ratio = t.median / parse.median;
  console.log(`${label}: ${show(t)}, ${ratio.toFixed(1)}× the parse${ratio > GOAL_RATIO ? `  ← over the ${GOAL_RATIO}× goal` : ''}`);
}
console.log(
  `\n| run | keys | MB | time (min / median / max) | yaml parse (median) | ratio of medians |\n| --- | ---: | ---: | ---: | ---: | ---: |`,
);
for (const [label, t] of rows) {
  console.log(`| ${label} | ${KEYS} | ${mb} | ${show(t)} | ${secs(parse.median)} s | ${(t.median / parse.median).toFixed(1)}× |`);
}
