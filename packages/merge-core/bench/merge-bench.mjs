// `pnpm bench` in merge-core: the package merge on synthetic packages of 100, 1,000 and 10,000
// resources, beside the floor of parsing the three inputs and printing them with `yaml`: once
// with a tenth of the apps changed upstream (a usual update) and once with every app changed
// (the worst case), in two shapes: many small files (one per app) and one stream holding every
// resource. Each run is its own process so that its peak memory (max RSS) is its own.
// Then one ConfigMap of tens of thousands of keys (about 1 MB) that upstream and local both edit
// throughout: maps that large must merge in about the time it takes to parse them.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { mergeFiles } from '../dist/index.js';
import { bigConfigMap, oneStream, syntheticPackage } from './synthetic.mjs';

const sizes = (process.env.KDELTA_BENCH_SIZES ?? '100,1000,10000').split(',').map(Number);
/** Upstream changes every n-th app: 10 (a tenth) and 1 (all of them). */
const changeEvery = (process.env.KDELTA_BENCH_CHANGE_EVERY ?? '10,1').split(',').map(Number);
/** `files`: a file per app of three resources; `stream`: one file of every resource. */
const shapes = (process.env.KDELTA_BENCH_SHAPES ?? 'files,stream').split(',');

function floor(pkg) {
  for (const side of [pkg.origin, pkg.upstream, pkg.local]) {
    for (const f of side) for (const d of parseAllDocuments(f.text, { version: '1.1' })) d.toString();
  }
}

/** Timed runs at least (`KDELTA_BENCH_RUNS`, default 3); with 1, a single cold run and no warm-up. */
const minRuns = Number(process.env.KDELTA_BENCH_RUNS ?? 3);

/** CPU time (user + system) of the last `time` call's median run, in ms. */
let lastCpuMs = 0;

/**
 * The median wall time of the runs, in ms; its run's CPU time goes to `lastCpuMs`, the figure
 * to compare on a machine other work shares (wall time there counts the waiting too).
 */
function time(fn, minMs = 1500) {
  if (minRuns > 1) fn(); // warm up
  const runs = [];
  const start = performance.now();
  while ((minRuns > 1 && performance.now() - start < minMs) || runs.length < minRuns) {
    const t = performance.now();
    const c = process.cpuUsage();
    fn();
    const u = process.cpuUsage(c);
    runs.push({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 });
  }
  runs.sort((a, b) => a.wall - b.wall);
  const median = runs[Math.floor(runs.length / 2)];
  lastCpuMs = median.cpu;
  return median.wall;
}

if (process.argv[2] === '--big-map') {
  const keys = Number(process.argv[3]);
  const pkg = bigConfigMap(keys);
  const bytes = pkg.local[0].text.length;
  let conflicts = 0;
  const merge = time(() => {
    conflicts = mergeFiles(pkg).conflicts.length;
  });
  const parse = time(() => {
    for (const side of [pkg.origin, pkg.upstream, pkg.local]) parseAllDocuments(side[0].text, { version: '1.1', uniqueKeys: false });
  });
  console.log(JSON.stringify({ keys, bytes, merge, parse, conflicts }));
} else if (process.argv[2] === '--one') {
  const size = Number(process.argv[3]);
  const mode = process.argv[4];
  const files = syntheticPackage(size, { upstreamChangeEvery: Number(process.argv[5] ?? 1) });
  const pkg = process.argv[6] === 'stream' ? oneStream(files) : files;
  const count = pkg.local.reduce((n, f) => n + (f.text.match(/^kind:/gm) ?? []).length, 0);
  const lines = pkg.local.reduce((n, f) => n + f.text.split('\n').length, 0);
  let ms;
  let conflicts = 0;
  if (mode === 'merge') {
    ms = time(() => {
      conflicts = mergeFiles(pkg).conflicts.length;
    });
  } else {
    ms = time(() => floor(pkg));
  }
  console.log(JSON.stringify({ size, count, lines, ms, cpuMs: lastCpuMs, conflicts, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
} else {
  const rows = [];
  for (const shape of shapes)
    for (const every of changeEvery)
      for (const size of sizes) {
        const run = (mode) =>
          JSON.parse(
            execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--one', String(size), mode, String(every), shape], {
              encoding: 'utf8',
            }),
          );
        const merge = run('merge');
        const base = run('floor');
        rows.push({
          shape,
          'changed upstream': every === 1 ? 'all' : `1/${every}`,
          resources: merge.count,
          'local lines': merge.lines,
          'merge ms': merge.ms.toFixed(1),
          'resources/s': Math.round((merge.count / merge.ms) * 1000),
          'floor ms (parse 3 + print)': base.ms.toFixed(1),
          'ratio to floor': (merge.ms / base.ms).toFixed(2),
          'CPU ratio': (merge.cpuMs / base.cpuMs).toFixed(2),
          'peak RSS MiB (merge)': merge.maxRssMiB.toFixed(0),
          'peak RSS MiB (floor)': base.maxRssMiB.toFixed(0),
          conflicts: merge.conflicts,
        });
      }
  console.table(rows);
  const keys = Number(process.env.KDELTA_BENCH_MAP_KEYS ?? 40000);
  const big = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--big-map', String(keys)], { encoding: 'utf8' }));
  console.table([
    {
      'ConfigMap keys': big.keys,
      'local bytes': big.bytes,
      'merge ms': big.merge.toFixed(1),
      'parse 3 ms (yaml, no duplicate check)': big.parse.toFixed(1),
      'ratio to parse': (big.merge / big.parse).toFixed(2),
      conflicts: big.conflicts,
    },
  ]);
}
