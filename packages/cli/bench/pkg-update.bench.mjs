// Benchmark: `pkg update` of a package of 1,000 realistic resources with local edits, kdelta beside
// its floor (a `yaml` parse of the three inputs, in a process of its own) and the installed kpt on
// the same package in the same run: min/median/max of RUNS (5) and each one's peak memory.
// SHAPE=stream (the default) puts every resource in one file, SHAPE=files one file per app. kpt
// takes about 100 s a run on 1,000 resources, so it runs KPT_RUNS times (1). Build first:
//   npx turbo run build --filter=kdelta && node packages/cli/bench/pkg-update.bench.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { addMergeComments } from '@kdelta/kptfile-model';
import { oneStream, syntheticPackage } from '../../merge-core/bench/synthetic.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', 'bin', 'kdelta.js');
const child = join(here, 'pkg-update-child.mjs');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-update-')));
const upstream = join(root, 'upstream');
const ws = join(root, 'ws');
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], { cwd, stdio: 'ignore' });

// About 1,000 resources: apps of a Deployment, a Service and a ConfigMap (60-120 lines each), one
// file per app. Upstream changes every tenth app (image, env, ports, sidecars, data; a few resources
// added and deleted); local edits replicas, labels and env values in most apps.
const resources = Number(process.env.RESOURCES ?? 1000);
const shape = process.env.SHAPE ?? 'stream';
const apps = syntheticPackage(resources, { upstreamChangeEvery: 10 });
const pkg = shape === 'stream' ? oneStream(apps) : apps;

function writeVersion(files) {
  rmSync(join(upstream, 'pkg', 'apps'), { recursive: true, force: true });
  for (const f of files) {
    mkdirSync(dirname(join(upstream, 'pkg', f.path)), { recursive: true });
    writeFileSync(join(upstream, 'pkg', f.path), f.text);
  }
}

mkdirSync(join(upstream, 'pkg'), { recursive: true });
git(upstream, 'init', '--quiet', '--initial-branch=main');
writeFileSync(join(upstream, 'pkg', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n');
writeVersion(pkg.origin);
git(upstream, 'add', '-A');
git(upstream, 'commit', '--quiet', '-m', 'v1');
git(upstream, 'tag', 'v1');
writeVersion(pkg.upstream);
git(upstream, 'add', '-A');
git(upstream, 'commit', '--quiet', '-m', 'v2');
git(upstream, 'tag', 'v2');

mkdirSync(ws);
git(ws, 'init', '--quiet');
const kptAvailable = spawnSync('kpt', ['version']).status === 0;
const env = { ...process.env, KPT_CACHE_DIR: join(root, 'kpt-cache'), KDELTA_CACHE_DIR: join(root, 'kdelta-cache') };
execFileSync('node', [bin, 'pkg', 'get', `${upstream}.git/pkg@v1`, 'base'], { cwd: ws, env, stdio: 'ignore' });
// local edits, on the fetched files (which carry kpt's merge comments, as a real copy does)
for (const f of pkg.local) writeFileSync(join(ws, 'base', f.path), addMergeComments(f.text));
git(ws, 'add', '-A');
git(ws, 'commit', '--quiet', '-m', 'local edits');

/** One update as a process of its own: its wall time and its peak memory (max RSS, in KiB). */
function timeUpdate(tool, dir) {
  cpSync(join(ws, 'base'), join(ws, dir), { recursive: true });
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '-m', `copy ${dir}`);
  const rssFile = join(root, `rss-${dir}`);
  const t0 = performance.now();
  const r =
    tool === 'kpt'
      ? spawnSync('kpt', ['pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' })
      : spawnSync('node', ['--import', child, bin, 'pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], {
          cwd: ws,
          env: { ...env, KDELTA_BENCH_RSS_FILE: rssFile },
          encoding: 'utf8',
        });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
  return { ms, rss: tool === 'kpt' ? undefined : Number(readFileSync(rssFile, 'utf8')) };
}

/** The floor, as a process of its own: parsing and printing the three inputs with `yaml`. */
const inputs = join(root, 'inputs');
for (const [side, files] of Object.entries({ origin: pkg.origin, upstream: pkg.upstream, local: pkg.local })) {
  for (const f of files) {
    mkdirSync(dirname(join(inputs, side, f.path)), { recursive: true });
    writeFileSync(join(inputs, side, f.path), f.text);
  }
}
const inputFiles = ['origin', 'upstream', 'local'].flatMap((side) => pkg[side].map((f) => join(inputs, side, f.path)));
function timeFloor() {
  const rssFile = join(root, 'rss-floor');
  const r = spawnSync('node', [child, 'floor', ...inputFiles], { env: { ...env, KDELTA_BENCH_RSS_FILE: rssFile }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`floor failed: ${r.stderr}`);
  return { ms: JSON.parse(r.stdout).ms, rss: Number(readFileSync(rssFile, 'utf8')) };
}

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    );
  return value;
}
function yamlFiles(dir, rel = '') {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(dir, join(rel, e.name)) : e.name.endsWith('.yaml') ? [join(rel, e.name)] : [],
  );
}
function differingFiles(a, b) {
  const read = (dir, f) => JSON.stringify(parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => canonical(d.toJS())));
  const files = [...new Set([...yamlFiles(a), ...yamlFiles(b)])].sort();
  return files.filter((f) => {
    try {
      return read(a, f) !== read(b, f);
    } catch {
      return true;
    }
  });
}

