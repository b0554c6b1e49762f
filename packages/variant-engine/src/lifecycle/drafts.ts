import type { PackageVariant, StringMap, Upstream } from '../api/types.js';
import { findPublishedUpstream, findVariantUpstream, parseLockRevision, type Found, type UpstreamCandidate } from './upstream.js';

/** The branch that plays the role of Porch's Draft for a variant's downstream change. */
export function variantBranch(pv: PackageVariant): string {
  return `kdelta/${pv.metadata?.name ?? ''}`;
}

/**
 * A proposed change to a downstream copy (Porch's Draft PackageRevision): in kdelta, a branch
 * `kdelta/<variant>` and a pull request. Its labels and annotations come from the variant's
 * spec.labels / spec.annotations, never from the variant's own metadata.
 */
export interface DraftPlan<T> {
  readonly branch: string;
  readonly labels?: StringMap | undefined;
  readonly annotations?: StringMap | undefined;
  readonly task:
    | { readonly type: 'upgrade'; readonly oldUpstream: T; readonly newUpstream: T; readonly strategy: 'resource-merge' }
    | { readonly type: 'edit' };
}

function common(pv: PackageVariant): Pick<DraftPlan<never>, 'branch' | 'labels' | 'annotations'> {
  return { branch: variantBranch(pv), labels: pv.spec?.labels, annotations: pv.spec?.annotations };
}

/**
 * Porch's `createUpgradeDraft`: update a published copy from the upstream revision recorded in its
 * `upstreamLock` (`pkg/v1` → revision 1) to the variant's upstream, with kpt's resource-merge.
 */
export function planUpgrade<T extends UpstreamCandidate>(
  pv: PackageVariant,
  upstreamLockRef: string | undefined,
  candidates: readonly T[],
): Found<DraftPlan<T>> {
  const upstream: Upstream = pv.spec?.upstream ?? {};
  const oldUpstream = findPublishedUpstream({ ...upstream, revision: parseLockRevision(upstreamLockRef) }, candidates);
  if (!oldUpstream.ok) return oldUpstream;
  const newUpstream = findVariantUpstream(upstream, candidates);
  if (!newUpstream.ok) return newUpstream;
  return {
    ok: true,
    index: newUpstream.index,
    value: {
      ...common(pv),
      task: { type: 'upgrade', oldUpstream: oldUpstream.value, newUpstream: newUpstream.value, strategy: 'resource-merge' },
    },
  };
}

/** Porch's `createEditDraft`: a copy of the published package on which the mutations are re-applied. */
export function planEdit(pv: PackageVariant): DraftPlan<never> {
  return { ...common(pv), task: { type: 'edit' } };
}
