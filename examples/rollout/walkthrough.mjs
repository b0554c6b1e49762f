// A release rolled out in waves, end to end, in a temporary directory: an upstream repository
// whose package web is released as web/v1.0.0 and then web/v1.1.0, three cluster repositories (a
// canary, two in production) and a control repository whose UpdatePolicy orders them into the
// waves canary → prod, the next wave waiting until the canary has merged the release and its
// health status `flux` is green. The local forge stands in for GitHub: a person merges a proposal
// by merging its branch, and `kdelta status set` posts what Flux's notification-controller posts
// on GitHub.
//   node examples/rollout/walkthrough.mjs [--keep]    (after `pnpm build`)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', '..', 'packages', 'cli', 'bin', 'kdelta.js');
const keep = process.argv.includes('--keep');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-rollout-')));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Demo',
  GIT_AUTHOR_EMAIL: 'demo@example.com',
  GIT_COMMITTER_NAME: 'Demo',
  GIT_COMMITTER_EMAIL: 'demo@example.com',
  KDELTA_CACHE_DIR: join(root, 'cache'),
};
/** The clusters and their waves: the Repository label kdelta.dev/wave. */
const clusters = { canary: 'canary', 'prod-east': 'prod', 'prod-west': 'prod' };
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const say = (text) => process.stdout.write(`${text}\n`);
const step = (text) => say(`\n== ${text}`);

function kdelta(...args) {
  say(`$ kdelta ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: join(root, 'control'), env, encoding: 'utf8' });
  process.stdout.write(r.stderr.replace(/^/gm, '  ').replace(/ {2}$/, ''));
  process.stdout.write(r.stdout);
  if (r.status !== 0) throw new Error(`kdelta ${args.join(' ')} exited ${r.status}`);
}

/** A cluster's team merges kdelta's proposal: its branch into main, as a merge button would. */
function merge(cluster) {
  const work = join(root, 'work', cluster);
  rmSync(work, { recursive: true, force: true });
  git(root, 'clone', '--quiet', join(root, 'clusters', `${cluster}.git`), work);
  git(work, 'merge', '--quiet', '--no-ff', '-m', `Merge kdelta/web-${cluster}`, `origin/kdelta/web-${cluster}`);
  git(work, 'push', '--quiet', 'origin', 'main');
  rmSync(work, { recursive: true, force: true });
  say(`${cluster}: merged kdelta/web-${cluster} into main`);
}

/** Release `version` of the upstream package web: its deployment's image moves to that tag. */
function release(upstream, version) {
  mkdirSync(join(upstream, 'web'), { recursive: true });
  writeFileSync(
    join(upstream, 'web', 'Kptfile'),
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\ninfo:\n  description: the web front end\n',
  );
  writeFileSync(
    join(upstream, 'web', 'deployment.yaml'),
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: web\n          image: registry.example/web:${version}\n`,
  );
  git(upstream, 'add', '--all');
  git(upstream, 'commit', '--quiet', '-m', `web ${version}`);
  git(upstream, 'tag', `web/${version}`);
}

try {
  step('An upstream repository, three clusters in two waves, a control repository with an UpdatePolicy');
  const upstream = join(root, 'upstream');
  mkdirSync(upstream);
  git(upstream, 'init', '--quiet');
  release(upstream, 'v1.0.0');
  for (const cluster of Object.keys(clusters)) {
    const seed = join(root, 'seed', cluster);
    mkdirSync(seed, { recursive: true });
    git(seed, 'init', '--quiet');
    writeFileSync(join(seed, 'README.md'), `# ${cluster}\n`);
    git(seed, 'add', '--all');
    git(seed, 'commit', '--quiet', '-m', 'init');
    git(root, 'clone', '--quiet', '--bare', seed, join(root, 'clusters', `${cluster}.git`));
  }
  rmSync(join(root, 'seed'), { recursive: true, force: true });
  const control = join(root, 'control');
  mkdirSync(join(control, '.kdelta'), { recursive: true });
  const repository = (name, repo, labels = '') =>
    `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n  namespace: default${labels}\nspec:\n  type: git\n  git:\n    repo: ${repo}\n    branch: main\n`;
  writeFileSync(
    join(control, '.kdelta', 'repositories.yaml'),
    [
      repository('catalog', '../upstream'),
      ...Object.entries(clusters).map(([c, wave]) => repository(c, `../clusters/${c}.git`, `\n  labels:\n    kdelta.dev/wave: ${wave}`)),
    ].join('---\n'),
  );
  writeFileSync(
    join(control, '.kdelta', 'web.yaml'),
    Object.keys(clusters)
      .map(
        (c) =>
          `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: web-${c}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: web\n  downstream:\n    repo: ${c}\n    package: web\n`,
      )
      .join('---\n'),
  );
  writeFileSync(
    join(control, '.kdelta', 'policy.yaml'),
    'apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  rollout:\n    waves: [canary, prod]\n    health:\n      name: flux\n',
  );
  writeFileSync(join(control, '.gitignore'), '.kdelta/proposals/\n');
  git(control, 'init', '--quiet');
  git(control, 'add', '--all');
  git(control, 'commit', '--quiet', '-m', 'control resources');
  say(`in ${root}: upstream (tag web/v1.0.0), clusters/{${Object.keys(clusters).join(',')}}.git, control/.kdelta`);
  say('waves: canary (canary), prod (prod-east, prod-west); the next wave waits for status flux on the one before');

  step('web/v1.0.0 goes to the canary first');
  kdelta('run');

  step('The canary merges; Flux has not reported yet');
  merge('canary');
  kdelta('run');

  step('Flux reports the canary healthy: the prod wave is proposed');
  kdelta('status', 'set', 'canary', 'flux', 'success', '--description', 'Kustomization reconciled');
  kdelta('run');
  merge('prod-east');
  merge('prod-west');
  kdelta('run');

  step('web/v1.1.0 is released; the canary takes it and turns unhealthy');
  release(upstream, 'v1.1.0');
  kdelta('run');
  merge('canary');
  kdelta('status', 'set', 'canary', 'flux', 'failure', '--description', 'Deployment web: ImagePullBackOff');
  kdelta('run');
  kdelta('proposals');

  step('The canary is fixed and healthy again: the rollout goes on to prod');
  kdelta('status', 'set', 'canary', 'flux', 'success', '--description', 'Kustomization reconciled');
  kdelta('run');
} finally {
  if (keep) say(`\n(kept: ${root})`);
  else rmSync(root, { recursive: true, force: true });
}
