// Benchmark: updating a package of 1,000 realistic resources with local edits through
// @kdelta/package-update (in this process, and as a process of its own), beside the installed kpt
// on the same package in the same run, with where the time goes. Build first:
//   npx turbo run build --filter=@kdelta/package-update && node packages/package-update/bench/update.bench.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { PackageTree, addMergeComments, applyChanges, commitTree, makeWorkDir } from '@kdelta/kptfile-model';
import { mergeFiles } from '@kdelta/merge-core';
import { fetchPackage } from '@kdelta/git-source';
import { getPackage, updatePackage } from '@kdelta/package-update';
import { syntheticPackage } from '../../merge-core/bench/synthetic.mjs';

const once = join(dirname(fileURLToPath(import.meta.url)), 'update-once.mjs');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-pkgupdate-')));
const upstream = join(root, 'upstream');
const ws = join(root, 'ws');
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], { cwd, stdio: 'ignore' });

// About 1,000 resources: apps of a Deployment, a Service and a ConfigMap, one file per app.
// Upstream changes every tenth app; local edits replicas, labels and env values in most apps.
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
await getPackage({ repo: upstream, directory: '/pkg', ref: 'v1', destination: join(ws, 'base'), cwd: ws, env });
for (const f of pkg.local) writeFileSync(join(ws, 'base', f.path), addMergeComments(f.text));
git(ws, 'add', '-A');
git(ws, 'commit', '--quiet', '-m', 'local edits');

function copy(dir) {
  cpSync(join(ws, 'base'), join(ws, dir), { recursive: true });
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '-m', `copy ${dir}`);
}

async function timeInProcess(dir) {
  copy(dir);
  const t0 = performance.now();
  await updatePackage({ dir: join(ws, dir), ref: 'v2', strategy: 'resource-merge', cwd: ws, env });
  return performance.now() - t0;
}

function timeProcess(tool, dir) {
  copy(dir);
  const t0 = performance.now();
  const r =
    tool === 'kpt'
      ? spawnSync('kpt', ['pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' })
      : spawnSync('node', [once, dir, 'v2'], { cwd: ws, env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
  return ms;
}

/** Where the time of one update goes: each step of it on its own, on the same package. */
async function phases() {
  const out = {};
  const time = async (name, fn) => {
    const t0 = performance.now();
    const v = await fn();
    out[name] = performance.now() - t0;
    return v;
  };
  const scratch = mkdtempSync(join(root, 'phase-'));
  await time('git fetch (upstream + origin)', async () => {
    await fetchPackage({
      repo: upstream,
      directory: '/pkg',
      ref: 'v2',
      dest: join(scratch, 'u'),
      cwd: ws,
      env,
      cacheDir: env.KDELTA_CACHE_DIR,
    });
    await fetchPackage({
      repo: upstream,
      directory: '/pkg',
      ref: 'v1',
      dest: join(scratch, 'o'),
      cwd: ws,
      env,
      cacheDir: env.KDELTA_CACHE_DIR,
    });
  });
  const trees = await time('read (3 trees)', () =>
    ['u', 'o'].map((d) => PackageTree.read(join(scratch, d))).concat([PackageTree.read(join(ws, 'base'))]),
  );
  const krm = (t) =>
    t
      .package()
      .ownFiles()
      .files.filter((f) => f.path.endsWith('.yaml'));
  const [u, o, l] = trees.map(krm);
  const marked = await time('merge comments (3 trees)', () =>
    [u, o, l].map((fs) => fs.map((f) => ({ path: f.path, text: addMergeComments(f.text) }))),
  );
  await time('parse + merge', () =>
    mergeFiles({ origin: marked[1], upstream: marked[0], local: marked[2] }, { strategy: 'upstream-wins', inferKeys: true }),
  );
  copy('phase-write');
  const before = PackageTree.read(join(ws, 'phase-write'));
  const after = before.clone();
  for (const f of marked[0]) after.write(f.path, f.text);
  await time('write (staging copy + swap)', () => commitTree(join(ws, 'phase-write'), after, before));
  // The write's own steps, on another copy: what a staging tree of only the changed files would save.
  copy('phase-steps');
  const dir = join(ws, 'phase-steps');
  const stepsBefore = PackageTree.read(dir);
  const stepsAfter = stepsBefore.clone();
  for (const f of marked[0]) stepsAfter.write(f.path, f.text);
  const changes = await time('  changes (tree diff)', () => stepsAfter.changesFrom(stepsBefore));
  out['  files written'] = changes.written.length;
  const holder = makeWorkDir(dir, 'work');
  await time('  staging copy (cp -a)', () => execFileSync('cp', ['-a', '--', dir, join(holder, 'pkg')], { stdio: 'ignore' }));
  await time('  apply changes', () => applyChanges(join(holder, 'pkg'), changes));
  await time('  swap (2 renames)', () => {
    renameSync(dir, join(holder, 'old'));
    renameSync(join(holder, 'pkg'), dir);
  });
  await time('  remove old tree', () => rmSync(holder, { recursive: true, force: true }));
  return out;
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
const lib = [];
const proc = [];
const kp = [];
await timeInProcess('warmup'); // fills the cache and warms the JIT, as a long-running service would be
timeProcess('kdelta', 'warmup-proc');
for (let r = 0; r < runs; r++) {
  lib.push(await timeInProcess(`lib-${r}`));
  proc.push(timeProcess('kdelta', `proc-${r}`));
  if (kptAvailable) kp.push(timeProcess('kpt', `kpt-${r}`));
}
const where = await phases();
// The speed is only worth reporting if the result is kpt's: compare the resources as data.
const differing = kptAvailable ? differingFiles(join(ws, `lib-${runs - 1}`), join(ws, `kpt-${runs - 1}`)) : [];
const differingProc = kptAvailable ? differingFiles(join(ws, `proc-${runs - 1}`), join(ws, `kpt-${runs - 1}`)) : [];
if (process.env.KEEP) console.log(`kept: ${root}`);
else rmSync(root, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const count = (files) => files.reduce((n, f) => n + f.text.split(/^---$/m).length, 0);
const s = (ms) => `${(ms / 1000).toFixed(3)} s`;
console.log(`package: ${count(pkg.local)} resources in ${pkg.local.length} files; upstream changes 10% of apps; ${runs} runs, median`);
console.log(`package-update, in process:      ${s(median(lib))}`);
console.log(`package-update, own process:     ${s(median(proc))}`);
if (kptAvailable) {
  console.log(`kpt pkg update:                  ${s(median(kp))}`);
  console.log(`speed-up, in process:            ${(median(kp) / median(lib)).toFixed(1)}×`);
  console.log(`speed-up, own process:           ${(median(kp) / median(proc)).toFixed(1)}×`);
  const same = differing.length === 0 && differingProc.length === 0;
  console.log(
    same
      ? 'result:                          the same resources as kpt (compared as data)'
      : `result:                          differs from kpt in ${differing.length + differingProc.length} file(s): ${[...differing, ...differingProc].slice(0, 5).join(', ')}`,
  );
} else console.log('kpt is absent (not on PATH): no side-by-side figure');
console.log('where the time goes (each step alone, one run):');
for (const [k, v] of Object.entries(where)) console.log(`  ${k.padEnd(30)} ${k.includes('files') ? v : s(v)}`);
