// Benchmark: `pkg update` of a package of 1,000 realistic resources with local edits, kdelta beside
// the installed kpt on the same package in the same run. Build first:
//   npx turbo run build --filter=kdelta && node packages/cli/bench/pkg-update.bench.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { addMergeComments } from '@kdelta/kptfile-model';
import { syntheticPackage } from '../../merge-core/bench/synthetic.mjs';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-update-')));
const upstream = join(root, 'upstream');
const ws = join(root, 'ws');
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], { cwd, stdio: 'ignore' });

// About 1,000 resources: apps of a Deployment, a Service and a ConfigMap (60-120 lines each), one
// file per app. Upstream changes every tenth app (image, env, ports, sidecars, data; a few resources
// added and deleted); local edits replicas, labels and env values in most apps.
const resources = Number(process.env.RESOURCES ?? 1000);
const pkg = syntheticPackage(resources, { upstreamChangeEvery: 10 });

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

function timeUpdate(tool, dir) {
  cpSync(join(ws, 'base'), join(ws, dir), { recursive: true });
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '-m', `copy ${dir}`);
  const t0 = performance.now();
  const r =
    tool === 'kpt'
      ? spawnSync('kpt', ['pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' })
      : spawnSync('node', [bin, 'pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
  return ms;
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

const runs = Number(process.env.RUNS ?? 3);
const kd = [];
const kp = [];
timeUpdate('kdelta', 'warmup'); // fills the cache, as a second update would find it
for (let r = 0; r < runs; r++) {
  kd.push(timeUpdate('kdelta', `kd-${r}`));
  if (kptAvailable) kp.push(timeUpdate('kpt', `kpt-${r}`));
}
// The speed is only worth reporting if the result is kpt's: compare the resources as data.
const differing = kptAvailable ? differingFiles(join(ws, `kd-${runs - 1}`), join(ws, `kpt-${runs - 1}`)) : [];
if (process.env.KEEP) console.log(`kept: ${root}`);
else rmSync(root, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const count = (files) => files.reduce((n, f) => n + f.text.split(/^---$/m).length, 0);
console.log(`package: ${count(pkg.local)} resources in ${pkg.local.length} files; upstream changes 10% of apps; ${runs} runs, median`);
console.log(`kdelta pkg update: ${(median(kd) / 1000).toFixed(2)} s`);
if (kptAvailable) {
  console.log(`kpt pkg update:    ${(median(kp) / 1000).toFixed(2)} s`);
  console.log(`speed-up:          ${(median(kp) / median(kd)).toFixed(1)}×`);
  console.log(
    differing.length === 0
      ? 'result:            the same resources as kpt (compared as data)'
      : `result:            differs from kpt in ${differing.length} file(s): ${differing.slice(0, 5).join(', ')}`,
  );
} else console.log('kpt is absent (not on PATH): no side-by-side figure');
