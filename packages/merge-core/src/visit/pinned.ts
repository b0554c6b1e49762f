/**
 * The delegating visitor: picks, per field, which visitor decides it. A field local pinned with
 * `# kdelta:local` is kept as local has it; a map or list holding a pinned field is never cleared
 * as a whole (its other fields follow the strategy); everything else goes to the strategy.
 */
import type { LeafElement, ListElement, MapElement } from '../collate/element.js';
import type { CollectionDecision, LeafDecision, MergeVisitor } from './visitor.js';

export function withPins(strategy: MergeVisitor): MergeVisitor {
  const collection = (e: MapElement | ListElement, decide: () => CollectionDecision): CollectionDecision => {
    if (e.pinned && e.sources.local !== undefined) return { action: 'keep', rule: 'pinned-local' };
    // A whole item (a pipeline's function) upstream deleted that holds a pin is kept whole: the
    // pinned field means nothing without the rest of it.
    if (e.wholeItem && e.holdsPin && e.sources.local !== undefined && e.sources.upstream === undefined && e.sources.origin !== undefined) {
      return { action: 'keep', rule: 'pinned-local' };
    }
    const decision = decide();
    if (decision.action === 'clear' && e.holdsPin && e.sources.local !== undefined) {
      return { action: 'merge', base: 'local', rule: 'pinned-local' };
    }
    return decision;
  };
  return {
    ...strategy,
    leaf(e: LeafElement): LeafDecision {
      if ((e.pinned || e.holdsPin) && e.sources.local !== undefined) return { take: 'local', rule: 'pinned-local' };
      return strategy.leaf(e);
    },
    map: (e: MapElement) => collection(e, () => strategy.map(e)),
    list: (e: ListElement) => collection(e, () => strategy.list(e)),
  };
}
