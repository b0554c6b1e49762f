import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git, initRepo, repoAt, tempDir } from './__fixtures__/repo.js';
import { cloneBare, commitAll, createBranch, deleteRemoteBranch, push, readLocalHead, readRemoteHead } from './write.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

function downstream(name: string) {
  const seed = initRepo(join(root, `${name}-seed`));
  seed.write({ 'pkg/Kptfile': 'kind: Kptfile\n' });
  const base = seed.commit('base');
  const bare = join(root, `${name}.git`);
  git(root, 'clone', '--quiet', '--bare', seed.dir, bare);
  const work = join(root, `${name}-work`);
  git(root, 'clone', '--quiet', bare, work);
  return { bare, work, base };
}

const author = { name: 'kdelta bot', email: 'bot@example.com' };

describe('write side', () => {
  it('creates a branch from a base, commits as the given author and pushes a new branch', async () => {
    const { bare, work, base } = downstream('d1');
    expect(await createBranch({ dir: work, branch: 'kdelta/v1', base: 'origin/main' })).toBe(base);
    repoAt(work).write({ 'pkg/new.yaml': 'a: 1\n' });
    const sha = await commitAll({ dir: work, message: 'update pkg', author });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(git(work, 'log', '-1', '--format=%an <%ae>|%cn|%s')).toBe('kdelta bot <bot@example.com>|kdelta bot|update pkg');
    expect(await readRemoteHead({ repo: bare, branch: 'kdelta/v1' })).toBeUndefined();
    await push({ dir: work, remote: 'origin', branch: 'kdelta/v1', expectedHead: null });
    expect(await readRemoteHead({ repo: bare, branch: 'kdelta/v1' })).toBe(sha);
    expect(await readRemoteHead({ repo: `file://${bare}`, branch: 'main' })).toBe(base);
  });

  it('returns undefined when there is nothing to commit', async () => {
    const { work } = downstream('d2');
    expect(await commitAll({ dir: work, message: 'nothing', author })).toBeUndefined();
  });

  it('force-pushes only over the expected head (force-with-lease)', async () => {
    const { bare, work, base } = downstream('d3');
    await createBranch({ dir: work, branch: 'kdelta/x', base: 'origin/main' });
    repoAt(work).write({ 'a.txt': 'one' });
    const first = (await commitAll({ dir: work, message: 'one', author }))!;
    await push({ dir: work, remote: bare, branch: 'kdelta/x', expectedHead: null });
    // someone else moves the branch
    const other = join(root, 'd3-other');
    git(root, 'clone', '--quiet', '--branch', 'kdelta/x', bare, other);
    repoAt(other).write({ 'b.txt': 'theirs' });
    const theirs = (await commitAll({ dir: other, message: 'theirs', author }))!;
    await push({ dir: other, remote: 'origin', branch: 'kdelta/x' });
    // our rewrite, leased against our stale view, is refused
    await createBranch({ dir: work, branch: 'kdelta/x', base, force: true });
    repoAt(work).write({ 'c.txt': 'rewrite' });
    const rewrite = (await commitAll({ dir: work, message: 'rewrite', author }))!;
    await expect(push({ dir: work, remote: bare, branch: 'kdelta/x', expectedHead: first })).rejects.toMatchObject({ code: 'stale-lease' });
    expect(await readRemoteHead({ repo: bare, branch: 'kdelta/x' })).toBe(theirs);
    // leased against the real head, it goes through
    await push({ dir: work, remote: bare, branch: 'kdelta/x', expectedHead: theirs });
    expect(await readRemoteHead({ repo: bare, branch: 'kdelta/x' })).toBe(rewrite);
    expect(await readLocalHead({ dir: work })).toBe(rewrite);
  });

  it('refuses branch names and remotes that start with "-"', async () => {
    const { work } = downstream('d4');
    await expect(createBranch({ dir: work, branch: '-f', base: 'HEAD' })).rejects.toMatchObject({ code: 'refused-argument' });
    await expect(push({ dir: work, remote: '--exec=x', branch: 'b' })).rejects.toMatchObject({ code: 'refused-argument' });
    await expect(createBranch({ dir: work, branch: 'ok', base: '--orphan' })).rejects.toMatchObject({ code: 'refused-argument' });
  });

  it('deletes a remote branch only while it points at the expected head', async () => {
    const { bare, work } = downstream('d5');
    await createBranch({ dir: work, branch: 'kdelta/gone', base: 'origin/main' });
    repoAt(work).write({ 'x.txt': 'x' });
    const ours = (await commitAll({ dir: work, message: 'x', author }))!;
    await push({ dir: work, remote: bare, branch: 'kdelta/gone', expectedHead: null });
    repoAt(work).write({ 'y.txt': 'y' });
    const moved = (await commitAll({ dir: work, message: 'y', author }))!;
    await push({ dir: work, remote: bare, branch: 'kdelta/gone', expectedHead: ours });
    await expect(deleteRemoteBranch({ dir: work, remote: bare, branch: 'kdelta/gone', expectedHead: ours })).rejects.toMatchObject({
      code: 'stale-lease',
    });
    expect(await readRemoteHead({ repo: bare, branch: 'kdelta/gone' })).toBe(moved);
    await deleteRemoteBranch({ dir: work, remote: bare, branch: 'kdelta/gone', expectedHead: moved });
    expect(await readRemoteHead({ repo: bare, branch: 'kdelta/gone' })).toBeUndefined();
  });

  it('clones a repository bare, with every branch', async () => {
    const { bare, base } = downstream('d6');
    git(bare, 'branch', 'kdelta/other', 'main');
    const dest = join(root, 'd6-clone.git');
    await cloneBare({ repo: `file://${bare}`, dest });
    expect(git(dest, 'rev-parse', 'main')).toBe(base);
    expect(git(dest, 'rev-parse', 'kdelta/other')).toBe(base);
    await expect(cloneBare({ repo: join(root, 'missing.git'), dest: join(root, 'd6-missing') })).rejects.toThrow();
  });
});
