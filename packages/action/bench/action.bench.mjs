// Benchmark: the bundled Action (dist/index.js) against the fake GitHub, 100 variants (one
// package in each of 100 downstream repositories), nothing new: the run after the one that
// opened every pull request. Measures the API requests of that run and its time.
// Goals: at most one read request per variant, zero writes.
// Build first (`pnpm build`); `pnpm bench` runs it. KDELTA_BENCH_VARIANTS (default 100) scales it.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startFakeGitHub } from '@kdelta/fake-github';
import { run } from '@kdelta/run';

const bundle = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const VARIANTS = Number(process.env.KDELTA_BENCH_VARIANTS ?? 100);
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-action-')));
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function write(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

const gh = await startFakeGitHub();
try {
  const upstream = join(root, 'upstream');
  mkdirSync(upstream);
  git(upstream, 'init', '--quiet', '--initial-branch=main');
  write(upstream, {
    'web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n',
    'web/deployment.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: web\n        image: registry.example.com/web:1.0\n',
  });
  git(upstream, 'add', '-A');
  git(upstream, 'commit', '--quiet', '-m', 'v1');
  git(upstream, 'tag', 'web/v1');

  const names = Array.from({ length: VARIANTS }, (_, i) => `cluster-${String(i + 1).padStart(3, '0')}`);
  const repos = [];
  for (const n of names)
    repos.push([n, (await gh.createRepo(`org/${n}`, { defaultBranch: 'main', files: { 'README.md': `# ${n}\n` } })).cloneUrl]);
  const control = join(root, 'control');
  write(control, {
    '.kdelta/repositories.yaml': [
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: catalog\nspec:\n  git:\n    repo: ${upstream}\n    branch: main\n`,
      ...repos.map(
        ([n, url]) =>
          `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${n}\n  labels:\n    env: prod\nspec:\n  git:\n    repo: ${url}\n    branch: main\n`,
      ),
    ].join('---\n'),
    '.kdelta/web.yaml':
      'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: web\nspec:\n  upstream:\n    repo: catalog\n    package: web\n    revision: v1\n  targets:\n  - repositorySelector:\n      matchLabels:\n        env: prod\n    packageNames: [web]\n',
  });

  /** The bundle as the runner starts it; asynchronous so the fake in this process keeps answering. */
  async function action(label) {
    const files = mkdtempSync(join(root, 'files-'));
    writeFileSync(join(files, 'output'), '');
    const start = performance.now();
    const child = spawn(process.execPath, [bundle], {
      cwd: control,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...gitEnv,
        GITHUB_WORKSPACE: control,
        GITHUB_OUTPUT: join(files, 'output'),
        GITHUB_API_URL: gh.apiUrl,
        GITHUB_SERVER_URL: gh.serverUrl,
        GITHUB_GRAPHQL_URL: gh.graphqlUrl,
        KDELTA_CACHE_DIR: join(root, 'cache'),
        INPUT_FORGE: 'github',
        INPUT_MODE: 'variants',
        INPUT_TOKEN: gh.token,
        INPUT_BUDGET: String(VARIANTS * 10),
      },
    });
    let out = '';
    child.stdout.on('data', (t) => (out += t));
    child.stderr.on('data', (t) => (out += t));
    const status = await new Promise((done) => child.on('close', done));
    const ms = performance.now() - start;
    if (status !== 0) {
      process.stderr.write(out.slice(-4000));
      throw new Error(`${label}: the Action exited ${status}`);
    }
    const outputs = readFileSync(join(files, 'output'), 'utf8');
    return { ms, outputs };
  }

  // The run that opens every pull request, in process and without GitHub's write spacing (a
  // second apart, more for pull requests): setup, not measured.
  const setupStart = performance.now();
  const first = await run({
    cwd: control,
    forge: 'github',
    mode: 'variants',
    budget: VARIANTS * 10,
    env: { ...gitEnv, KDELTA_CACHE_DIR: join(root, 'cache') },
    github: { token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, graphqlUrl: gh.graphqlUrl, pacing: { writeSpacing: false } },
  });
  const opened = first.results.filter((r) => r.action === 'proposed').length;
  if (opened !== VARIANTS) throw new Error(`first run: ${opened} pull requests opened, expected ${VARIANTS}`);
  const setupMs = performance.now() - setupStart;
  gh.clearRequests();
  const noop = await action('no-op run');
  if (!/unchanged<<[^\n]*\n(\d+)/.test(noop.outputs) || Number(/unchanged<<[^\n]*\n(\d+)/.exec(noop.outputs)[1]) !== VARIANTS) {
    throw new Error(`no-op run: expected ${VARIANTS} unchanged`);
  }
  const reads = gh.requests.filter((r) => !r.write).length;
  const writes = gh.writes();
  const ok = reads <= VARIANTS && writes === 0;
  console.log(`Action, ${VARIANTS} variants, nothing new (after a first run of ${(setupMs / 1000).toFixed(1)} s):`);
  console.log(
    `  ${(noop.ms / 1000).toFixed(1)} s, ${gh.requests.length} API requests: ${reads} reads (${(reads / VARIANTS).toFixed(2)} per variant), ${writes} writes`,
  );
  console.log(`  goal: at most 1 read per variant and 0 writes: ${ok ? 'met' : 'NOT MET'}`);
  if (!ok) process.exitCode = 1;
} finally {
  await gh.close();
  rmSync(root, { recursive: true, force: true });
}
