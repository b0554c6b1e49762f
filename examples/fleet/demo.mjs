// The main job, end to end, in a temporary directory: an upstream repository with tags v1 and v2
// (examples/fleet/upstream), three downstream cluster repositories and a control repository
// (examples/fleet/control). kdelta fans the package out at v1, the proposals are merged, the
// clusters edit their copies, the control moves to v2, and kdelta proposes the update: every local
// edit kept, every field both sides changed reported. Last, the next release is previewed before it
// is tagged (`kdelta preview`): what it would propose to every cluster, nothing written.
//   node examples/fleet/demo.mjs [--keep]    (after `pnpm build`; `pnpm demo` does both)
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', '..', 'packages', 'cli', 'bin', 'kdelta.js');
const keep = process.argv.includes('--keep');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-demo-')));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Demo',
  GIT_AUTHOR_EMAIL: 'demo@example.com',
  GIT_COMMITTER_NAME: 'Demo',
  GIT_COMMITTER_EMAIL: 'demo@example.com',
  KDELTA_CACHE_DIR: join(root, 'cache'),
};
const clusters = ['cluster-east', 'cluster-west', 'cluster-north'];
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'advice.detachedHead=false', ...args], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
const say = (text) => process.stdout.write(`${text}\n`);
const step = (text) => say(process.stdout.isTTY ? `\n\x1b[1m== ${text}\x1b[0m` : `\n== ${text}`);

function kdelta(...args) {
  say(`$ kdelta ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: join(root, 'control'), env, encoding: 'utf8' });
  process.stdout.write(r.stderr.replace(/^/gm, '  ').replace(/ {2}$/, ''));
  process.stdout.write(r.stdout);
  if (r.status !== 0) throw new Error(`kdelta ${args.join(' ')} exited ${r.status}`);
}

/** A clone of a cluster to edit as its team would; pushed and removed by `done`. */
function edit(cluster, fn, message) {
  const work = join(root, 'work', cluster);
  rmSync(work, { recursive: true, force: true });
  git(root, 'clone', '--quiet', join(root, 'clusters', `${cluster}.git`), work);
  fn(work);
  git(work, 'add', '--all');
  if (git(work, 'status', '--porcelain') !== '') git(work, 'commit', '--quiet', '-m', message);
  git(work, 'push', '--quiet', 'origin', 'main');
  rmSync(work, { recursive: true, force: true });
}

function replaceIn(file, from, to) {
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file}: "${from}" not found`);
  writeFileSync(file, text.replace(from, to));
}

