import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cli } from './__fixtures__/runner.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-pkg-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

function run(cwd: string, ...args: string[]) {
  return cli(args, cwd, { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') });
}

const deploy = (replicas: number, image = 'nginx:1') =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ${image}\n`;

/** An upstream monorepo with package `blueprints/web` at tags v1 and v2, and a workspace. */
function setup(name: string) {
  const up = join(root, name, 'upstream');
  mkdirSync(join(up, 'blueprints', 'web'), { recursive: true });
  git(up, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(up, 'blueprints', 'web', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n');
  writeFileSync(join(up, 'blueprints', 'web', 'deploy.yaml'), deploy(1));
  writeFileSync(join(up, 'blueprints', 'web', 'README.md'), 'v1 docs\n');
  git(up, 'add', '-A');
  git(up, 'commit', '--quiet', '-m', 'v1');
  git(up, 'tag', 'blueprints/web/v1');
  const v1 = git(up, 'rev-parse', 'HEAD');
  writeFileSync(join(up, 'blueprints', 'web', 'deploy.yaml'), deploy(1, 'nginx:2'));
  writeFileSync(join(up, 'blueprints', 'web', 'README.md'), 'v2 docs\n');
  git(up, 'commit', '--quiet', '-am', 'v2');
  git(up, 'tag', 'blueprints/web/v2');
  const ws = join(root, name, 'ws');
  mkdirSync(ws);
  return { up, ws, v1, v2: git(up, 'rev-parse', 'HEAD') };
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(abs, e.name), r);
      else out[r] = readFileSync(join(abs, e.name), 'utf8');
    }
  };
  walk(dir, '');
  return out;
}

/** A repository with one ConfigMap package per directory, tagged v1 and v2 (the ConfigMaps change). */
function monorepo(name: string, dirs: string[]) {
  const repo = join(root, name, 'repo');
  for (const d of dirs) mkdirSync(join(repo, d), { recursive: true });
  git(repo, 'init', '--quiet', '--initial-branch=main');
  for (const v of ['1', '2']) {
    for (const d of dirs) {
      const base = d.split('/').pop()!;
      writeFileSync(join(repo, d, 'Kptfile'), `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${base}\n`);
      writeFileSync(join(repo, d, 'cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${base}\ndata:\n  v: "${v}"\n`);
    }
    git(repo, 'add', '-A');
    git(repo, 'commit', '--quiet', '-m', `v${v}`);
    git(repo, 'tag', `v${v}`);
  }
  const ws = join(root, name, 'ws');
  mkdirSync(ws);
  return { repo, ws };
}

const refOf = (dir: string) => parse(readFileSync(join(dir, 'Kptfile'), 'utf8')).upstream.git.ref;
// biome-ignore lint/suspicious/noShadowRestrictedNames: a module-level helper, never an object's method
const valueOf = (dir: string) => parse(readFileSync(join(dir, 'cm.yaml'), 'utf8')).data.v;

