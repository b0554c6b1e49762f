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
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const REPOS = Number(process.env.KDELTA_BENCH_REPOS ?? 100);
const PACKAGES = Number(process.env.KDELTA_BENCH_PACKAGES ?? 10);
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-preview-')));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  KDELTA_CACHE_DIR: join(root, 'cache'),
  KDELTA_DEBUG: process.env.KDELTA_DEBUG,
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function write(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function deployment(name, image, replicas) {
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  labels:\n    app: ${name}\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: ${name}\n        image: ${image}\n        ports:\n        - containerPort: 8080\n`;
}

function upstreamFiles(version) {
  const files = { 'web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\ninfo:\n  description: a web service\n' };
  files['web/package-context.yaml'] =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: web\n';
  for (let i = 0; i < 5; i++) files[`web/app-${i}.yaml`] = deployment(`app-${i}`, `registry.example.com/app-${i}:${version}.0`, 2);
  files['web/config.yaml'] =
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  level: info\n  release: "${version}"\n`;
  return files;
}

// the upstream repository: tags web/v1 and web/v2
const upstream = join(root, 'upstream');
mkdirSync(upstream);
git(upstream, 'init', '--quiet', '--initial-branch=main');
write(upstream, upstreamFiles(1));
git(upstream, 'add', '-A');
git(upstream, 'commit', '--quiet', '-m', 'v1');
git(upstream, 'tag', 'web/v1');
write(upstream, upstreamFiles(2));
git(upstream, 'add', '-A');
git(upstream, 'commit', '--quiet', '-m', 'v2');
git(upstream, 'tag', 'web/v2');

// downstream repositories
const seed = join(root, 'seed');
mkdirSync(seed);
git(seed, 'init', '--quiet', '--initial-branch=main');
write(seed, { 'README.md': '# cluster\n' });
git(seed, 'add', '-A');
git(seed, 'commit', '--quiet', '-m', 'init');
const names = Array.from({ length: REPOS }, (_, i) => `cluster-${String(i + 1).padStart(3, '0')}`);
for (const n of names) git(root, 'clone', '--quiet', '--bare', seed, join(root, `${n}.git`));

const control = join(root, 'control');
function controlFiles(packages, revision) {
  const repos = [
    `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: catalog\nspec:\n  git:\n    repo: ${upstream}\n    branch: main\n`,
    ...names.map(
      (n) =>
        `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${n}\n  labels:\n    env: prod\nspec:\n  git:\n    repo: ${join(root, `${n}.git`)}\n    branch: main\n`,
    ),
  ];
  const set = `apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: web\nspec:\n  upstream:\n    repo: catalog\n    package: web\n    revision: ${revision}\n  targets:\n  - repositorySelector:\n      matchLabels:\n        env: prod\n    packageNames: [${packages.join(', ')}]\n    template:\n      packageContext:\n        data:\n          tier: frontend\n`;
  return { '.kdelta/repositories.yaml': repos.join('---\n'), '.kdelta/web.yaml': set };
}

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

function mergeAll(packages) {
  for (const n of names) {
    const bare = join(root, `${n}.git`);
    const work = join(root, 'merge');
    git(root, 'clone', '--quiet', bare, work);
    for (const p of packages) git(work, 'merge', '--quiet', '--no-edit', `origin/kdelta/web-${n}-${p}`);
    git(work, 'push', '--quiet', 'origin', 'main');
    rmSync(work, { recursive: true, force: true });
  }
}

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
