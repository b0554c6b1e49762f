import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceTrust, trustNamed } from '@kdelta/git-source';
import { PackageTree } from '@kdelta/kptfile-model';
import { UpdateError, createFetchMemo, diffPackage, getPackage, getPackageTree, updatePackage, updatePackageTree } from './index.js';

const roots: string[] = [];
afterEach(() => {
  for (const d of roots.splice(0)) rmSync(d, { recursive: true, force: true });
});
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
const deployment = (replicas: number, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ${image}\n`;

async function fixture() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-pu-')));
  roots.push(root);
  const repo = join(root, 'repo');
  mkdirSync(join(repo, 'pkg'), { recursive: true });
  git(repo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(repo, 'pkg', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n');
  writeFileSync(join(repo, 'pkg', 'web.yaml'), deployment(1, 'app:1'));
  git(repo, 'add', '-A');
  git(repo, 'commit', '--quiet', '-m', 'v1');
  git(repo, 'tag', 'v1');
  writeFileSync(join(repo, 'pkg', 'web.yaml'), deployment(2, 'app:2'));
  git(repo, 'commit', '--quiet', '-am', 'v2');
  git(repo, 'tag', 'v2');
  const env = { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') };
  const dir = join(root, 'web');
  const lines: string[] = [];
  await getPackage({ repo, directory: '/pkg', ref: 'v1', destination: dir, cwd: root, env, progress: (e) => lines.push(e.message) });
  return { root, repo, dir, env, lines };
}

describe('updatePackage', () => {
  it('returns what happened as data, prints nothing, and records the new lock', async () => {
    const { root, repo, dir, env } = await fixture();
    // a local change upstream also changes: upstream wins, and it is reported
    writeFileSync(join(dir, 'web.yaml'), readFileSync(join(dir, 'web.yaml'), 'utf8').replace('replicas: 1', 'replicas: 5'));
    const lines: string[] = [];
    const result = await updatePackage({ dir, ref: 'v2', cwd: root, displayRoot: root, env, progress: (e) => lines.push(e.message) });
    expect(lines).toContain('Updating package "web" with strategy "resource-merge".');
    expect(result.packages).toEqual([{ path: 'web', action: 'updated', strategy: 'resource-merge' }]);
    expect(result.lock?.git?.commit).toBe(git(repo, 'rev-parse', 'v2'));
    expect(result.conflicts.map((c) => [c.package, c.path, c.winner])).toEqual([['web', '.spec.replicas', 'upstream']]);
    expect(result.resources.map((r) => [r.resource, r.action, r.changed])).toEqual([['apps/Deployment web', 'merged', true]]);
    expect(result.files.filter((f) => f.status !== 'kept').map((f) => f.path)).toEqual(['Kptfile', 'web.yaml']);
    expect(readFileSync(join(dir, 'web.yaml'), 'utf8')).toContain('image: app:2');
  });

  it('keeps a field pinned with # kdelta:local, reports it as a decision, and keeps the pin', async () => {
    const { root, dir, env } = await fixture();
    const pinned = readFileSync(join(dir, 'web.yaml'), 'utf8').replace('replicas: 1', 'replicas: 5 # kdelta:local');
    writeFileSync(join(dir, 'web.yaml'), pinned);
    const result = await updatePackage({ dir, ref: 'v2', cwd: root, displayRoot: root, env });
    expect(result.conflicts).toEqual([]);
    expect(result.decisions.map((d) => [d.package, d.file, d.path, d.rule])).toEqual([
      ['web', 'web.yaml', '.spec.replicas', 'pinned-local'],
    ]);
    const text = readFileSync(join(dir, 'web.yaml'), 'utf8');
    expect(text).toContain('replicas: 5 # kdelta:local');
    expect(text).toContain('image: app:2');
  });

  it('leaves the package exactly as it was when the update fails', async () => {
    const { root, dir, env } = await fixture();
    writeFileSync(join(dir, 'web.yaml'), readFileSync(join(dir, 'web.yaml'), 'utf8').replace('replicas: 1', 'replicas: 5'));
    const before = readFileSync(join(dir, 'web.yaml'), 'utf8');
    const kptfile = readFileSync(join(dir, 'Kptfile'), 'utf8');
    await expect(updatePackage({ dir, ref: 'v2', strategy: 'fast-forward', cwd: root, env })).rejects.toThrow(
      'local package files have been modified: [web.yaml]',
    );
    expect(readFileSync(join(dir, 'web.yaml'), 'utf8')).toBe(before);
    expect(readFileSync(join(dir, 'Kptfile'), 'utf8')).toBe(kptfile);
  });

  it('updates sharing a fetch memo fetch upstream and origin once, each merging its own copy', async () => {
    const { root, repo, dir, env } = await fixture();
    const other = join(root, 'web-2');
    cpSync(dir, other, { recursive: true });
    const third = join(root, 'web-3');
    cpSync(dir, third, { recursive: true });
    writeFileSync(join(dir, 'web.yaml'), readFileSync(join(dir, 'web.yaml'), 'utf8').replace('spec:\n', 'spec:\n  paused: true\n'));
    const fetches = createFetchMemo();
    const first = await updatePackage({ dir, ref: 'v2', cwd: root, env, fetches });
    // the upstream is gone, and the cache with it: only the memo can serve the second update
    renameSync(repo, join(root, 'moved'));
    rmSync(join(root, 'cache'), { recursive: true, force: true });
    // from another working directory, as each update of a run has its own
    const second = await updatePackage({ dir: other, ref: 'v2', cwd: other, env, fetches });
    expect(second.lock).toEqual(first.lock);
    // the first package's local edit stays its own; the second merged untouched upstream trees
    expect(readFileSync(join(dir, 'web.yaml'), 'utf8')).toContain('paused: true');
    expect(readFileSync(join(dir, 'web.yaml'), 'utf8')).toContain('image: app:2');
    expect(readFileSync(join(other, 'web.yaml'), 'utf8')).not.toContain('paused');
    expect(readFileSync(join(other, 'web.yaml'), 'utf8')).toContain('image: app:2');
    expect(readFileSync(join(other, 'web.yaml'), 'utf8')).toContain('replicas: 2');
    // without the memo the same update has to reach the repository, and fails
    await expect(updatePackage({ dir: third, ref: 'v2', cwd: root, env })).rejects.toThrow();
    await expect(updatePackage({ dir: third, ref: 'v2', cwd: root, env, fetches: createFetchMemo() })).rejects.toThrow();
  });

  it('diffPackage shows the changes and writes nothing', async () => {
    const { root, dir, env } = await fixture();
    const before = readFileSync(join(dir, 'web.yaml'), 'utf8');
    const { changes } = await diffPackage({ dir, ref: 'v2', cwd: root, env });
    const web = changes.find((c) => c.subject === 'apps/Deployment web');
    expect(web?.fields).toContain('.spec.replicas: 1 → 2');
    expect(readFileSync(join(dir, 'web.yaml'), 'utf8')).toBe(before);
  });
});

describe('getPackage', () => {
  it('refuses a destination that exists, writing nothing, and creates missing parents', async () => {
    const { root, repo, env } = await fixture();
    const taken = join(root, 'taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'mine.txt'), 'mine\n');
    const refused = getPackage({ repo, directory: '/pkg', ref: 'v1', destination: taken, cwd: root, env });
    await expect(refused).rejects.toBeInstanceOf(UpdateError);
    await expect(refused).rejects.toMatchObject({ code: 'destination-exists' });
    expect(readFileSync(join(taken, 'mine.txt'), 'utf8')).toBe('mine\n');
    const deep = join(root, 'a', 'b', 'web');
    const got = await getPackage({ repo, directory: '/pkg', ref: 'v1', destination: deep, cwd: root, env });
    expect(got.destination).toBe(deep);
    expect(readFileSync(join(deep, 'Kptfile'), 'utf8')).toContain('name: web');
  });
});

describe('in memory', () => {
  it('getPackageTree and updatePackageTree give what getPackage and updatePackage write, and write nothing', async () => {
    const { root, repo, dir, env } = await fixture();
    const got = await getPackageTree({ repo, directory: '/pkg', ref: 'v1', name: 'web', cwd: root, env });
    expect(got.commit).toBe(git(repo, 'rev-parse', 'v1'));
    expect(got.tree.allFiles()).toEqual(PackageTree.read(dir)!.allFiles());

    const onDisk = readFileSync(join(dir, 'web.yaml'), 'utf8');
    const local = PackageTree.read(dir)!;
    local.write('web.yaml', local.text('web.yaml')!.replace('replicas: 1', 'replicas: 5'));
    local.write('run.sh', '#!/bin/sh\n', { executable: true });
    local.symlink('docs', '../elsewhere');
    local.source = 'web';
    const given = local.clone();
    const result = await updatePackageTree({ tree: local, name: 'web', ref: 'v2', cwd: root, env });
    expect(local.changesFrom(given)).toEqual({ written: [], links: [], deleted: [], created: [] });
    expect(readFileSync(join(dir, 'web.yaml'), 'utf8')).toBe(onDisk);
    expect(result.lock?.git?.commit).toBe(git(repo, 'rev-parse', 'v2'));
    expect(result.conflicts.map((c) => [c.package, c.path, c.winner])).toEqual([['web', '.spec.replicas', 'upstream']]);
    expect(result.after.isExecutable('run.sh')).toBe(true);
    expect(result.after.linkTarget('docs')).toBe('../elsewhere');

    // the same update on disk
    writeFileSync(join(dir, 'web.yaml'), onDisk.replace('replicas: 1', 'replicas: 5'));
    const written = await updatePackage({ dir, ref: 'v2', cwd: root, displayRoot: root, env, dryRun: true });
    expect(result.after.allFiles()).toEqual(new Map([...written.after.allFiles(), ['run.sh', '#!/bin/sh\n']]));
    expect(result.packages).toEqual(written.packages);
    expect(result.resources).toEqual(written.resources);
  });

  it('updatePackageTree names a file of the tree by its source', async () => {
    const { root, dir, env } = await fixture();
    const local = PackageTree.read(dir)!;
    local.write('Kptfile', `${local.text('Kptfile')!}info:\n  sites: https://example.com\n`);
    local.source = 'clusters/web';
    await expect(updatePackageTree({ tree: local, name: 'web', ref: 'v2', cwd: root, env })).rejects.toThrow(
      'clusters/web/Kptfile: info.sites: unknown field',
    );
  });
});

