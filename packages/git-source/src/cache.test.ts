import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git, initRepo, tempDir } from './__fixtures__/repo.js';
import { defaultCacheDir, fetchPackage } from './cache.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const repo = initRepo(join(root, 'upstream'));
const files: Record<string, string> = {};
for (const d of ['a', 'b', 'c']) for (let i = 0; i < 30; i++) files[`${d}/f${i}.yaml`] = `name: ${d}${i}\n`;
repo.write({ ...files, 'a/nested/deep.yaml': 'deep: true\n', 'README.md': '# root\n' });
const c1 = repo.commit('one');
repo.tag('v1');
repo.tag('a/v1');
repo.write({ 'a/f0.yaml': 'name: changed\n' });
const c2 = repo.commit('two');

/** Blobs of the cached repository that are present locally (the rest are promised, not fetched). */
function presentBlobs(cacheDir: string): number {
  const [entry] = readdirSync(cacheDir);
  const gitDir = join(cacheDir, entry!, 'git');
  const out = execFileSync('git', ['--git-dir', gitDir, 'rev-list', '--objects', '--all', '--missing=print'], { encoding: 'utf8' });
  const missing = out.split('\n').filter((l) => l.startsWith('?')).length;
  const total = out.split('\n').filter(Boolean).length;
  return total - missing;
}

