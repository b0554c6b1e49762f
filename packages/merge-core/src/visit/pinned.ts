/**
 * The pin (`# kdelta:local`) as a visitor: a field local pinned is kept as local has it, whatever
 * upstream does; a map or list holding a pinned field is never cleared as a whole (its other
 * fields follow the strategy). The delegating visitor hands it the elements at or above a pin.
 */
import type { Element, FieldElement, LeafElement, ListElement, MapElement } from '../collate/element.js';
import { sameOrBothEmpty } from './compare.js';
import type { CollectionDecision, Emptied, LeafDecision, MergeVisitor, Report } from './visitor.js';

/** A pin is reported where upstream changed the value: that is where the pin decided. */
const decided = (e: Element): Report | undefined => (sameOrBothEmpty(e.sources.origin, e.sources.upstream) ? undefined : 'pinned');

export function pinned(strategy: MergeVisitor): MergeVisitor {
  const collection = (e: MapElement | ListElement, decide: () => CollectionDecision): CollectionDecision => {
    if (e.pinned) return { action: 'keep', rule: 'pinned-local', report: decided(e) };
    // A whole item (a pipeline's function) upstream deleted that holds a pin is kept whole: the
    // pinned field means nothing without the rest of it.
    if (e.wholeItem && e.sources.upstream === undefined && e.sources.origin !== undefined) {
      return { action: 'keep', rule: 'pinned-local', report: decided(e) };
    }
    const decision = decide();
    if (decision.action === 'clear') return { action: 'merge', base: 'local', rule: 'pinned-local' };
    return decision;
  };
  return {
    name: 'pinned',
    // A scalar or a value merged whole that holds a pin: local's, whole.
    leaf: (e: LeafElement): LeafDecision => ({ take: 'local', rule: 'pinned-local', report: decided(e) }),
    map: (e: MapElement) => collection(e, () => strategy.map(e)),
    list: (e: ListElement) => collection(e, () => strategy.list(e)),
    keepEmpty: (e: Element, where: Emptied) => strategy.keepEmpty(e, where),
    // A pinned field keeps local's key too: the pin comment is on its line.
    keyComments: (field: FieldElement) => (field.value.pinned ? 'local' : strategy.keyComments(field)),
    // A pinned value is local's whole, comments included (the pin may be one of them).
    valueComments: (e: Element) => (e.pinned || e.kind === 'leaf' ? 'local' : strategy.valueComments(e)),
  };
}
