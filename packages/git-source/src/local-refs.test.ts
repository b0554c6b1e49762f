import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git, initRepo, tempDir } from './__fixtures__/repo.js';
import { readLocalRefs } from './local-refs.js';
import { listRemoteRefs, parseLsRemote, type RemoteRef } from './refs.js';
import { repoLocation } from './url.js';

const root = tempDir('kdelta-local-refs-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let count = 0;
/** A new repository with two commits on `main`: returns its directory and the commits. */
function base(options: { bare?: boolean } = {}): { dir: string; c1: string; c2: string } {
  const dir = join(root, `r${++count}`);
  const repo = initRepo(dir);
  repo.write({ 'a.yaml': 'a: 1\n' });
  const c1 = repo.commit('one');
  repo.write({ 'a.yaml': 'a: 2\n' });
  const c2 = repo.commit('two');
  if (!options.bare) return { dir, c1, c2 };
  const bare = `${dir}-bare.git`;
  git(root, 'clone', '--quiet', '--bare', dir, bare);
  return { dir: bare, c1, c2 };
}

/** What `git ls-remote <dir>` says, as listRemoteRefs returns it (annotated tags peeled); an error as its message. */
function lsRemote(dir: string, env: Record<string, string> = {}): RemoteRef[] | string {
  try {
    return parseLsRemote(
      execFileSync('git', ['ls-remote', '--', dir], { encoding: 'utf8', env: { ...process.env, ...env }, stdio: 'pipe' }),
    );
  } catch (error) {
    return `failed: ${(error as Error).message.split('\n')[0]}`;
  }
}

const at = (dir: string) => repoLocation(dir);

/** Repositories git itself wrote, in every plain layout: read from their files, the refs are ls-remote's. */
const READ: ReadonlyArray<{ name: string; make(): string }> = [
  {
    name: 'loose refs, a lightweight and an annotated tag, loose objects',
    make() {
      const { dir, c1 } = base();
      git(dir, 'branch', 'feature', c1);
      git(dir, 'tag', 'v1', c1);
      git(dir, 'tag', '-a', '-m', 'release', 'v2');
      return dir;
    },
  },
  {
    name: 'packed refs (fully peeled) and packed objects',
    make() {
      const { dir, c1 } = base();
      git(dir, 'branch', 'feature', c1);
      git(dir, 'tag', '-a', '-m', 'one', 'pkg/v1', c1);
      git(dir, 'tag', 'v2');
      git(dir, 'gc', '--quiet');
      expect(readFileSync(join(dir, '.git', 'packed-refs'), 'utf8')).toMatch(/fully-peeled/);
      return dir;
    },
  },
  {
    name: 'a loose ref over its packed one, a packed ref deleted',
    make() {
      const { dir, c1, c2 } = base();
      git(dir, 'branch', 'moved', c1);
      git(dir, 'branch', 'gone', c1);
      git(dir, 'pack-refs', '--all');
      git(dir, 'update-ref', 'refs/heads/moved', c2);
      git(dir, 'branch', '-D', 'gone');
      return dir;
    },
  },
  {
    name: 'packed-refs without traits (an old git): tags peeled from their objects, packed and loose',
    make() {
      const { dir, c1 } = base();
      git(dir, 'tag', '-a', '-m', 'one', 'v1', c1);
      git(dir, 'tag', '-a', '-m', 'two', 'v2');
      git(dir, 'update-ref', 'refs/other/at-tag', git(dir, 'rev-parse', 'v1'));
      git(dir, 'pack-refs', '--all');
      git(dir, 'repack', '-a', '-d', '-q');
      git(dir, 'tag', '-a', '-m', 'three', 'v3', c1);
      const packed = join(dir, '.git', 'packed-refs');
      writeFileSync(
        packed,
        readFileSync(packed, 'utf8')
          .split('\n')
          .filter((l) => !l.startsWith('#') && !l.startsWith('^'))
          .join('\n'),
      );
      return dir;
    },
  },
  {
    name: 'a tag of a tag, a branch at an annotated tag, tags of a tree and a blob',
    make() {
      const { dir } = base();
      git(dir, 'tag', '-a', '-m', 'inner', 'inner');
      git(dir, 'tag', '-a', '-m', 'outer', 'outer', 'inner');
      git(dir, 'update-ref', 'refs/other/odd', git(dir, 'rev-parse', 'outer'));
      git(dir, 'tag', 'tree', 'HEAD^{tree}');
      git(dir, 'tag', '-a', '-m', 'blob', 'blob', 'HEAD:a.yaml');
      return dir;
    },
  },
  {
    name: 'a bare repository with a symbolic HEAD',
    make: () => base({ bare: true }).dir,
  },
  {
    name: 'a detached HEAD',
    make() {
      const { dir, c1 } = base();
      git(dir, 'checkout', '--quiet', '--detach', c1);
      return dir;
    },
  },
  {
    name: 'HEAD on an unborn branch',
    make() {
      const { dir } = base();
      git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/nothing-yet');
      return dir;
    },
  },
  {
    name: 'an empty repository',
    make() {
      const dir = join(root, `r${++count}`);
      initRepo(dir);
      return dir;
    },
  },
  {
    name: 'a clone: remote-tracking refs and the symbolic refs/remotes/origin/HEAD',
    make() {
      const { dir } = base({ bare: true });
      const clone = join(root, `r${++count}`);
      git(root, 'clone', '--quiet', dir, clone);
      return clone;
    },
  },
  {
    name: '600 branches, half of them packed',
    make() {
      const { dir, c1, c2 } = base();
      const create = (from: number) =>
        Array.from({ length: 300 }, (_, i) => `create refs/heads/b/${String(from + i).padStart(4, '0')} ${i % 2 ? c1 : c2}\n`).join('');
      execFileSync('git', ['update-ref', '--stdin'], { cwd: dir, input: create(0) });
      git(dir, 'pack-refs', '--all');
      execFileSync('git', ['update-ref', '--stdin'], { cwd: dir, input: create(300) });
      return dir;
    },
  },
  {
    name: 'deltified commits in a pack (a type read through the delta chain)',
    make() {
      const { dir } = base();
      const repo = initRepo(join(root, `r${++count}`));
      for (let i = 0; i < 30; i++) {
        repo.write({ 'big.txt': `${'line of text that repeats\n'.repeat(200)}${i}\n` });
        repo.commit(`${'a long commit message that repeats. '.repeat(40)}${i}`);
      }
      git(repo.dir, 'repack', '-a', '-d', '-q', '-f', '--depth=50', '--window=50');
      git(repo.dir, 'tag', 'light', 'HEAD~3');
      git(repo.dir, 'update-ref', 'refs/heads/old', 'HEAD~7');
      rmSync(dir, { recursive: true, force: true });
      return repo.dir;
    },
  },
];

describe('readLocalRefs: a repository on this machine, read from its files', () => {
  it.each(READ)('$name: what git ls-remote lists', async ({ make }) => {
    const dir = make();
    const read = await readLocalRefs(at(dir));
    expect(read).toBeDefined();
    expect(read).toEqual(lsRemote(dir));
  });

  it('finds the repository where git does: `<path>/.git`, `<path>`, `<path>.git`, and a file:// URL', async () => {
    const { dir } = base({ bare: true });
    const withoutSuffix = dir.replace(/\.git$/, '');
    expect(await readLocalRefs(at(withoutSuffix))).toEqual(lsRemote(withoutSuffix));
    expect(await readLocalRefs(repoLocation(`file://${dir}`))).toEqual(lsRemote(dir));
  });

  it('starts no git for the listing: a second read of a repository starts none at all', async () => {
    const { dir } = base();
    const bin = join(root, `bin${++count}`);
    const log = join(bin, 'calls.log');
    mkdirSync(bin);
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, KDELTA_TEST_PROBE: String(count) };
    const refs = await listRemoteRefs({ repo: dir, env });
    expect(refs).toEqual(lsRemote(dir));
    await listRemoteRefs({ repo: dir, env });
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    // one look at the configuration of the run's environment (hidden refs), and no ls-remote
    expect(calls).toEqual([expect.stringMatching(/^config --get-regexp /)]);
  });
});