describe('fetchPackage', () => {
  it('fetches one directory at a tag and only that directory', async () => {
    const cacheDir = join(root, 'cache1');
    const dest = join(root, 'out1', 'a');
    const got = await fetchPackage({ repo: repo.dir, ref: 'v1', directory: '/a', dest, cacheDir });
    expect(got).toMatchObject({ commit: c1, directory: '/a', cacheHit: false });
    expect(readFileSync(join(dest, 'f0.yaml'), 'utf8')).toBe('name: a0\n');
    expect(readFileSync(join(dest, 'nested/deep.yaml'), 'utf8')).toBe('deep: true\n');
    expect(readdirSync(dest)).toHaveLength(31);
    expect(existsSync(join(dest, '.git'))).toBe(false);
    // partial clone: the blobs of b/ and c/ never travelled (31 files of a/ + commits and trees)
    const objects = presentBlobs(cacheDir);
    expect(objects).toBeLessThan(31 + 10);
  });

  it('serves a cached commit without fetching, but never a moved tag', async () => {
    const cacheDir = join(root, 'cache2');
    await fetchPackage({ repo: `file://${repo.dir}`, ref: 'v1', directory: 'a', dest: join(root, 'o2a'), cacheDir });
    const again = await fetchPackage({ repo: `file://${repo.dir}`, ref: 'v1', directory: 'a', dest: join(root, 'o2b'), cacheDir });
    expect(again.cacheHit).toBe(true);
    repo.tag('a/v1', c2); // the package's tag moves
    try {
      const moved = await fetchPackage({ repo: `file://${repo.dir}`, ref: 'v1', directory: 'a', dest: join(root, 'o2c'), cacheDir });
      expect(moved.commit).toBe(c2);
      expect(readFileSync(join(root, 'o2c', 'f0.yaml'), 'utf8')).toBe('name: changed\n');
    } finally {
      repo.tag('a/v1', c1);
    }
  });

  it('uses the default branch without a ref, and resolves abbreviated commits', async () => {
    const cacheDir = join(root, 'cache3');
    const head = await fetchPackage({ repo: repo.dir, directory: '/a', dest: join(root, 'o3a'), cacheDir });
    expect(head).toMatchObject({ ref: 'main', commit: c2 });
    const short = await fetchPackage({ repo: repo.dir, ref: c1.slice(0, 10), directory: '/a', dest: join(root, 'o3b'), cacheDir });
    expect(short.commit).toBe(c1);
    expect(readFileSync(join(root, 'o3b', 'f0.yaml'), 'utf8')).toBe('name: a0\n');
  });

  it('prefers the package-scoped tag <dir>/<ref>, and fetches the whole repository for "/"', async () => {
    const cacheDir = join(root, 'cache4');
    repo.tag('a/v1', c2);
    const got = await fetchPackage({ repo: repo.dir, ref: 'v1', directory: '/a', dest: join(root, 'o4a'), cacheDir });
    expect(got).toMatchObject({ commit: c2, resolved: { fullName: 'refs/tags/a/v1' } });
    const whole = await fetchPackage({ repo: repo.dir, ref: 'v1', directory: '/', dest: join(root, 'o4b'), cacheDir });
    expect(readdirSync(join(root, 'o4b')).sort()).toEqual(['README.md', 'a', 'b', 'c']);
    expect(whole.commit).toBe(c1);
  });

  it('fails cleanly for a missing directory or ref, writing nothing', async () => {
    const cacheDir = join(root, 'cache5');
    const dest = join(root, 'o5');
    await expect(fetchPackage({ repo: repo.dir, ref: 'v1', directory: '/nope', dest, cacheDir })).rejects.toMatchObject({
      code: 'not-found',
    });
    await expect(fetchPackage({ repo: repo.dir, ref: 'nope', directory: '/a', dest, cacheDir })).rejects.toMatchObject({
      code: 'unknown-revision',
    });
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(root).filter((n) => n.startsWith('.o5'))).toEqual([]);
  });

  it('works for concurrent fetches into one cache', async () => {
    const cacheDir = join(root, 'cache6');
    const results = await Promise.all(
      ['a', 'b', 'c'].map((d) => fetchPackage({ repo: repo.dir, ref: 'main', directory: d, dest: join(root, `o6${d}`), cacheDir })),
    );
    expect(results.map((r) => r.commit)).toEqual([c2, c2, c2]);
    expect(readFileSync(join(root, 'o6b', 'f3.yaml'), 'utf8')).toBe('name: b3\n');
  });

  it('reads KDELTA_CACHE_DIR', () => {
    expect(defaultCacheDir({ KDELTA_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(defaultCacheDir({})).toMatch(/\.kdelta[/\\]repos$/);
  });

  it('keeps a repository path that git config would misread (quote, backslash, comment signs)', async () => {
    const odd = initRepo(join(root, 'we"ird \\ #dir; x'));
    odd.write({ 'p/a.yaml': 'a: 1\n' });
    const commit = odd.commit('one');
    const cacheDir = join(root, 'cache-odd');
    const first = await fetchPackage({ repo: odd.dir, directory: 'p', dest: join(root, 'odd1'), cacheDir });
    expect(first).toMatchObject({ commit, cacheHit: false });
    const [entry] = readdirSync(cacheDir);
    const gitDir = join(cacheDir, entry!, 'git');
    expect(git(root, '--git-dir', gitDir, 'config', '--get', 'remote.origin.url')).toBe(odd.dir);
    expect(git(root, '--git-dir', gitDir, 'config', '--get', 'extensions.partialClone')).toBe('origin');
    const again = await fetchPackage({ repo: odd.dir, directory: 'p', dest: join(root, 'odd2'), cacheDir });
    expect(again).toMatchObject({ commit, cacheHit: true });
    expect(readFileSync(join(root, 'odd2', 'a.yaml'), 'utf8')).toBe('a: 1\n');
  });

  it('fetches from a bare remote over file://', async () => {
    const bare = join(root, 'bare');
    git(root, 'clone', '--quiet', '--bare', repo.dir, bare);
    const got = await fetchPackage({
      repo: `file://${bare}`,
      ref: 'main',
      directory: '/c',
      dest: join(root, 'o7'),
      cacheDir: join(root, 'cache7'),
    });
    expect(got.commit).toBe(c2);
    expect(readdirSync(join(root, 'o7'))).toHaveLength(30);
  });
});

describe('symlinks in the upstream repository', () => {
  // the directory is looked up in git's trees, where a symlink is a blob: it is not a directory
  it('never follows a package directory that is, or lies below, a symlink, and moves nothing it points at', async () => {
    const outside = join(root, 'runner-files');
    mkdirSync(join(outside, 'secrets'), { recursive: true });
    writeFileSync(join(outside, 'secrets', 'token.txt'), 'do not push\n');
    const linked = initRepo(join(root, 'linked'));
    linked.write({ 'real/Kptfile': 'kind: Kptfile\n' });
    symlinkSync(outside, join(linked.dir, 'pkg'));
    symlinkSync(join(outside, 'secrets'), join(linked.dir, 'direct'));
    linked.commit('links');
    const cacheDir = join(root, 'cache-links');
    await expect(
      fetchPackage({ repo: linked.dir, ref: 'main', directory: '/pkg/secrets', dest: join(root, 'o-link1'), cacheDir }),
    ).rejects.toMatchObject({ code: 'not-found', message: expect.stringMatching(/directory "\/pkg\/secrets" does not exist/) });
    await expect(
      fetchPackage({ repo: linked.dir, ref: 'main', directory: '/direct', dest: join(root, 'o-link2'), cacheDir }),
    ).rejects.toMatchObject({
      code: 'not-found',
    });
    expect(readFileSync(join(outside, 'secrets', 'token.txt'), 'utf8')).toBe('do not push\n');
    expect(existsSync(join(root, 'o-link1')) || existsSync(join(root, 'o-link2'))).toBe(false);
  });
});
