// Benchmark: `kdelta run` over a package holding one big ConfigMap (default 40,000 keys, 8 MB),
// through the built CLI, beside the time `yaml` alone takes to parse that file.
//   1. the first run: the variant is new (the package fetched, mutated, pushed, proposed);
//   2. the proposal merged, upstream changes every tenth value: a 3-way update of the whole map.
// Goal: each run within a few times (5×) the `yaml` parse of the file.
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
const GOAL_RATIO = 5;
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

/** Median of 3 parses with `yaml` (one pass, its quadratic duplicate-key check off, as kdelta parses). */
function yamlParseMs(text) {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    const docs = parseAllDocuments(text, { version: '1.1', uniqueKeys: false });
    docs[0].toJS();
    times.push(performance.now() - start);
  }
  return median(times);
}

const f = createFleet(['cluster-01']);
const env = { ...process.env, KDELTA_CACHE_DIR: join(f.root, 'cache') };
function kdelta(label) {
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
  return { ms, action: report.results.map((x) => x.action).join(', ') };
}

try {
  const v1 = bigConfigMap(1);
  const v2 = bigConfigMap(2);
  f.publish({ 'base-ns/big.yaml': v1 }, 'base-ns/v1');
  f.publish({ 'base-ns/big.yaml': v2 }, 'base-ns/v2');
  f.writeControl({
    'repositories.yaml': `${repository('catalog', f.upstream)}---\n${repository('cluster-01', f.downstream('cluster-01'))}`,
    'variant.yaml': packageVariant('big', 'cluster-01', '', 'v1'),
  });
  git(f.control, 'init', '--quiet', '--initial-branch=main');
  const parseMs = yamlParseMs(v1);
  const mb = (Buffer.byteLength(v1) / 1e6).toFixed(1);
  console.log(`ConfigMap of ${KEYS} keys (${mb} MB): yaml parses it in ${(parseMs / 1000).toFixed(2)} s`);
  const rows = [];
  const show = (label, { ms, action }) => {
    const ratio = ms / parseMs;
    rows.push({ label, ms, ratio, action });
    console.log(
      `${label}: ${(ms / 1000).toFixed(2)} s, ${ratio.toFixed(1)}× the parse (${action})${ratio > GOAL_RATIO ? `  ← over the ${GOAL_RATIO}× goal` : ''}`,
    );
  };
  show('first run (new variant)', kdelta('first'));
  // the proposal merged, as a reviewer would; then upstream moves to v2
  const work = join(f.root, 'merge');
  git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), work);
  git(work, 'merge', '--quiet', '--no-edit', 'origin/kdelta/big');
  git(work, 'push', '--quiet', 'origin', 'main');
  f.writeControl({ 'variant.yaml': packageVariant('big', 'cluster-01', '', 'v2') });
  show('v1 → v2 (3-way update, a tenth of the values changed)', kdelta('update'));
  console.log(`\n| run | keys | MB | time | yaml parse | ratio |\n| --- | ---: | ---: | ---: | ---: | ---: |`);
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${KEYS} | ${mb} | ${(r.ms / 1000).toFixed(2)} s | ${(parseMs / 1000).toFixed(2)} s | ${r.ratio.toFixed(1)}× |`,
    );
  }
} finally {
  f.cleanup();
}