/** What this reader leaves to git: it answers undefined, and listRemoteRefs says what git ls-remote says. */
const FALL_BACK: ReadonlyArray<{ name: string; make(): string; env?: Record<string, string> }> = [
  {
    name: 'reftable (a repository extension)',
    make() {
      const { dir } = base();
      git(dir, 'config', 'core.repositoryformatversion', '1');
      git(dir, 'config', 'extensions.refStorage', 'reftable');
      return dir;
    },
  },
  {
    name: 'objects borrowed through alternates',
    make() {
      const { dir } = base();
      const clone = join(root, `r${++count}`);
      git(root, 'clone', '--quiet', '--shared', dir, clone);
      return clone;
    },
  },
  {
    name: 'a linked worktree (`.git` is a file)',
    make() {
      const { dir } = base();
      const linked = join(root, `r${++count}`);
      git(dir, 'worktree', 'add', '--quiet', '-b', 'side', linked);
      return linked;
    },
  },
  {
    name: 'a repository that hides refs (uploadpack.hideRefs)',
    make() {
      const { dir } = base();
      git(dir, 'branch', 'secret');
      git(dir, 'config', 'uploadpack.hideRefs', 'refs/heads/secret');
      return dir;
    },
  },
  {
    name: "hidden refs in the user's configuration",
    make() {
      const { dir } = base();
      git(dir, 'branch', 'secret');
      writeFileSync(join(root, 'global.gitconfig'), '[transfer]\n\thideRefs = refs/heads/secret\n');
      return dir;
    },
    env: { GIT_CONFIG_GLOBAL: join(root, 'global.gitconfig') },
  },
  {
    name: 'a namespace (GIT_NAMESPACE)',
    make() {
      const { dir, c1 } = base();
      git(dir, 'update-ref', 'refs/namespaces/team/refs/heads/main', c1);
      return dir;
    },
    env: { GIT_NAMESPACE: 'team' },
  },
  {
    name: 'a ref that is a symlink',
    make() {
      const { dir } = base();
      symlinkSync(join(dir, '.git', 'refs', 'heads', 'main'), join(dir, '.git', 'refs', 'heads', 'link'));
      return dir;
    },
  },
  {
    name: 'a ref name outside the plain alphabet',
    make() {
      const { dir } = base();
      git(dir, 'branch', 'café');
      return dir;
    },
  },
  {
    name: 'per-worktree refs (a bisection under way)',
    make() {
      const { dir, c1, c2 } = base();
      git(dir, 'bisect', 'start', c2, c1);
      return dir;
    },
  },
  {
    name: 'a partial clone (promisor pack)',
    make() {
      const { dir } = base({ bare: true });
      git(dir, 'config', 'uploadpack.allowFilter', 'true');
      const clone = join(root, `r${++count}`);
      git(root, 'clone', '--quiet', '--filter=blob:none', `file://${dir}`, clone);
      return clone;
    },
  },
  {
    name: 'a ref whose object is missing (git versions differ on listing it)',
    make() {
      const { dir } = base();
      writeFileSync(join(dir, '.git', 'refs', 'heads', 'broken'), `${'1'.repeat(40)}\n`);
      return dir;
    },
  },
  {
    name: 'a symbolic ref that leads nowhere',
    make() {
      const { dir } = base();
      git(dir, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/nothing');
      return dir;
    },
  },
  {
    name: 'a pack index that claims more objects than its file holds',
    make() {
      const { dir } = base();
      git(dir, 'gc', '--quiet');
      const pack = join(dir, '.git', 'objects', 'pack');
      const idx = join(pack, readdirSync(pack).find((f) => f.endsWith('.idx'))!);
      const bytes = readFileSync(idx);
      for (let i = 0; i < 256; i++) if (i >= 0xe0) bytes.writeUInt32BE(0x7fffffff, 8 + i * 4);
      chmodSync(idx, 0o644);
      writeFileSync(idx, bytes);
      return dir;
    },
  },
  {
    name: 'no repository there',
    make: () => join(root, 'nothing-here'),
  },
];

describe('readLocalRefs: what it leaves to git', () => {
  it.each(FALL_BACK)('$name: git ls-remote decides', async ({ make, env = {} }) => {
    const dir = make();
    expect(await readLocalRefs(at(dir), env)).toBeUndefined();
    const listed = await listRemoteRefs({ repo: dir, env }).catch((error: Error) => `failed: ${error.message}`);
    const expected = lsRemote(dir, env);
    if (typeof expected === 'string') expect(listed).toMatch(/^failed: /);
    else expect(listed).toEqual(expected);
  });
});
