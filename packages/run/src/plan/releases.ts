import { hideCredentials, latestRelease, releaseTagPatterns, type Release, type RemoteRef } from '@kdelta/git-source';
import { describeSource, UPSTREAM_POLICY_ANNOTATION, UPSTREAM_PRERELEASES_ANNOTATION, type Source } from '../control/control.js';

/**
 * Following releases: the ref a variant without a revision (or with `highest-semver`) takes, as
 * Porch takes the latest published revision of the upstream package. Which tags are releases, and
 * in which order, is git-source's `latestRelease` (Porch's `<package>/v<N>`, else
 * `<package>/vX.Y.Z`, else `vX.Y.Z`); this file says what the run makes of it.
 */

/** What following releases needs to know of a variant's upstream. */
export interface FollowedUpstream {
  /** The control document the variant comes from, and where its upstream is in it (`spec.upstream`). */
  readonly source: Source;
  readonly upstreamField: string;
  readonly url: string;
  /** The package path in the upstream repository, as the variant names it (its tags are named by it). */
  readonly package: string;
  readonly policy: 'pinned' | 'highest-semver';
  readonly prereleases: boolean;
}

export type ReleaseResolution =
  | { readonly ok: true; readonly value: { readonly ref: string; readonly kind: 'tag'; readonly commit: string; readonly reason: string } }
  /** `no-release`: no tag of the upstream is a release of the package. */
  | { readonly ok: false; readonly code: 'no-release'; readonly error: string };

/** Why this release, for the proposal and `kdelta proposals` (`latest release v6 of free5gc-operator`). */
function reasonOf(release: Release, upstream: FollowedUpstream): string {
  const pkg = upstream.package || '/';
  const policy = upstream.policy === 'highest-semver' ? `, ${UPSTREAM_POLICY_ANNOTATION}: highest-semver` : '';
  const pre = upstream.prereleases ? ', pre-releases included' : '';
  const own = releaseTagPatterns(upstream.package)
    .filter((p) => p.includes('/'))
    .map((p) => `"${p}"`)
    .join(' or ');
  const scope = release.scope === 'package' ? `of ${pkg}` : `of the repository (${pkg} has no tag ${own || `"${pkg}/vX.Y.Z"`})`;
  return `latest release ${release.version} ${scope}${policy}${pre}`;
}

/**
 * The latest release of the variant's package, or a `no-release` failure that says which tags
 * were looked for. Never the branch's head: a package nobody released has no revision to follow
 * (Porch too finds no published revision to clone), and following the branch instead would report
 * the downstream up to date with whatever the branch holds; `spec.upstream.revision` names a
 * branch when that is what is meant.
 */
export function followLatestRelease(upstream: FollowedUpstream, refs: readonly RemoteRef[]): ReleaseResolution {
  const release = latestRelease(refs, { packagePath: upstream.package, prereleases: upstream.prereleases });
  if (release) return { ok: true, value: { ref: release.tag, kind: 'tag', commit: release.commit, reason: reasonOf(release, upstream) } };
  const pkg = upstream.package || '/';
  const lookedFor = releaseTagPatterns(upstream.package)
    .map((p) => `"${p}"`)
    .join(', ');
  // a pre-release that would have been followed: say what lets it count
  const skipped = !upstream.prereleases && latestRelease(refs, { packagePath: upstream.package, prereleases: true });
  const pre = skipped ? `; pre-releases such as "${skipped.tag}" count only with ${UPSTREAM_PRERELEASES_ANNOTATION}: "true"` : '';
  const found = `no release tag of ${pkg} found in ${hideCredentials(upstream.url)} (looked for ${lookedFor}${pre})`;
  const error =
    upstream.policy === 'highest-semver'
      ? `${describeSource(upstream.source)}: metadata.annotations.${UPSTREAM_POLICY_ANNOTATION}: highest-semver, but ${found}`
      : `${describeSource(upstream.source)}: ${upstream.upstreamField}.revision: ${found}; without a revision the variant follows the package's latest release: tag one, or name a tag, branch or commit in ${upstream.upstreamField}.revision`;
  return { ok: false, code: 'no-release', error };
}
