import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchPackage } from '@kdelta/git-source';
import { PackageTree } from '@kdelta/kptfile-model';

/** Where and how to reach git: the options every operation shares. */
export interface GitOptions {
  /** Directory relative paths and local repositories are resolved against (default: the process's). */
  readonly cwd?: string;
  /** Environment for git (credentials, proxies); default: the process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Repository cache root (default: KDELTA_CACHE_DIR from `env`, else git-source's default). */
  readonly cacheDir?: string;
}

/** A package read from git into memory. */
export interface FetchedTree {
  readonly tree: PackageTree;
  readonly commit: string;
  /** The ref used (the default branch's name when none was given). */
  readonly ref: string;
  /** Normalised directory (`/` or `/a/b`). */
  readonly directory: string;
}

/** `repo`'s `directory` at `ref`, read into memory (through a scratch directory removed at once). */
export async function fetchTree(git: GitOptions, repo: string, directory: string, ref: string | undefined): Promise<FetchedTree> {
  const holder = mkdtempSync(join(tmpdir(), 'kdelta-fetch-'));
  try {
    const dest = join(holder, 'pkg');
    const env = git.env ?? process.env;
    const cacheDir = git.cacheDir ?? env['KDELTA_CACHE_DIR'];
    const fetched = await fetchPackage({
      repo,
      directory,
      dest,
      cwd: git.cwd ?? process.cwd(),
      env,
      ...(ref !== undefined ? { ref } : {}),
      ...(cacheDir ? { cacheDir } : {}),
    });
    const tree = PackageTree.read(dest) ?? PackageTree.empty();
    return { tree, commit: fetched.commit, ref: fetched.ref, directory: fetched.directory };
  } finally {
    rmSync(holder, { recursive: true, force: true });
  }
}
