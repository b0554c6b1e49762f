import { commitsBetween, hideCredentials, type HistoryCommit, type SourceTrust } from '@kdelta/git-source';
import type { PackageTree } from '@kdelta/kptfile-model';
import type { ParsedTexts } from '@kdelta/merge-core';
import { diffTrees, type PkgChange } from '@kdelta/package-update';

/**
 * What upstream changed between the commit a package was last updated from and the new one:
 * resource by resource, field by field (origin → upstream, as the update fetched them), and the
 * upstream's commits between the two that touch the package. What a proposal shows of an update
 * besides the files it merged.
 */

/** The most commits a proposal lists (a longer history is counted). */
export const MAX_COMMITS = 20;
/** How deep an upstream's history is read to find the commits between two revisions. */
const HISTORY_DEPTH = 200;

export interface UpstreamCommit extends HistoryCommit {
  /** The commit's page, when the forge hosts the upstream. */
  readonly url?: string | undefined;
}

export interface UpstreamChanges {
  /** The commit the package was last updated from, and the new one. */
  readonly from: string;
  readonly to: string;
  /** What upstream changed, per resource (or file), sorted. */
  readonly resources: readonly PkgChange[];
  /** The upstream's commits between the two that touch the package, newest first, at most {@link MAX_COMMITS}. */
  readonly commits: readonly UpstreamCommit[];
  /** How many in all; undefined when the history between the two could not be read whole. */
  readonly totalCommits: number | undefined;
  /** Why the commits could not be listed (the proposal stands without them). */
  readonly historyError?: string | undefined;
}

export interface UpstreamChangesInput {
  readonly repo: string;
  /** The package directory in the upstream repository. */
  readonly directory: string;
  readonly from: string;
  readonly to: string;
  /** The upstream package at `from` and at `to`, as the update fetched it. */
  readonly sides: { readonly origin: PackageTree; readonly updated: PackageTree };
  /** The texts the update's merge parsed, read from there rather than parsed again. */
  readonly parsed?: ParsedTexts | undefined;
  readonly cacheDir?: string | undefined;
  readonly cwd?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly trust?: SourceTrust | undefined;
}

/** The upstream's changes between two commits; never throws for the history (a failure is said in `historyError`). */
export async function upstreamChanges(input: UpstreamChangesInput): Promise<UpstreamChanges> {
  let resources: readonly PkgChange[];
  try {
    resources = diffTrees(input.sides.origin, input.sides.updated, input.parsed);
  } catch {
    // a file the diff cannot read (the merge read it, or said why): no field list, the files are listed
    resources = [];
  }
  try {
    const history = await commitsBetween({
      repo: input.repo,
      from: input.from,
      to: input.to,
      directory: input.directory,
      limit: MAX_COMMITS,
      depth: HISTORY_DEPTH,
      env: input.env,
      ...(input.cacheDir ? { cacheDir: input.cacheDir } : {}),
      ...(input.cwd ? { cwd: input.cwd } : {}),
      ...(input.trust ? { trust: input.trust } : {}),
    });
    return { from: input.from, to: input.to, resources, commits: history.commits, totalCommits: history.total };
  } catch (error) {
    return {
      from: input.from,
      to: input.to,
      resources,
      commits: [],
      totalCommits: undefined,
      historyError: hideCredentials((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''),
    };
  }
}

/**
 * {@link upstreamChanges} once per upstream, directory and pair of commits in a run: a set fans
 * one update out to many downstreams, and each proposal shows the same changes.
 */
export function createUpstreamChangesMemo(): (input: UpstreamChangesInput) => Promise<UpstreamChanges> {
  const memo = new Map<string, Promise<UpstreamChanges>>();
  return (input) => {
    const key = JSON.stringify([input.repo, input.directory, input.from, input.to, input.cwd ?? '']);
    let changes = memo.get(key);
    if (!changes) {
      changes = upstreamChanges(input);
      memo.set(key, changes);
    }
    return changes;
  };
}

/** The changes with each commit's page, where `commitUrl` knows one (the forge hosting the upstream). */
export function withCommitLinks(
  changes: UpstreamChanges | undefined,
  commitUrl: ((sha: string) => string | undefined) | undefined,
): UpstreamChanges | undefined {
  if (!changes || !commitUrl) return changes;
  return { ...changes, commits: changes.commits.map((c) => ({ ...c, url: commitUrl(c.sha) })) };
}
