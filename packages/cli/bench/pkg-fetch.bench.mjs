// Benchmark: fetch one 20-file package out of an upstream repository with 2,000 files and 50 tags,
// with a cold cache and a warm one. Run after a build: `npx turbo run build --filter=kdelta`, then
// `node packages/cli/bench/pkg-fetch.bench.mjs`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fetchPackage } from '@kdelta/git-source';

const root = mkdtempSync(join(tmpdir(), 'kdelta-bench-fetch-'));
const upstream = join(root, 'upstream');
const git = (...args) => execFileSync('git', args, { cwd: upstream, stdio: ['ignore', 'pipe', 'pipe'] });
const gitEnv = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com'];

function resource(dir, i, version) {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${dir}-${i}\n  labels:\n    app: ${dir}\ndata:\n  version: "${version}"\n  payload: "${'x'.repeat(400)}"\n`;
}

mkdirSync(upstream);
git('init', '--quiet', '--initial-branch=main');
const dirs = Array.from({ length: 100 }, (_, d) => `packages/pkg-${String(d).padStart(3, '0')}`);
for (const dir of dirs) {
  mkdirSync(join(upstream, dir), { recursive: true });
  writeFileSync(join(upstream, dir, 'Kptfile'), `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${dir.split('/').pop()}\n`);
  for (let i = 0; i < 19; i++) writeFileSync(join(upstream, dir, `cm-${i}.yaml`), resource(dir, i, 0));
}
git('add', '-A');
git(...gitEnv, 'commit', '--quiet', '-m', 'v0');
for (let t = 1; t <= 50; t++) {
  // each release touches a few packages
  for (let k = 0; k < 10; k++) {
    const dir = dirs[(t * 7 + k * 13) % dirs.length];
    writeFileSync(join(upstream, dir, `cm-${k}.yaml`), resource(dir, k, t));
  }
  git('add', '-A');
  git(...gitEnv, 'commit', '--quiet', '-m', `v${t}`);
  git('tag', `v${t}`);
}
const fileCount = execFileSync('git', ['ls-files'], { cwd: upstream, encoding: 'utf8' }).trim().split('\n').length;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

let n = 0;
async function timeFetch(cacheDir, ref, dir = '/packages/pkg-042') {
  const dest = join(root, `out-${n++}`);
  const t0 = performance.now();
  const r = await fetchPackage({ repo: `file://${upstream}`, ref, directory: dir, dest, cacheDir });
  const ms = performance.now() - t0;
  rmSync(dest, { recursive: true, force: true });
  return { ms, cacheHit: r.cacheHit };
}

const runs = 7;
const cold = [];
const warmSame = [];
const warmOther = [];
const fullClone = [];
for (let r = 0; r < runs; r++) {
  const cacheDir = join(root, `cache-${r}`);
  cold.push((await timeFetch(cacheDir, 'v25')).ms);
  warmSame.push((await timeFetch(cacheDir, 'v25')).ms);
  warmOther.push((await timeFetch(cacheDir, `v${26 + r}`)).ms);
  rmSync(cacheDir, { recursive: true, force: true });
  const t0 = performance.now();
  execFileSync('git', ['clone', '--quiet', '--branch', 'v25', `file://${upstream}`, join(root, `clone-${r}`)], { stdio: 'ignore' });
  fullClone.push(performance.now() - t0);
  rmSync(join(root, `clone-${r}`), { recursive: true, force: true });
}
rmSync(root, { recursive: true, force: true });

const fmt = (xs) => `${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
console.log(`upstream: ${fileCount} files, 50 tags, ${dirs.length} packages; package: 20 files; ${runs} runs, median`);
console.log(`cold cache (partial clone + sparse checkout):   ${fmt(cold)}`);
console.log(`warm cache, same tag (ls-remote + checkout):    ${fmt(warmSame)}`);
console.log(`warm cache, another tag (depth-1 fetch):        ${fmt(warmOther)}`);
console.log(`for scale: plain full git clone of the tag:     ${fmt(fullClone)}`);
