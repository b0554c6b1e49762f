// Benchmark: `pkg update` of a package of 1,000 realistic resources with local edits, kdelta beside
// the installed kpt on the same package in the same run. Build first:
//   npx turbo run build --filter=kdelta && node packages/cli/bench/pkg-update.bench.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-update-')));
const upstream = join(root, 'upstream');
const ws = join(root, 'ws');
const git = (cwd, ...args) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], { cwd, stdio: 'ignore' });

function deployment(i, v) {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-${i}
  namespace: team-${i % 10}
  labels:
    app: app-${i}
    tier: ${i % 3 === 0 ? 'frontend' : 'backend'}
spec:
  replicas: ${1 + (i % 3)}
  selector:
    matchLabels:
      app: app-${i}
  template:
    metadata:
      labels:
        app: app-${i}
    spec:
      containers:
      - name: app
        image: registry.example.com/app-${i}:1.${v}.0
        ports:
        - containerPort: 8080
          name: http
        env:
        - name: LOG_LEVEL
          value: info
        - name: REGION
          value: eu-west-1
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
        volumeMounts:
        - mountPath: /etc/config
          name: config
      volumes:
      - name: config
        configMap:
          name: app-${i}-config
`;
}
function service(i) {
  return `apiVersion: v1
kind: Service
metadata:
  name: app-${i}
  namespace: team-${i % 10}
spec:
  selector:
    app: app-${i}
  ports:
  - name: http
    port: 80
    targetPort: 8080
`;
}
function configMap(i, v) {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-${i}-config
  namespace: team-${i % 10}
data:
  feature.flags: "a,b,c"
  version: "${v}"
  timeout: "30s"
`;
}

// 334 apps × (Deployment + Service + ConfigMap) ≈ 1,000 resources, one file per app
const apps = 334;
function writeVersion(v) {
  for (let i = 0; i < apps; i++) {
    const dv = v === 2 && i % 10 === 0 ? 2 : 1; // v2 bumps the image of every tenth app
    const text = [deployment(i, dv), service(i), configMap(i, v === 2 && i % 7 === 0 ? 2 : 1)].join('---\n');
    if (v === 2 && i % 50 === 49) continue; // v2 drops a few apps
    writeFileSync(join(upstream, 'pkg', `app-${i}.yaml`), text);
  }
  if (v === 2) for (let i = apps; i < apps + 5; i++) writeFileSync(join(upstream, 'pkg', `app-${i}.yaml`), [deployment(i, 1), service(i), configMap(i, 1)].join('---\n'));
}

mkdirSync(join(upstream, 'pkg'), { recursive: true });
git(upstream, 'init', '--quiet', '--initial-branch=main');
writeFileSync(join(upstream, 'pkg', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n');
writeVersion(1);
git(upstream, 'add', '-A');
git(upstream, 'commit', '--quiet', '-m', 'v1');
git(upstream, 'tag', 'v1');
for (let i = 0; i < apps; i++) rmSync(join(upstream, 'pkg', `app-${i}.yaml`), { force: true });
writeVersion(2);
git(upstream, 'add', '-A');
git(upstream, 'commit', '--quiet', '-m', 'v2');
git(upstream, 'tag', 'v2');

mkdirSync(ws);
git(ws, 'init', '--quiet');
const kptAvailable = spawnSync('kpt', ['version']).status === 0;
const env = { ...process.env, KPT_CACHE_DIR: join(root, 'kpt-cache'), KDELTA_CACHE_DIR: join(root, 'kdelta-cache') };
execFileSync('node', [bin, 'pkg', 'get', `${upstream}.git/pkg@v1`, 'base'], { cwd: ws, env, stdio: 'ignore' });
// local edits: replicas on every fifth app, an extra label on every eighth
for (let i = 0; i < apps; i++) {
  if (i % 5 !== 0 && i % 8 !== 0) continue;
  const f = join(ws, 'base', `app-${i}.yaml`);
  let t = readFileSync(f, 'utf8');
  if (i % 5 === 0) t = t.replace(/replicas: \d/, 'replicas: 7');
  if (i % 8 === 0) t = t.replace('    tier:', '    owner: local-team\n    tier:');
  writeFileSync(f, t);
}
git(ws, 'add', '-A');
git(ws, 'commit', '--quiet', '-m', 'local edits');

function timeUpdate(tool, dir) {
  cpSync(join(ws, 'base'), join(ws, dir), { recursive: true });
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '-m', `copy ${dir}`);
  const t0 = performance.now();
  const r = tool === 'kpt'
    ? spawnSync('kpt', ['pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' })
    : spawnSync('node', [bin, 'pkg', 'update', `${dir}@v2`, '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
  return ms;
}

const runs = Number(process.env.RUNS ?? 3);
const kd = [];
const kp = [];
timeUpdate('kdelta', 'warmup'); // fills the cache, as a second update would find it
for (let r = 0; r < runs; r++) {
  kd.push(timeUpdate('kdelta', `kd-${r}`));
  if (kptAvailable) kp.push(timeUpdate('kpt', `kpt-${r}`));
}
rmSync(root, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`package: ${apps * 3} resources in ${apps} files; upstream changes ~10%, local edits ~30% of apps; ${runs} runs, median`);
console.log(`kdelta pkg update: ${(median(kd) / 1000).toFixed(2)} s`);
if (kptAvailable) {
  console.log(`kpt pkg update:    ${(median(kp) / 1000).toFixed(2)} s`);
  console.log(`speed-up:          ${(median(kp) / median(kd)).toFixed(1)}×`);
} else console.log('kpt is absent (not on PATH): no side-by-side figure');