describe('strict inputs', () => {
  it('an unknown Kptfile field is refused, naming the file and the field, and nothing is written', async () => {
    const { root, dir, env } = await fixture();
    const kptfile = `${readFileSync(join(dir, 'Kptfile'), 'utf8')}info:\n  sites: https://example.com\n`;
    writeFileSync(join(dir, 'Kptfile'), kptfile);
    await expect(updatePackage({ dir, ref: 'v2', cwd: root, env })).rejects.toThrow(`${join(dir, 'Kptfile')}: info.sites: unknown field`);
    expect(readFileSync(join(dir, 'Kptfile'), 'utf8')).toBe(kptfile);
  });
});

describe('repositories named by package content', () => {
  it('a nested Kptfile naming a repository on this machine is refused, naming it; a caller’s trust covers no root Kptfile', async () => {
    const { root, repo, dir, env } = await fixture();
    const secret = join(root, 'secret');
    mkdirSync(join(secret, 'leak'), { recursive: true });
    git(secret, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(secret, 'leak', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: leak\n');
    git(secret, 'add', '-A');
    git(secret, 'commit', '--quiet', '-m', 'secret');
    const sub = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\nupstream:\n  type: git\n  git:\n    repo: ${secret}\n    directory: /leak\n    ref: main\n`;
    mkdirSync(join(repo, 'pkg', 'sub'));
    writeFileSync(join(repo, 'pkg', 'sub', 'Kptfile'), sub);
    git(repo, 'add', '-A');
    git(repo, 'commit', '--quiet', '-m', 'v3');
    git(repo, 'tag', 'v3');
    const refusal = await getPackage({ repo, directory: '/pkg', ref: 'v3', destination: join(root, 'got'), cwd: root, env }).catch(
      (e) => e,
    );
    expect(refusal).toMatchObject({ code: 'refused-local' });
    expect(refusal.message).toMatch(/^upstream \(.*\/pkg@v3\): sub\/Kptfile: upstream repository ".*secret" is on this machine/);
    const allowed = await getPackage({
      repo,
      directory: '/pkg',
      ref: 'v3',
      destination: join(root, 'got'),
      cwd: root,
      env,
      allowLocalUpstreams: true,
    });
    expect(allowed.nested).toEqual(['sub']);

    // the package's own upstream is the user's; a caller that passes its own trust (a run over a
    // downstream's package) names every repository it trusts, and this one is not among them
    const trust = sourceTrust({ env: {} });
    await expect(updatePackage({ dir, ref: 'v2', cwd: root, env, trust })).rejects.toMatchObject({ code: 'refused-local' });
    const ok = await updatePackage({ dir, ref: 'v2', cwd: root, env, trust: trustNamed(trust, [repo], root) });
    expect(ok.lock?.git?.commit).toBe(git(repo, 'rev-parse', 'v2'));
  });
});

describe('.krmignore', () => {
  // kpt-functions-catalog's examples ship the output their function gives in `.expected/`, which
  // their `.krmignore` names: files kpt reads as no resource. Such a file keeps its bytes on get
  // and is updated file by file, as any file that is not KRM.
  it('a YAML file a .krmignore names gets no merge comment, and is updated as a plain file', async () => {
    const { root, repo, env } = await fixture();
    const results = (k: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: results\ndata:\n  k: ${k}\n`;
    const release = (k: string, tag: string) => {
      writeFileSync(join(repo, 'pkg', '.expected', 'results.yaml'), results(k));
      writeFileSync(join(repo, 'pkg', 'sub', 'fixtures', 'x.yaml'), results(k));
      writeFileSync(join(repo, 'pkg', 'sub', 'cm.yaml'), results(k).replace('results', 'sub'));
      git(repo, 'add', '-A');
      git(repo, 'commit', '--quiet', '-m', tag);
      git(repo, 'tag', tag);
    };
    mkdirSync(join(repo, 'pkg', '.expected'));
    mkdirSync(join(repo, 'pkg', 'sub', 'fixtures'), { recursive: true });
    writeFileSync(join(repo, 'pkg', '.krmignore'), '.expected\n');
    writeFileSync(join(repo, 'pkg', 'sub', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n');
    writeFileSync(join(repo, 'pkg', 'sub', '.krmignore'), 'fixtures/\n');
    release('v1', 'x1');
    release('v2', 'x2');
    const get = async (name: string) => {
      const destination = join(root, name);
      await getPackage({ repo, directory: '/pkg', ref: 'x1', destination, cwd: root, env });
      return destination;
    };
    const unedited = await get('unedited');
    expect(readFileSync(join(unedited, '.expected', 'results.yaml'), 'utf8')).toBe(results('v1'));
    expect(readFileSync(join(unedited, 'sub', 'fixtures', 'x.yaml'), 'utf8')).toBe(results('v1'));
    expect(readFileSync(join(unedited, 'sub', 'cm.yaml'), 'utf8')).toContain('# kpt-merge: /sub');
    await updatePackage({ dir: unedited, ref: 'x2', cwd: root, env });
    expect(readFileSync(join(unedited, '.expected', 'results.yaml'), 'utf8')).toBe(results('v2'));
    expect(readFileSync(join(unedited, 'sub', 'fixtures', 'x.yaml'), 'utf8')).toBe(results('v2'));

    // changed locally: local's file stays whole, as for any file that is not KRM
    const edited = await get('edited');
    writeFileSync(join(edited, '.expected', 'results.yaml'), results('mine'));
    await updatePackage({ dir: edited, ref: 'x2', cwd: root, env });
    expect(readFileSync(join(edited, '.expected', 'results.yaml'), 'utf8')).toBe(results('mine'));
    expect(readFileSync(join(edited, 'sub', 'cm.yaml'), 'utf8')).toContain('k: v2');
  });
});
