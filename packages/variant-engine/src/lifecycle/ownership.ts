import type { PackageVariant, StringMap } from '../api/types.js';

/**
 * Which downstream copies a variant owns, adopts, deletes or orphans: Porch's `getDownstreamPRs`
 * and `deleteOrOrphan`, on kdelta's medium (see the README's mapping):
 * - a Draft or Proposed revision is an open pull request on branch `kdelta/<variant>`;
 * - a Published revision is the package as merged on the downstream branch;
 * - DeletionProposed is an open pull request that removes the package directory;
 * - an owner reference is the ownership annotation on the downstream Kptfile.
 */
export const OWNER_ANNOTATION = 'config.porch.kpt.dev/package-variant';

export type Lifecycle = '' | 'Draft' | 'Proposed' | 'Published' | 'DeletionProposed';

export interface DownstreamCopy {
  readonly repo: string;
  readonly package: string;
  readonly lifecycle: Lifecycle | string;
  /** Published revisions are numbered (in git: the count of merged variant changes, or a tag). */
  readonly revision?: number | undefined;
  /** Owner keys (variant uid, else name) recorded in the ownership annotation. */
  readonly owners: readonly string[];
  readonly labels?: StringMap | undefined;
  readonly annotations?: StringMap | undefined;
  /** Where the copy lives: a branch, a pull request number... (opaque to the decisions). */
  readonly ref?: string | undefined;
}

export type LifecycleAction =
  /** Take over an existing copy: record ownership, merge the variant's labels and annotations. */
  | { readonly op: 'adopt'; readonly copy: DownstreamCopy; readonly updated: DownstreamCopy }
  /** Close the pull request and delete its branch. */
  | { readonly op: 'delete'; readonly copy: DownstreamCopy }
  /** Published copies are never deleted outright: propose their removal in a pull request. */
  | { readonly op: 'propose-deletion'; readonly copy: DownstreamCopy; readonly updated: DownstreamCopy }
  /** Drop this variant's ownership and leave the copy in place. */
  | { readonly op: 'orphan'; readonly copy: DownstreamCopy; readonly updated: DownstreamCopy };

/** The key a variant is recorded under: its uid when it has one (Porch), else its name (files). */
export function ownerKey(pv: PackageVariant): string {
  return pv.metadata?.uid || pv.metadata?.name || '';
}

function isPublished(lifecycle: string): boolean {
  return lifecycle === 'Published' || lifecycle === 'DeletionProposed';
}

/** Porch's `deleteOrOrphan`: what to do with a copy this variant no longer wants. */
export function deleteOrOrphan(copy: DownstreamCopy, pv: PackageVariant): LifecycleAction | undefined {
  const policy = pv.spec?.deletionPolicy ?? '';
  if (policy === 'orphan') {
    const key = ownerKey(pv);
    return { op: 'orphan', copy, updated: { ...copy, owners: copy.owners.filter((o) => o !== key) } };
  }
  if (policy !== '' && policy !== 'delete') return undefined;
  switch (copy.lifecycle) {
    case '':
    case 'Draft':
    case 'Proposed':
      return { op: 'delete', copy };
    case 'Published':
      return { op: 'propose-deletion', copy, updated: { ...copy, lifecycle: 'DeletionProposed' } };
    default:
      return undefined;
  }
}

export interface DownstreamSelection {
  /** The copies to work on: every owned draft, else the latest published copy, else none (create one). */
  readonly downstreams: DownstreamCopy[];
  /** Adoptions and deletions, in the order they are decided. */
  readonly actions: LifecycleAction[];
}

/** Porch's `getDownstreamPRs`. */
export function selectDownstreams(pv: PackageVariant, copies: readonly DownstreamCopy[]): DownstreamSelection {
  const key = ownerKey(pv);
  const spec = pv.spec ?? {};
  const adoptExisting = spec.adoptionPolicy === 'adoptExisting';
  const drafts: DownstreamCopy[] = [];
  const actions: LifecycleAction[] = [];
  let latestPublished: DownstreamCopy | undefined;
  for (let copy of copies) {
    const owned = copy.owners.includes(key);
    if (!owned && !adoptExisting) continue;
    if (copy.repo !== spec.downstream?.repo || copy.package !== spec.downstream?.package) {
      if (owned) {
        const action = deleteOrOrphan(copy, pv);
        if (action) actions.push(action);
      }
      continue;
    }
    if (!owned) {
      const updated: DownstreamCopy = {
        ...copy,
        owners: [...copy.owners, key],
        labels: { ...(copy.labels ?? {}), ...(spec.labels ?? {}) },
        annotations: { ...(copy.annotations ?? {}), ...(spec.annotations ?? {}) },
      };
      actions.push({ op: 'adopt', copy, updated });
      copy = updated;
    }
    if (isPublished(copy.lifecycle)) {
      if (!latestPublished || (copy.revision ?? 0) > (latestPublished.revision ?? 0)) latestPublished = copy;
    } else {
      drafts.push(copy);
    }
  }
  if (drafts.length > 0) return { downstreams: drafts, actions };
  return { downstreams: latestPublished ? [latestPublished] : [], actions };
}