describe('kdelta pkg get / update / diff', () => {
  it('gets a package at a package-scoped tag and records upstream, lock and merge comments', async () => {
    const { up, ws, v1 } = setup('get');
    const r = await run(ws, 'pkg', 'get', `file://${up}.git/blueprints/web@v1`, 'web');
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toContain(`Fetching file://${up}@v1`);
    const kf = parse(readFileSync(join(ws, 'web', 'Kptfile'), 'utf8'));
    expect(kf.metadata.name).toBe('web');
    expect(kf.upstream).toEqual({
      type: 'git',
      git: { repo: `file://${up}`, directory: '/blueprints/web', ref: 'v1' },
      updateStrategy: 'resource-merge',
    });
    expect(kf.upstreamLock.git.commit).toBe(v1);
    expect(readFileSync(join(ws, 'web', 'deploy.yaml'), 'utf8')).toContain('metadata: # kpt-merge: /web');
  });

  it('updates with local edits kept, persists the strategy, and needs no clean tree', async () => {
    const { up, ws, v2 } = setup('update');
    await run(ws, 'pkg', 'get', `${up}.git/blueprints/web@v1`, 'web');
    const f = join(ws, 'web', 'deploy.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('replicas: 1', 'replicas: 5'));
    const r = await run(ws, 'pkg', 'update', 'web@v2', '--strategy', 'resource-merge');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Updated 1 package(s).');
    const merged = parse(readFileSync(f, 'utf8'));
    expect(merged.spec.replicas).toBe(5); // local edit kept
    expect(merged.spec.template.spec.containers[0].image).toBe('nginx:2'); // upstream change taken
    expect(readFileSync(join(ws, 'web', 'README.md'), 'utf8')).toBe('v2 docs\n'); // non-KRM file, unchanged locally
    const kf = parse(readFileSync(join(ws, 'web', 'Kptfile'), 'utf8'));
    expect(kf.upstream.git.ref).toBe('v2');
    expect(kf.upstreamLock.git.commit).toBe(v2);
    expect(readdirSync(ws)).toEqual(['web']); // no temporary siblings left behind
    expect(r.stderr).not.toContain('conflict');
  });

  it('says which local changes upstream replaced', async () => {
    const { up, ws } = setup('replaced');
    await run(ws, 'pkg', 'get', `${up}.git/blueprints/web@v1`, 'web');
    const f = join(ws, 'web', 'deploy.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('nginx:1', 'nginx:1-patched'));
    const r = await run(ws, 'pkg', 'update', 'web@v2');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('1 conflict between local and upstream changes');
    expect(r.stderr).toMatch(/apps\/Deployment web \[web\/deploy\.yaml\]: .*containers\[name="app"\]\.image.*nginx:1-patched.*nginx:2/);
    expect(parse(readFileSync(f, 'utf8')).spec.template.spec.containers[0].image).toBe('nginx:2');
  });

  it('leaves the package exactly as it was when an update fails', async () => {
    const { up, ws } = setup('atomic');
    await run(ws, 'pkg', 'get', `${up}.git/blueprints/web@v1`, 'web');
    const f = join(ws, 'web', 'deploy.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('replicas: 1', 'replicas: 5'));
    const before = snapshot(join(ws, 'web'));
    const ff = await run(ws, 'pkg', 'update', 'web@v2', '--strategy', 'fast-forward');
    expect(ff.code).toBe(1);
    expect(ff.stderr).toContain('local package files have been modified: [deploy.yaml]');
    expect(snapshot(join(ws, 'web'))).toEqual(before);
    const bad = await run(ws, 'pkg', 'update', 'web@no-such-ref');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown revision or path not in the working tree');
    expect(snapshot(join(ws, 'web'))).toEqual(before);
    expect(readdirSync(ws)).toEqual(['web']);
  });

  it('force-delete-replace drops local edits', async () => {
    const { up, ws } = setup('replace');
    await run(ws, 'pkg', 'get', `${up}.git/blueprints/web@v1`, 'web');
    writeFileSync(join(ws, 'web', 'local.txt'), 'mine');
    const r = await run(ws, 'pkg', 'update', 'web@v2', '--strategy', 'force-delete-replace');
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(ws, 'web')).sort()).toEqual(['Kptfile', 'README.md', 'deploy.yaml']);
    expect(parse(readFileSync(join(ws, 'web', 'Kptfile'), 'utf8')).upstream.updateStrategy).toBe('force-delete-replace');
  });

  it('diff shows what an update would change, resource by resource, and changes nothing', async () => {
    const { up, ws } = setup('diff');
    await run(ws, 'pkg', 'get', `${up}.git/blueprints/web@v1`, 'web');
    const before = snapshot(join(ws, 'web'));
    const r = await run(ws, 'pkg', 'diff', 'web@v2');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('~ apps/Deployment web');
    expect(r.stdout).toContain('.spec.template.spec.containers[name="app"].image: "nginx:1" → "nginx:2"');
    expect(r.stdout).toContain('~ README.md');
    expect(r.stdout).toContain('.upstream.git.ref: "v1" → "v2"');
    expect(snapshot(join(ws, 'web'))).toEqual(before);
    expect(readdirSync(ws)).toEqual(['web']);
    const same = await run(ws, 'pkg', 'diff', 'web');
    expect(same.stdout).toBe('No changes.\n');
  });

  it('diff lists conflicts: local changes upstream would override', async () => {
    const { up, ws } = setup('conflict');
    await run(ws, 'pkg', 'get', `${up}.git/blueprints/web@v1`, 'web');
    const f = join(ws, 'web', 'deploy.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('nginx:1', 'nginx:local'));
    const r = await run(ws, 'pkg', 'diff', 'web@v2');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '! conflict: apps/Deployment web [web/deploy.yaml]: local changed .spec.template.spec.containers[name="app"].image nginx:1→nginx:local, upstream nginx:1→nginx:2; upstream wins\n',
    );
    expect(r.stdout).toContain('"nginx:local" → "nginx:2"');
  });

  it('records a relative local repository as an absolute path, so updates work from anywhere', async () => {
    const { up, ws } = setup('relative');
    const r = await run(join(ws, '..'), 'pkg', 'get', 'upstream.git/blueprints/web@v1', 'ws/web');
    expect(r.code, r.stderr).toBe(0);
    expect(parse(readFileSync(join(ws, 'web', 'Kptfile'), 'utf8')).upstream.git.repo).toBe(up);
    const u = await run(ws, 'pkg', 'update', 'web@v2');
    expect(u.code, u.stderr).toBe(0);
  });

  it('updates remote subpackages depth first, each level in reverse path order, as kpt does', async () => {
    const { repo, ws } = monorepo('order', ['web', 'a', 'b', 'a/x']);
    for (const [dir, dest] of [
      ['web', 'web'],
      ['a', 'web/a'],
      ['b', 'web/b'],
      ['a/x', 'web/a/x2'],
    ] as const) {
      expect((await run(ws, 'pkg', 'get', `${repo}.git/${dir}@v1`, dest)).code).toBe(0);
    }
    for (const dest of ['web/a', 'web/b', 'web/a/x2']) {
      const kf = join(ws, dest, 'Kptfile');
      writeFileSync(kf, readFileSync(kf, 'utf8').replace(/ref: v1\n/, 'ref: v2\n'));
    }
    const r = await run(ws, 'pkg', 'update', 'web');
    expect(r.code, r.stderr).toBe(0);
    const order = r.stderr.split('\n').filter((l) => l.startsWith('Package "'));
    expect(order).toEqual(['Package "web":', 'Package "web/b":', 'Package "web/a":', 'Package "web/a/x2":']);
    expect(['web/a', 'web/b', 'web/a/x2'].map((d) => valueOf(join(ws, d)))).toEqual(['2', '2', '2']);
  });

  it('a new ref moves the remote packages inside from the same repository, directory and ref, at any depth', async () => {
    const { repo, ws } = monorepo('follow', ['bp/web', 'bp/web-extra']);
    const gets = [
      ['bp/web', 'web'],
      ['bp/web', 'web/copy'],
      ['bp/web', 'web/copy/deeper'],
      ['bp/web-extra', 'web/extra'],
    ] as const;
    for (const [dir, dest] of gets) expect((await run(ws, 'pkg', 'get', `${repo}.git/${dir}@v1`, dest)).code).toBe(0);
    expect((await run(ws, 'pkg', 'get', `${repo}.git/bp/web@v2`, 'web/pinned')).code).toBe(0);
    const moved = await run(ws, 'pkg', 'update', 'web@v2');
    expect(moved.code, moved.stderr).toBe(0);
    for (const d of ['web', 'web/copy', 'web/copy/deeper']) {
      expect([d, refOf(join(ws, d)), valueOf(join(ws, d))]).toEqual([d, 'v2', '2']);
    }
    // another directory of the same repository: kept at its ref. (kpt 1.0.0-beta.56 compares the
    // directories as strings, so /bp/web-extra counts as "below" /bp/web and moves; kdelta
    // compares whole path segments, as kpt's own description of the rule says.)
    expect([refOf(join(ws, 'web/extra')), valueOf(join(ws, 'web/extra'))]).toEqual(['v1', '1']);
    // a package at another ref than the updated one had: kept at its ref
    expect(refOf(join(ws, 'web/pinned'))).toBe('v2');
  });

  it('refuses, changing nothing, when a nested remote package is fetched upstream but was never fetched at origin', async () => {
    const { repo, ws } = monorepo('no-origin', ['lib']);
    const up = join(root, 'no-origin', 'up');
    mkdirSync(join(up, 'sub'), { recursive: true });
    git(up, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(up, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: up\n');
    const sub = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\nupstream:\n  type: git\n  git:\n    repo: ${repo}\n    directory: /lib\n    ref: v1\n  updateStrategy: resource-merge\n`;
    writeFileSync(join(up, 'sub', 'Kptfile'), sub);
    git(up, 'add', '-A');
    git(up, 'commit', '--quiet', '-m', 'unfetched sub');
    // the subpackage's Kptfile (package content) names a repository on this machine: allowed here
    expect((await run(ws, 'pkg', 'get', '--allow-local-upstreams', `${up}.git/@main`, 'app')).code).toBe(0);
    // upstream fetches its subpackage (at v2)
    const lock = `upstreamLock:\n  type: git\n  git:\n    repo: ${repo}\n    directory: /lib\n    ref: v1\n    commit: ${git(repo, 'rev-parse', 'v2')}\n`;
    writeFileSync(join(up, 'sub', 'Kptfile'), sub + lock);
    writeFileSync(join(up, 'sub', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lib\ndata:\n  v: "2"\n');
    git(up, 'add', '-A');
    git(up, 'commit', '--quiet', '-m', 'fetched sub');
    const before = snapshot(join(ws, 'app'));
    const r = await run(ws, 'pkg', 'update', '--allow-local-upstreams', 'app');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no origin available for package "sub"');
    expect(snapshot(join(ws, 'app'))).toEqual(before);
  });

  it('matches one resource shipped in two files file by file, as kpt does, and deletes only the file both sides deleted', async () => {
    const up = join(root, 'two-files', 'upstream');
    const pkg = join(up, 'pkg');
    mkdirSync(pkg, { recursive: true });
    git(up, 'init', '--quiet', '--initial-branch=main');
    const ns = (labels = '') => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: o2ims\n${labels}`;
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: o2ims\ndata:\n  k: v1\n';
    const release = (tag: string, files: Record<string, string | undefined>) => {
      for (const [name, text] of Object.entries(files)) {
        if (text === undefined) rmSync(join(pkg, name));
        else writeFileSync(join(pkg, name), text);
      }
      git(up, 'add', '-A');
      git(up, 'commit', '--quiet', '-m', tag);
      git(up, 'tag', tag);
    };
    release('v1', {
      Kptfile: 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n',
      'a.yaml': ns(),
      'b.yaml': `${ns()}---\n${cm}`,
    });
    const labelled = ns('  labels:\n    from: upstream\n');
    release('v2', { 'a.yaml': labelled, 'b.yaml': `${labelled}---\n${cm}` });
    release('v3', { 'a.yaml': undefined });
    const ws = join(root, 'two-files', 'ws');
    mkdirSync(ws);
    expect((await run(ws, 'pkg', 'get', `${up}.git/pkg@v1`, 'p')).code).toBe(0);
    const a = join(ws, 'p', 'a.yaml');
    const b = join(ws, 'p', 'b.yaml');
    writeFileSync(b, readFileSync(b, 'utf8').replace('k: v1', 'k: local'));

    // each copy is merged with the copies of its own file, as kpt merges them
    const v2 = await run(ws, 'pkg', 'update', 'p@v2');
    expect(v2.code, v2.stderr).toBe(0);
    expect(parse(readFileSync(a, 'utf8')).metadata.labels).toEqual({ from: 'upstream' });
    const [nsB, cmB] = readFileSync(b, 'utf8')
      .split('\n---\n')
      .map((d) => parse(d));
    expect(nsB.metadata.labels).toEqual({ from: 'upstream' });
    expect(cmB.data).toEqual({ k: 'local' });

    // upstream deletes a.yaml and so does local: b.yaml, which neither touched, stays whole
    const before = readFileSync(b, 'utf8');
    rmSync(a);
    const v3 = await run(ws, 'pkg', 'update', 'p@v3');
    expect(v3.code, v3.stderr).toBe(0);
    expect(readdirSync(join(ws, 'p')).sort()).toEqual(['Kptfile', 'b.yaml']);
    expect(readFileSync(b, 'utf8')).toBe(before);
  });

  it('has --help on every command and rejects bad arguments before doing anything', async () => {
    for (const c of ['get', 'update', 'diff']) {
      const h = await run(root, 'pkg', c, '--help');
      expect(h.code).toBe(0);
      expect(h.stdout).toContain(`Usage: kdelta pkg ${c}`);
    }
    const noArgs = await run(root, 'pkg', 'get');
    expect(noArgs).toMatchObject({ code: 1 });
    expect(noArgs.stderr).toContain('requires at least 1 arg(s)');
    const badStrategy = await run(root, 'pkg', 'update', '.', '--strategy', 'copy-all');
    expect(badStrategy.stderr).toContain('unrecognized update strategy "copy-all"');
    const dash = await run(root, 'pkg', 'get', '--upload-pack=x.git/a');
    expect(dash.code).toBe(1);
  });
});
