import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initRepo, tempDir } from './__fixtures__/repo.js';
import { commitsBetween, fetchPackage } from './cache.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const repo = initRepo(join(root, 'upstream'));
repo.write({ 'pkg/a.yaml': 'a: 1\n', 'other/b.yaml': 'b: 1\n' });
const v1 = repo.commit('pkg v1');
repo.write({ 'pkg/a.yaml': 'a: 2\n' });
const fix = repo.commit('Raise a to 2');
repo.write({ 'other/b.yaml': 'b: 2\n' });
repo.commit('Another package');
repo.write({ 'pkg/c.yaml': 'c: 1\n' });
const v2 = repo.commit('Add c');

describe('the commits between two commits of an upstream, for one package', () => {
  it('lists those that touch the package, newest first, after a fetch that kept only the two commits', async () => {
    const cacheDir = join(root, 'cache');
    // as a run leaves the cache: each side fetched one deep
    await fetchPackage({ repo: repo.dir, ref: v1, directory: 'pkg', dest: join(root, 'o1'), cacheDir });
    await fetchPackage({ repo: repo.dir, ref: v2, directory: 'pkg', dest: join(root, 'o2'), cacheDir });
    const got = await commitsBetween({ repo: repo.dir, from: v1, to: v2, directory: '/pkg', cacheDir });
    expect(got).toEqual({
      commits: [
        { sha: v2, name: 'Test', subject: 'Add c' },
        { sha: fix, name: 'Test', subject: 'Raise a to 2' },
      ],
      total: 2,
    });
    expect(await commitsBetween({ repo: repo.dir, from: v1, to: v2, directory: '/pkg', cacheDir, limit: 1 })).toEqual({
      commits: [{ sha: v2, name: 'Test', subject: 'Add c' }],
      total: 2,
    });
  });

  it('says when the history between is longer than it reads', async () => {
    const got = await commitsBetween({ repo: repo.dir, from: v1, to: v2, directory: 'pkg', cacheDir: join(root, 'cache2'), depth: 2 });
    expect(got.total).toBeUndefined();
    expect(got.commits[0]?.sha).toBe(v2);
  });

  it('refuses what is not a full commit id', async () => {
    await expect(commitsBetween({ repo: repo.dir, from: '--upload-pack=x', to: v2, cacheDir: join(root, 'c3') })).rejects.toThrow(
      /not a full commit id/,
    );
  });
});
