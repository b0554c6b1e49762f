// The fleet the run and preview benchmarks time kdelta on, all local git: an upstream repository
// with package `web` (a Kptfile, a package context, 5 Deployments and a ConfigMap) tagged web/v1
// and web/v2, `repos` bare downstream repositories labelled env: prod, and a control directory.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

export function write(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function deployment(name, image, replicas) {
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  labels:\n    app: ${name}\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: ${name}\n        image: ${image}\n        ports:\n        - containerPort: 8080\n`;
}

/** Package `web` at release `version`. */
export function upstreamFiles(version) {
  const files = { 'web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\ninfo:\n  description: a web service\n' };
  files['web/package-context.yaml'] =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: web\n';
  for (let i = 0; i < 5; i++) files[`web/app-${i}.yaml`] = deployment(`app-${i}`, `registry.example.com/app-${i}:${version}.0`, 2);
  files['web/config.yaml'] =
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  level: info\n  release: "${version}"\n`;
  return files;
}

/**
 * The fleet in a new temporary directory named `kdelta-bench-<name>-…` (the caller removes
 * `root`). `env` runs git and kdelta with a committer and the fleet's own fetch cache;
 * `controlFiles(packages, revision)` is `.kdelta/` of the control directory: the repositories and
 * one PackageVariantSet of `web` at `revision` into `packages` of every downstream; `mergeAll`
 * merges every proposal branch of those packages into main, as a reviewer would.
 */
export function createBenchFleet(name, repos) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `kdelta-bench-${name}-`)));
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
    KDELTA_CACHE_DIR: join(root, 'cache'),
  };
  const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

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
  const names = Array.from({ length: repos }, (_, i) => `cluster-${String(i + 1).padStart(3, '0')}`);
  for (const n of names) git(root, 'clone', '--quiet', '--bare', seed, join(root, `${n}.git`));

  const control = join(root, 'control');
  function controlFiles(packages, revision) {
    const repositories = [
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: catalog\nspec:\n  git:\n    repo: ${upstream}\n    branch: main\n`,
      ...names.map(
        (n) =>
          `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${n}\n  labels:\n    env: prod\nspec:\n  git:\n    repo: ${join(root, `${n}.git`)}\n    branch: main\n`,
      ),
    ];
    const set = `apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: web\nspec:\n  upstream:\n    repo: catalog\n    package: web\n    revision: ${revision}\n  targets:\n  - repositorySelector:\n      matchLabels:\n        env: prod\n    packageNames: [${packages.join(', ')}]\n    template:\n      packageContext:\n        data:\n          tier: frontend\n`;
    return { '.kdelta/repositories.yaml': repositories.join('---\n'), '.kdelta/web.yaml': set };
  }

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

  return { root, env, git, upstream, names, control, controlFiles, mergeAll };
}

/**
 * `kdelta run --mode variants` in `control` with the CLI `bin`, timed: its wall time and how many
 * results ended as each action (from its JSON report); a failed run or a result count other than
 * `expectCount` stops the benchmark.
 */
export function timedRun({ bin, control, env, label, expectCount }) {
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
  const report = JSON.parse(readFileSync(join(control, 'report.json'), 'utf8'));
  const actions = {};
  for (const x of report.results) actions[x.action] = (actions[x.action] ?? 0) + 1;
  if (report.results.length !== expectCount) throw new Error(`${label}: ${report.results.length} results, expected ${expectCount}`);
  return { ms, actions };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** `min / median / max` of times in milliseconds, in seconds. */
export function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return [sorted[0], median(sorted), sorted.at(-1)].map((ms) => `${(ms / 1000).toFixed(2)} s`).join(' / ');
}
