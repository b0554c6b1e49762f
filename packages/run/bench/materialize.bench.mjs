// Benchmark: the run's materialize step (src/jobs/materialize.ts) alone, in process, on the package of
// the CLI's run benchmark (a Kptfile, a package context, 5 Deployments, a ConfigMap):
//   1. 100 first-time gets of one upstream tag under 100 package names (a set fanned out);
//   2. 100 3-way updates (v1 → v2) of downstream copies, each with a local edit.
// Each round uses one step, as one run does: upstream and origin are fetched once and shared, so
// what is timed is the step's own work per package. Medians of KDELTA_BENCH_ROUNDS (default 5).
// Build first: `npx turbo run build --filter=@kdelta/run`, then `node packages/run/bench/materialize.bench.mjs`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPackageUpdateMaterialize } from '../dist/index.js';

const VARIANTS = 100;
const ROUNDS = Number(process.env.KDELTA_BENCH_ROUNDS ?? 5);
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-bench-materialize-')));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'b@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'b@example.com',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();

function write(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

const deployment = (name, image) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  labels:\n    app: ${name}\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: ${name}\n        image: ${image}\n        ports:\n        - containerPort: 8080\n`;

function upstreamFiles(version) {
  const files = {
    'web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\ninfo:\n  description: a web service\n',
    'web/package-context.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: web\n',
    'web/config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  level: info\n  release: "${version}"\n`,
  };
  for (let i = 0; i < 5; i++) files[`web/app-${i}.yaml`] = deployment(`app-${i}`, `registry.example.com/app-${i}:${version}.0`);
  return files;
}

const upstream = join(root, 'upstream');
mkdirSync(upstream);
git(upstream, 'init', '--quiet', '--initial-branch=main');
for (const v of [1, 2]) {
  write(upstream, upstreamFiles(v));
  git(upstream, 'add', '-A');
  git(upstream, 'commit', '--quiet', '-m', `v${v}`);
  git(upstream, 'tag', `web/v${v}`);
}
const input = (pkg, ref, local) => ({
  variant: pkg,
  upstream: { repo: upstream, directory: 'web', ref, commit: git(upstream, 'rev-parse', `${ref}^{commit}`) },
  downstream: { package: pkg, local },
  cacheDir: join(root, 'cache'),
  env,
});
const v1 = Array.from({ length: VARIANTS }, (_, i) => input(`web-${i}`, 'web/v1'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const times = { get: [], update: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const materialize = createPackageUpdateMaterialize();
    // the fetches a run shares, made before the clock starts
    const warm = await materialize(input('warm', 'web/v1'));
    await materialize(input('warm', 'web/v2', warm.files));
    let start = performance.now();
    const got = [];
    for (const i of v1) got.push(await materialize(i));
    times.get.push(performance.now() - start);
    const locals = got.map((g) => new Map(g.files).set('config.yaml', g.files.get('config.yaml').replace('level: info', 'level: debug')));
    start = performance.now();
    for (let i = 0; i < VARIANTS; i++) {
      const r = await materialize(input(`web-${i}`, 'web/v2', locals[i]));
      if (!r.files.get('config.yaml').includes('level: debug')) throw new Error('the local edit was lost');
    }
    times.update.push(performance.now() - start);
  }
  const ms = (xs) =>
    `${(median(xs) / VARIANTS).toFixed(1)} ms per package (median of ${xs.length}: ${(median(xs) / 1000).toFixed(2)} s for ${VARIANTS})`;
  console.log(`first-time get: ${ms(times.get)}`);
  console.log(`3-way update:   ${ms(times.update)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
