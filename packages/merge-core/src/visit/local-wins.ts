/**
 * Local wins every conflict: where upstream would replace or delete a value that local changed,
 * the local value stays. This overrides one rule of seed 001, "If the field has been changed in
 * both upstream and local, update local with the value from upstream."; everything else follows
 * the rules it wraps.
 */
import type { LeafElement, ListElement, MapElement } from '../collate/element.js';
import { localChanged, sameOrBothEmpty } from './compare.js';
import type { CollectionDecision, LeafDecision, MergeVisitor } from './visitor.js';

export function localWins(rules: MergeVisitor): MergeVisitor {
  // A map or list upstream removed that local changed is merged into local's instead: its
  // fields decide one by one, local's changed ones staying.
  const keepChanged = (e: MapElement | ListElement, decision: CollectionDecision): CollectionDecision =>
    decision.action === 'clear' && e.sources.local !== undefined && localChanged(e.sources)
      ? { action: 'merge', base: 'local', rule: 'both-changed-local-wins' }
      : decision;
  return {
    ...rules,
    name: 'local-wins',
    leaf(e: LeafElement): LeafDecision {
      const decision = rules.leaf(e);
      if (decision.take !== 'local' && localChanged(e.sources)) {
        const report = sameOrBothEmpty(e.sources.local, e.sources.upstream) ? undefined : 'local-won';
        return { take: 'local', rule: 'both-changed-local-wins', report };
      }
      return decision;
    },
    map: (e: MapElement) => keepChanged(e, rules.map(e)),
    list: (e: ListElement) => keepChanged(e, rules.list(e)),
  };
}