try {
  step('An upstream repository with tags v1 and v2, three clusters, a control repository');
  const upstream = join(root, 'upstream');
  mkdirSync(upstream);
  git(upstream, 'init', '--quiet');
  for (const version of ['v1', 'v2']) {
    rmSync(join(upstream, 'web'), { recursive: true, force: true });
    cpSync(join(here, 'upstream', version), upstream, { recursive: true });
    git(upstream, 'add', '--all');
    git(upstream, 'commit', '--quiet', '-m', `web ${version}`);
    git(upstream, 'tag', version);
  }
  for (const c of clusters) {
    const seed = join(root, 'seed', c);
    mkdirSync(seed, { recursive: true });
    git(seed, 'init', '--quiet');
    writeFileSync(join(seed, 'README.md'), `# ${c}\n`);
    git(seed, 'add', '--all');
    git(seed, 'commit', '--quiet', '-m', 'init');
    git(root, 'clone', '--quiet', '--bare', seed, join(root, 'clusters', `${c}.git`));
  }
  rmSync(join(root, 'seed'), { recursive: true, force: true });
  const control = join(root, 'control');
  mkdirSync(control);
  cpSync(join(here, 'control'), join(control, '.kdelta'), { recursive: true });
  writeFileSync(join(control, '.gitignore'), '.kdelta/proposals/\n');
  git(control, 'init', '--quiet');
  git(control, 'add', '--all');
  git(control, 'commit', '--quiet', '-m', 'control resources');
  say(`in ${root}: upstream (tags ${git(upstream, 'tag').split('\n').join(', ')}), clusters/{${clusters.join(',')}}.git, control/.kdelta`);

  step('Fan out web at v1: one proposal per cluster');
  kdelta('run');

  step('The clusters merge their proposals');
  for (const c of clusters) {
    edit(c, (w) => git(w, 'merge', '--quiet', '--ff-only', `origin/kdelta/web-${c}-web`), 'merge');
    say(`${c}: merged kdelta/web-${c}-web into main`);
  }
  kdelta('run');

  step("Local edits on the clusters' main branches");
  edit(
    'cluster-east',
    (w) => {
      replaceIn(join(w, 'web', 'deployment.yaml'), 'replicas: 2', 'replicas: 6');
      replaceIn(join(w, 'web', 'deployment.yaml'), '\n  labels:\n    app: web\n', '\n  labels:\n    app: web\n    team: payments\n');
    },
    'east: more replicas for the sale, team label',
  );
  say('cluster-east: replicas 2 → 6, label team: payments');
  edit(
    'cluster-west',
    (w) =>
      replaceIn(
        join(w, 'web', 'deployment.yaml'),
        '          value: json\n',
        '          value: json\n        - name: LOG_LEVEL\n          value: debug\n',
      ),
    'west: debug logging',
  );
  say('cluster-west: env LOG_LEVEL=debug added');

  step('The control repository moves web to v2');
  replaceIn(join(control, '.kdelta', 'web.yaml'), 'revision: v1', 'revision: v2');
  git(control, 'commit', '--quiet', '-am', 'web: v2');
  say('.kdelta/web.yaml: revision v1 → v2');
  kdelta('run');

  step('The update proposals, with their conflict reports');
  for (const c of clusters) {
    const file = join(control, '.kdelta', 'proposals', c, `web-${c}-web.md`);
    const body = readFileSync(file, 'utf8').split('\n---\n')[1] ?? '';
    say(`\n--- .kdelta/proposals/${c}/web-${c}-web.md`);
    say(
      body
        .split('\n')
        .filter((l) => !l.startsWith('<!-- kdelta:') && !l.startsWith('_Written by kdelta'))
        .join('\n')
        .trim(),
    );
  }

  step('cluster-east: what the update proposal changes on its edited main');
  const east = join(root, 'work', 'east');
  git(root, 'clone', '--quiet', join(root, 'clusters', 'cluster-east.git'), east);
  say(git(east, 'diff', 'origin/main', 'origin/kdelta/web-cluster-east-web', '--', 'web/deployment.yaml'));
  const kept = (cluster, file, pattern) => pattern.test(git(east, 'show', `${cluster}:${file}`));
  git(east, 'fetch', '--quiet', join(root, 'clusters', 'cluster-west.git'), 'kdelta/web-cluster-west-web:west-proposal');
  say('');
  say(
    `cluster-east keeps its label team: payments: ${kept('origin/kdelta/web-cluster-east-web', 'web/deployment.yaml', /team: payments/) ? 'yes' : 'NO'}`,
  );
  say(`cluster-west keeps its LOG_LEVEL=debug: ${kept('west-proposal', 'web/deployment.yaml', /LOG_LEVEL/) ? 'yes' : 'NO'}`);
  say('cluster-east replicas 6 against upstream 3: the conflict its proposal reports (upstream wins; the reviewer decides)');

  step('The next release, previewed before it is tagged: what it would propose to every cluster');
  git(upstream, 'checkout', '--quiet', '-b', 'next');
  replaceIn(join(upstream, 'web', 'deployment.yaml'), 'replicas: 3', 'replicas: 4');
  replaceIn(
    join(upstream, 'web', 'deployment.yaml'),
    '          value: json\n',
    '          value: json\n        - name: LOG_LEVEL\n          value: warn\n',
  );
  git(upstream, 'commit', '--quiet', '-am', 'web: 4 replicas, LOG_LEVEL warn');
  git(upstream, 'checkout', '--quiet', 'main');
  say('upstream branch next (not a release yet): replicas 3 → 4, env LOG_LEVEL=warn');
  const refs = clusters.map((c) => git(root, 'ls-remote', join(root, 'clusters', `${c}.git`))).join('\n');
  kdelta('preview', '--upstream', 'catalog', '--upstream-ref', 'next');
  const after = clusters.map((c) => git(root, 'ls-remote', join(root, 'clusters', `${c}.git`))).join('\n');
  say(`every cluster's branches as they were: ${after === refs ? 'yes' : 'NO'} (a preview writes nothing)`);
} finally {
  if (keep) say(`\n(kept: ${root})`);
  else rmSync(root, { recursive: true, force: true });
}