const runs = Number(process.env.RUNS ?? 5);
const kptRuns = Math.min(runs, Number(process.env.KPT_RUNS ?? 1));
const kd = [];
const fl = [];
const kp = [];
timeUpdate('kdelta', 'warmup'); // fills the cache, as a second update would find it
timeFloor();
// interleaved, so that what else the machine does weighs on both alike
for (let r = 0; r < runs; r++) {
  kd.push(timeUpdate('kdelta', `kd-${r}`));
  fl.push(timeFloor());
  if (kptAvailable && r < kptRuns) kp.push(timeUpdate('kpt', `kpt-${r}`));
}
// The speed is only worth reporting if the result is kpt's: compare the resources as data.
const differing = kp.length > 0 ? differingFiles(join(ws, `kd-${kp.length - 1}`), join(ws, `kpt-${kp.length - 1}`)) : [];
if (process.env.KEEP) console.log(`kept: ${root}`);
else rmSync(root, { recursive: true, force: true });
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)];
const spread = (xs) => [sorted(xs)[0], median(xs), sorted(xs)[xs.length - 1]].map((v) => (v / 1000).toFixed(2)).join(' / ') + ' s';
const ms = (xs) => xs.map((x) => x.ms);
const mib = (xs) => `${(Math.max(...xs.map((x) => x.rss)) / 1024).toFixed(0)} MiB`;
const count = (files) => files.reduce((n, f) => n + f.text.split(/^---$/m).length, 0);
console.log(
  `package: ${count(pkg.local)} resources in ${pkg.local.length} file(s) (${shape}); upstream changes 10% of apps; ${runs} runs (min / median / max)`,
);
console.log(`kdelta pkg update:  ${spread(ms(kd))}, peak RSS ${mib(kd)}`);
console.log(`floor (yaml parse): ${spread(ms(fl))}, peak RSS ${mib(fl)}`);
console.log(`kdelta / floor:     ${(median(ms(kd)) / median(ms(fl))).toFixed(1)}× (medians)`);
if (kp.length > 0) {
  console.log(`kpt pkg update:     ${spread(ms(kp))} (${kp.length} run(s))`);
  console.log(
    `kdelta / kpt:       ${(median(ms(kd)) / median(ms(kp))).toFixed(3)}× median, ${(Math.max(...ms(kd)) / median(ms(kp))).toFixed(3)}× the slowest`,
  );
  console.log(
    differing.length === 0
      ? 'result:             the same resources as kpt (compared as data)'
      : `result:             differs from kpt in ${differing.length} file(s): ${differing.slice(0, 5).join(', ')}`,
  );
} else if (!kptAvailable) console.log('kpt is absent (not on PATH): no side-by-side figure');
