/**
 * kpt's resource-merge rules (seed 001), upstream winning every conflict. Each branch names the
 * rule it implements. The Kptfile merges by these rules too (with its own schema).
 */
import type { Scalar } from 'yaml';
import type { LeafElement, ListElement, MapElement, Sources } from '../collate/element.js';
import { isMissingOrNull } from '../yaml/nodes.js';
import { clearedBy, localChanged, sameComments, sameOrBothEmpty } from './compare.js';
import type { CollectionDecision, LeafDecision, MergeVisitor } from './visitor.js';

export function upstreamWins(): MergeVisitor {
  const cleared = (s: Sources<unknown>): boolean =>
    clearedBy(s.origin as never, s.upstream as never) || clearedBy(s.origin as never, s.local as never);

  return {
    name: 'upstream-wins',

    leaf(e: LeafElement): LeafDecision {
      const { origin, upstream } = e.sources;
      // "If the field is present in either upstream or local and the value is null, remove it."
      if (cleared(e.sources)) return { take: 'clear', rule: 'explicit-null' };
      const upstreamEmpty = isMissingOrNull(upstream);
      const originEmpty = isMissingOrNull(origin);
      // Added or removed upstream: take upstream (an upstream deletion wins over a local edit).
      if (upstreamEmpty !== originEmpty) return { take: 'upstream', rule: upstreamEmpty ? 'upstream-removed' : 'upstream-added' };
      // Not in origin nor upstream: the field is local only.
      if (upstreamEmpty) return { take: 'local', rule: 'local-only' };
      // Changed upstream: take upstream, even when local changed it too (upstream wins).
      if (!sameOrBothEmpty(upstream, origin)) return { take: 'upstream', rule: 'upstream-changed' };
      // Unchanged upstream: keep local, whatever local did.
      return { take: 'local', rule: 'unchanged-upstream' };
    },

    map(e: MapElement): CollectionDecision {
      const { local, upstream } = e.sources;
      if (cleared(e.sources)) return { action: 'clear', rule: 'explicit-null' };
      // A whole item (a pipeline's function) upstream deleted and local changed is kept whole, as a
      // resource would be: without its unchanged fields it would not be the same thing any more.
      if (e.wholeItem && upstream === undefined && e.sources.origin !== undefined && local !== undefined && localChanged(e.sources)) {
        return { action: 'keep', rule: 'deleted-upstream-modified-locally' };
      }
      // Missing from both local and upstream: gone.
      if (local === undefined && upstream === undefined) return { action: 'clear', rule: 'upstream-removed' };
      // Missing only locally: start empty and add the delta between origin and upstream.
      if (isMissingOrNull(local)) return { action: 'merge', base: 'new', rule: 'upstream-added' };
      // Present in both: merge field by field (also when upstream deleted it: local-only fields survive).
      return { action: 'merge', base: 'local', rule: 'upstream-changed' };
    },

    list(e: ListElement): CollectionDecision {
      const { local, origin, upstream } = e.sources;
      if (cleared(e.sources)) return { action: 'clear', rule: 'explicit-null' };
      if (isMissingOrNull(upstream) && !isMissingOrNull(origin)) {
        // "A resource only in local will be kept": whole items only local has outlive the list.
        if (e.wholeItems && e.items.some((i) => i.value.sources.local !== undefined && i.value.sources.origin === undefined)) {
          return { action: 'merge', base: 'local', rule: 'upstream-removed' };
        }
        // Deleted upstream: the associative list goes as a whole.
        return { action: 'clear', rule: 'upstream-removed' };
      }
      if (isMissingOrNull(local)) return { action: 'merge', base: 'new', rule: 'upstream-added' };
      return { action: 'merge', base: 'local', rule: 'upstream-changed' };
    },

    keyComments(keys: Sources<Scalar>): 'local' | 'upstream' {
      const { origin, upstream, local } = keys;
      if (!upstream) return 'local';
      if (!origin) return 'upstream';
      // An upstream comment change is taken only where local left the comment as it was.
      if (sameComments(origin, upstream)) return 'local';
      return !local || sameComments(origin, local) ? 'upstream' : 'local';
    },

    valueComments(e: LeafElement): 'local' | 'upstream' {
      const { origin, upstream, local } = e.sources;
      if (local === undefined) return 'upstream';
      return sameComments(origin, local) && !sameComments(origin, upstream) ? 'upstream' : 'local';
    },
  };
}
