// Benchmark: `kdelta run` over a fleet of local repositories, through the built CLI.
//   1. 100 variants over 100 downstream repositories, all changed: the first run (100 new
//      proposals), then, the proposals merged and the set moved from v1 to v2, the update run
//      (100 3-way updates).
//   2. 1,000 variants (10 packages in each of the 100 repositories), nothing new: the run after
//      the one that proposed them all.
// Goals: each timed run of 1. under 60 s, the no-op run of 2. under 60 s; the no-op run of 1. at
// most 3× its floor: one `git ls-remote` per downstream repository, one after the other, timed
// right after it (what any run must do to learn that nothing moved).
// Build first: `npx turbo run build --filter=kdelta`, then `node packages/cli/bench/run.bench.mjs`.
// KDELTA_BENCH_REPOS (default 100) and KDELTA_BENCH_PACKAGES (default 10) scale it; with
// KDELTA_BENCH_PACKAGES=1, 2. is left out.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const REPOS = Number(process.env.KDELTA_BENCH_REPOS ?? 100);
const PACKAGES = Number(process.env.KDELTA_BENCH_PACKAGES ?? 10);
const GOAL_MS = 60_000;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-run-')));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  KDELTA_CACHE_DIR: join(root, 'cache'),
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

function kdelta(label, expectCount) {
  const start = performance.now();
  const r = spawnSync(process.execPath, [bin, 'run', '--mode', 'variants', '--report', 'report.json'], {
    cwd: control,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const ms = performance.now() - start;
  if (r.status !== 0) {
    process.stderr.write(r.stderr.slice(-4000));
    throw new Error(`${label}: kdelta run exited ${r.status}`);
  }
  const report = JSON.parse(execFileSync('cat', [join(control, 'report.json')], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const actions = {};
  for (const x of report.results) actions[x.action] = (actions[x.action] ?? 0) + 1;
  if (report.results.length !== expectCount) throw new Error(`${label}: ${report.results.length} results, expected ${expectCount}`);
  return { ms, actions };
}

function mergeAll(packages) {
  for (const n of names) {
    const bare = join(root, `${n}.git`);
    // merge every proposal branch of the repository into main, as a reviewer would
    const work = join(root, 'merge');
    git(root, 'clone', '--quiet', bare, work);
    for (const p of packages) git(work, 'merge', '--quiet', '--no-edit', `origin/kdelta/web-${n}-${p}`);
    git(work, 'push', '--quiet', 'origin', 'main');
    rmSync(work, { recursive: true, force: true });
  }
}

const NOOP_GOAL = 3;

/** What every run must pay to learn that nothing moved: one ls-remote per downstream. */
function lsRemoteFloor() {
  const start = performance.now();
  for (const n of names) git(root, 'ls-remote', join(root, `${n}.git`));
  return performance.now() - start;
}

const rows = [];
const show = (label, variants, { ms, actions }, goal = true) => {
  const what = Object.entries(actions)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
  rows.push({ label, variants, ms, what });
  console.log(
    `${label}: ${variants} variants in ${(ms / 1000).toFixed(2)} s (${what})${goal && ms > GOAL_MS ? '  ← over the 60 s goal' : ''}`,
  );
};

try {
  mkdirSync(control);
  write(control, controlFiles(['web'], 'v1'));
  show('100 variants, first run (all new)', REPOS, kdelta('first', REPOS));
  mergeAll(['web']);
  write(control, controlFiles(['web'], 'v2'));
  show('100 variants, v1 → v2 (all updated, 3-way)', REPOS, kdelta('update', REPOS));
  const noop = kdelta('no-op', REPOS);
  show('100 variants, nothing new', REPOS, noop);
  const floor = lsRemoteFloor();
  show(`floor: ${REPOS} × git ls-remote`, REPOS, { ms: floor, actions: {} }, false);
  const ratio = noop.ms / floor;
  console.log(`no-op run / floor: ${ratio.toFixed(1)}×${ratio > NOOP_GOAL ? `  ← over the ${NOOP_GOAL}× goal` : ''}`);

  if (PACKAGES > 1) {
    const packages = ['web', ...Array.from({ length: PACKAGES - 1 }, (_, i) => `web-${i + 2}`)];
    write(control, controlFiles(packages, 'v2'));
    show(
      `${REPOS * PACKAGES} variants, first run (setup: ${REPOS * (PACKAGES - 1)} new)`,
      REPOS * PACKAGES,
      kdelta('setup', REPOS * PACKAGES),
      false,
    );
    show(`${REPOS * PACKAGES} variants, nothing new`, REPOS * PACKAGES, kdelta('no-op 1000', REPOS * PACKAGES));
  }
  console.log('\n| run | variants | time | actions |\n| --- | ---: | ---: | --- |');
  for (const r of rows) console.log(`| ${r.label} | ${r.variants} | ${(r.ms / 1000).toFixed(1)} s | ${r.what} |`);
} finally {
  // KDELTA_BENCH_KEEP=1 leaves the fleet for profiling: `cd <root>/control && kdelta run --mode variants`
  if (process.env.KDELTA_BENCH_KEEP === '1') console.log(`kept: ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
