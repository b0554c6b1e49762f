import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type SourceTrust,
  type UrlCredentials,
  fetchPackage,
  normalizeDirectory,
  repoLocation,
  sourceTrust,
  trustNamed,
  withoutCredentials,
} from '@kdelta/git-source';
import { makeTempDir, PackageTree, removeTempDir } from '@kdelta/kptfile-model';

/** Where and how to reach git: the options every operation shares. */
export interface GitOptions {
  /** Directory relative paths and local repositories are resolved against (default: the process's). */
  readonly cwd?: string;
  /** Environment for git (credentials, proxies); default: the process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Repository cache root (default: KDELTA_CACHE_DIR from `env`, else git-source's default). */
  readonly cacheDir?: string;
  /**
   * Credentials by repository URL (without credentials, as `withoutCredentials` gives it): they
   * reach git for that repository only, in its environment, and are never recorded or returned.
   */
  readonly credentials?: ReadonlyMap<string, UrlCredentials>;
  /**
   * Fetches to share with other operations of the same process (see {@link createFetchMemo}): a
   * package fanned out to many places is then fetched once per repository, directory and ref,
   * not once per place.
   */
  readonly fetches?: FetchMemo;
  /**
   * The repositories the user vouched for (git-source's `SourceTrust`): every repository a
   * package's content names is fetched under it (credentials only for its repositories, a
   * repository on this machine only when named or allowed). Default: the environment's
   * (`KDELTA_CREDENTIAL_REPOSITORIES`, `KDELTA_CREDENTIAL_HOSTS`, `KDELTA_ALLOW_LOCAL_UPSTREAMS`) with the repositories the user
   * gave: `pkg get`'s argument, or what the updated package's own Kptfile records (written by
   * the user's `pkg get`). A caller that passes it (a run) names every repository it trusts.
   */
  readonly trust?: SourceTrust;
  /** For the default `trust`: package content may name repositories on this machine. */
  readonly allowLocalUpstreams?: boolean;
}

/** `git` with its trust settled: the caller's, else the default, with `named` (the user's own repositories) added. */
export function withTrust(
  git: GitOptions,
  named: readonly (string | undefined)[],
  callerNamesAll: boolean,
): GitOptions & { trust: SourceTrust } {
  const cwd = git.cwd ?? process.cwd();
  if (git.trust) return { ...git, trust: callerNamesAll ? git.trust : trustNamed(git.trust, named, cwd) };
  const env = git.env ?? process.env;
  const trust = sourceTrust({
    named,
    cwd,
    env,
    ...(git.allowLocalUpstreams !== undefined ? { allowLocal: git.allowLocalUpstreams } : {}),
  });
  return { ...git, trust };
}

/**
 * Fetched packages kept in memory and shared between operations, keyed by repository, directory
 * and ref: the ref is resolved once, when first fetched, so the memo belongs to one run that
 * wants one view of the upstream throughout, never to a long-lived process. A failed fetch is not
 * kept: the next operation tries again.
 */
export class FetchMemo {
  private readonly entries = new Map<string, Promise<FetchedTree>>();

  /** The fetch for `key`, started by `load` when there is none (a failed one is forgotten). */
  share(key: string, load: () => Promise<FetchedTree>): Promise<FetchedTree> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = load();
      this.entries.set(key, entry);
      entry.catch(() => this.entries.delete(key));
    }
    return entry;
  }
}

export function createFetchMemo(): FetchMemo {
  return new FetchMemo();
}

/** A package read from git into memory. */
export interface FetchedTree {
  /** Its `source` is the scratch directory it was read from (gone by now): errors name files by it. */
  readonly tree: PackageTree;
  readonly commit: string;
  /** The ref used (the default branch's name when none was given). */
  readonly ref: string;
  /** Normalised directory (`/` or `/a/b`). */
  readonly directory: string;
}

/**
 * `repo`'s `directory` at `ref`, read into memory; with a memo in `git`, one fetch is shared by
 * every caller asking for the same, each getting its own copy of the tree.
 */
export async function fetchTree(
  git: GitOptions,
  repo: string,
  directory: string,
  ref: string | undefined,
  namedBy?: string,
): Promise<FetchedTree> {
  const memo = git.fetches;
  if (!memo) return fetchTreeOnce(git, repo, directory, ref, namedBy);
  // Keyed by where the repository is (a relative path resolved, credentials left out): the
  // callers of one run differ in working directory and agree on the repositories.
  let key: string;
  try {
    const where = repoLocation(repo, git.cwd ?? process.cwd()).url;
    key = JSON.stringify([where, normalizeDirectory(directory), ref ?? null, git.cacheDir ?? null]);
  } catch {
    return fetchTreeOnce(git, repo, directory, ref, namedBy); // refused: let it say why
  }
  const fetched = await memo.share(key, () => fetchTreeOnce(git, repo, directory, ref, namedBy));
  return { ...fetched, tree: fetched.tree.clone() };
}

/** `repo`'s `directory` at `ref`, read into memory (through a scratch directory removed at once). */
async function fetchTreeOnce(
  git: GitOptions,
  repo: string,
  directory: string,
  ref: string | undefined,
  namedBy: string | undefined,
): Promise<FetchedTree> {
  // named by pid: removed on a signal, and swept by the next command when this process is killed
  const holder = makeTempDir(tmpdir(), 'fetch');
  try {
    const dest = join(holder, 'pkg');
    const env = git.env ?? process.env;
    const cacheDir = git.cacheDir ?? env['KDELTA_CACHE_DIR'];
    // A repo read from a Kptfile written by an older tool may carry credentials of its own:
    // git-source takes them out of the URL and uses them in preference to these.
    const credentials = git.credentials?.get(withoutCredentials(repo));
    const fetched = await fetchPackage({
      repo,
      ...(credentials ? { credentials } : {}),
      directory,
      dest,
      cwd: git.cwd ?? process.cwd(),
      env,
      ...(ref !== undefined ? { ref } : {}),
      ...(cacheDir ? { cacheDir } : {}),
      ...(git.trust ? { trust: git.trust } : {}),
      ...(namedBy ? { namedBy } : {}),
    });
    const tree = PackageTree.read(dest) ?? PackageTree.empty();
    tree.source = dest;
    return { tree, commit: fetched.commit, ref: fetched.ref, directory: fetched.directory };
  } finally {
    removeTempDir(holder);
  }
}
