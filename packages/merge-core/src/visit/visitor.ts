/**
 * Phase 2 of the merge (seed 002): a visitor decides, for each collated element, what the
 * merged value is. A strategy is a visitor; adding a strategy is adding a file (and naming it in
 * `delegating.ts`). The walker (`walk.ts`) only walks, orders and builds what the visitors decide.
 */
import type { Element, FieldElement, LeafElement, ListElement, MapElement } from '../collate/element.js';
import type { RuleName } from '../errors.js';

/** What to do where local and upstream both changed the same value. */
export type ConflictStrategy = 'upstream-wins' | 'local-wins' | 'fail';

/**
 * What the walker records for a field besides its value: a conflict and which side won it, or
 * a pin's decision (local's pinned value kept over upstream's change). Nothing when neither.
 */
export type Report = 'upstream-won' | 'local-won' | 'pinned';

/** A scalar or atomic value is taken whole from one side, or cleared. */
export interface LeafDecision {
  readonly take: 'local' | 'upstream' | 'clear';
  readonly rule: RuleName;
  readonly report?: Report | undefined;
}

/**
 * A map or associative list is cleared, kept whole as local has it, or its items are merged into
 * local (or a new one).
 */
export type CollectionDecision = (
  | { readonly action: 'clear' }
  | { readonly action: 'keep' }
  | { readonly action: 'merge'; readonly base: 'local' | 'new' }
) & { readonly rule: RuleName; readonly report?: Report | undefined };

/** Where an empty result was found: `rebuilt` when no local node was merged into; `item` for a list's item. */
export interface Emptied {
  readonly rebuilt: boolean;
  readonly item: boolean;
}

export interface MergeVisitor {
  readonly name: string;
  leaf(element: LeafElement): LeafDecision;
  map(element: MapElement): CollectionDecision;
  list(element: ListElement): CollectionDecision;
  /** Whether a map or list the merge left with no fields or items stays (empty) or goes. */
  keepEmpty(element: Element, where: Emptied): boolean;
  /** Whose comments a field's key keeps (its line and the lines above it): local's, or upstream's. */
  keyComments(field: FieldElement): 'local' | 'upstream';
  /**
   * Whose comments a value keeps, whichever side its value comes from: a scalar's line comment, a
   * map's or list's own comments (the one above its first key), a value merged whole's comments.
   */
  valueComments(element: Element): 'local' | 'upstream';
}

export type { Element };
