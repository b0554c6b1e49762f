import type { Upstream } from '../api/types.js';

/**
 * Which upstream revision a variant uses. In Porch these pick a PackageRevision; in kdelta the
 * candidates are the upstream repository's refs for the package directory (see the README's
 * mapping): a tag `<package>/<revision>` (or `<revision>`) is a published revision with that
 * number, a branch is a workspace, and the repository's default branch is Porch's `main`
 * placeholder revision.
 */
export interface UpstreamCandidate {
  readonly repository?: string | undefined;
  readonly packageName?: string | undefined;
  readonly workspaceName?: string | undefined;
  readonly revision?: number | string | undefined;
  readonly lifecycle?: string | undefined;
}

export type Found<T> = { readonly ok: true; readonly value: T; readonly index: number } | { readonly ok: false; readonly error: string };

/** Porch PV rule: same repo and package, and the workspace named (or `main` when none is named). */
export function findVariantUpstream<T extends UpstreamCandidate>(upstream: Upstream, candidates: readonly T[]): Found<T> {
  const workspace = upstream.workspaceName || 'main';
  const index = candidates.findIndex(
    (c) => c.repository === upstream.repo && c.packageName === upstream.package && c.workspaceName === workspace,
  );
  if (index < 0) {
    return {
      ok: false,
      error: `could not find upstream package revision '${upstream.package ?? ''}/${workspace}' in repo '${upstream.repo ?? ''}'`,
    };
  }
  return { ok: true, value: candidates[index]!, index };
}

/** Porch PV rule for a published revision by number: Published or DeletionProposed, same number. */
export function findPublishedUpstream<T extends UpstreamCandidate>(upstream: Upstream, candidates: readonly T[]): Found<T> {
  if (upstream.revision === undefined || upstream.revision === 0 || upstream.revision === '0') {
    return { ok: false, error: 'upstream cannot be published with revision number 0' };
  }
  const index = candidates.findIndex(
    (c) =>
      c.repository === upstream.repo &&
      c.packageName === upstream.package &&
      String(c.revision) === String(upstream.revision) &&
      (c.lifecycle === 'Published' || c.lifecycle === 'DeletionProposed'),
  );
  if (index < 0) {
    return {
      ok: false,
      error: `could not find upstream package revision '${upstream.package ?? ''}/${String(upstream.revision)}' in repo '${upstream.repo ?? ''}'`,
    };
  }
  return { ok: true, value: candidates[index]!, index };
}

/** Porch PVS rule: same repo and package, and the same revision or the same workspace. */
export function findSetUpstream<T extends UpstreamCandidate>(upstream: Upstream, candidates: readonly T[]): Found<T> {
  const index = candidates.findIndex(
    (c) =>
      c.repository === upstream.repo &&
      c.packageName === upstream.package &&
      (String(c.revision ?? 0) === String(upstream.revision ?? 0) || (c.workspaceName ?? '') === (upstream.workspaceName ?? '')),
  );
  if (index < 0) {
    return {
      ok: false,
      error: `could not find upstream package revision '${upstream.package ?? ''}/${String(upstream.revision ?? 0)}' in repo '${upstream.repo ?? ''}'`,
    };
  }
  return { ok: true, value: candidates[index]!, index };
}

/**
 * The upstream revision recorded in a downstream's `upstreamLock.git.ref` (`pkg/v3` → 3): the last
 * `/` segment without a leading `v`, as an integer; -1 when it is not one (Porch's rule).
 */
export function parseLockRevision(ref: string | undefined): number {
  const last = (ref ?? '').split('/').pop() ?? '';
  const digits = last.replace(/^v/, '');
  return /^[+-]?\d+$/.test(digits) ? Number.parseInt(digits, 10) : -1;
}

/** The git refs, most specific first, that stand for an upstream revision (DESIGN.md's mapping). */
export function upstreamRefCandidates(upstream: Upstream): string[] {
  const pkg = upstream.package ?? '';
  const rev = upstream.revision;
  if (rev !== undefined && rev !== '' && rev !== 0 && rev !== -1) {
    const r = typeof rev === 'number' ? `v${rev}` : rev;
    return [`${pkg}/${r}`, r];
  }
  return [upstream.workspaceName || 'main'];
}
