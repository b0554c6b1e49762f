import { hideCredentials, isFullCommit, repositoryIdentity, type RemoteRef } from '@kdelta/git-source';
import { RunError } from '../errors.js';
import type { VariantPlan } from '../plan/plan.js';

/**
 * A preview's candidate change in an upstream repository: a ref that is not a release yet (the
 * head of a pull request, a branch, a commit) for the packages of one upstream Repository.
 */
export interface UpstreamRef {
  /**
   * The upstream Repository: its `metadata.name`, `<namespace>/<name>`, or its repository's URL (a
   * pull request's repository); optional when the variants have one upstream.
   */
  readonly repository?: string | undefined;
  /** `refs/pull/7/head`, a branch, a tag or a full commit of that repository. */
  readonly ref: string;
}

/** What a preview of an upstream ref runs: the variants of that upstream, each pinned to the ref's commit. */
export interface UpstreamScope {
  readonly repository: string;
  readonly url: string;
  readonly ref: string;
  readonly commit: string;
  readonly variants: readonly VariantPlan[];
}

function repositoryKey(v: VariantPlan): string {
  return `${v.upstream.repository.namespace}/${v.upstream.repository.name}`;
}

/**
 * The variants an upstream ref affects, their upstream pinned to the commit the ref names now
 * (one `ls-remote` of the upstream, the run's own, so each upstream is listed once). Throws a
 * RunError `invalid-option` naming the choices when the Repository or the ref is not found.
 */
export async function scopeToUpstreamRef(
  variants: readonly VariantPlan[],
  candidate: UpstreamRef,
  listRefs: (url: string) => Promise<readonly RemoteRef[]>,
): Promise<UpstreamScope> {
  const upstreams = new Map<string, VariantPlan['upstream']>();
  for (const v of variants) upstreams.set(repositoryKey(v), v.upstream);
  const names = [...upstreams.values()].map((u) => `"${u.repository.name}"`).join(', ') || 'none';
  let key: string | undefined;
  if (candidate.repository === undefined) {
    if (upstreams.size !== 1)
      throw new RunError(
        'invalid-option',
        `the variants have ${upstreams.size} upstream Repositories (${names}): name the one the ref is of`,
      );
    key = [...upstreams.keys()][0];
  } else {
    const wanted = candidate.repository;
    const byUrl = wanted.includes('://') ? repositoryIdentity(wanted) : undefined;
    const found = [...upstreams].flatMap(([k, u]) =>
      k === wanted || u.repository.name === wanted || (byUrl !== undefined && repositoryIdentity(u.url) === byUrl) ? [k] : [],
    );
    if (found.length === 0)
      throw new RunError(
        'invalid-option',
        `upstream Repository "${hideCredentials(wanted)}" is the upstream of no variant (upstreams: ${names})`,
      );
    if (found.length > 1)
      throw new RunError(
        'invalid-option',
        `upstream Repository "${wanted}" is in ${found.length} namespaces: name it as <namespace>/${wanted}`,
      );
    key = found[0];
  }
  const upstream = upstreams.get(key!)!;
  const commit = commitOf(candidate.ref, await listRefs(upstream.url));
  if (commit === undefined) {
    throw new RunError(
      'invalid-option',
      `upstream ref "${candidate.ref}" is not a ref, a branch, a tag or a full commit of ${hideCredentials(upstream.url)} (Repository "${upstream.repository.name}")`,
    );
  }
  return {
    repository: upstream.repository.name,
    url: hideCredentials(upstream.url),
    ref: candidate.ref,
    commit,
    // pinned to the commit: the ref may be a pull request's, which no revision of a variant can name
    variants: variants
      .filter((v) => repositoryKey(v) === key)
      .map((v) => ({ ...v, upstream: { ...v.upstream, revision: commit, policy: 'pinned' as const } })),
  };
}

/** The commit a ref names: a full ref (`refs/pull/7/head`), a branch, a tag, else a full commit id. */
function commitOf(ref: string, refs: readonly RemoteRef[]): string | undefined {
  const byName = new Map(refs.map((r) => [r.name, r.commit]));
  for (const name of [ref, `refs/heads/${ref}`, `refs/tags/${ref}`]) {
    const commit = byName.get(name); // annotated tags come peeled to their commit
    if (commit) return commit;
  }
  return isFullCommit(ref) ? ref.toLowerCase() : undefined;
}
