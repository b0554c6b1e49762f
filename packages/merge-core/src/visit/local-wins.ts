/**
 * Local wins every conflict: where upstream would replace or delete a value that local changed,
 * the local value stays. Everything else follows the wrapped visitor.
 */
import type { LeafElement, ListElement, MapElement } from '../collate/element.js';
import { localChanged } from './compare.js';
import type { CollectionDecision, LeafDecision, MergeVisitor } from './visitor.js';

export function localWins(base: MergeVisitor): MergeVisitor {
  return {
    ...base,
    name: 'local-wins',
    leaf(e: LeafElement): LeafDecision {
      const decision = base.leaf(e);
      if (decision.take !== 'local' && localChanged(e.sources)) return { take: 'local', rule: 'both-changed-local-wins' };
      return decision;
    },
    map(e: MapElement): CollectionDecision {
      const decision = base.map(e);
      if (decision.action === 'clear' && e.sources.local !== undefined && localChanged(e.sources)) {
        return { action: 'merge', base: 'local', rule: 'both-changed-local-wins' };
      }
      return decision;
    },
    list(e: ListElement): CollectionDecision {
      const decision = base.list(e);
      if (decision.action === 'clear' && e.sources.local !== undefined && localChanged(e.sources)) {
        return { action: 'merge', base: 'local', rule: 'both-changed-local-wins' };
      }
      return decision;
    },
  };
}
