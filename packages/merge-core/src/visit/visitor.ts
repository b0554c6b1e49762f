/**
 * Phase 2 of the merge (seed 002): a visitor decides, for each collated element, what the
 * merged value is. A strategy is a visitor; adding a strategy is adding a file.
 */
import type { Scalar } from 'yaml';
import type { Element, LeafElement, ListElement, MapElement, Sources } from '../collate/element.js';
import type { RuleName } from '../errors.js';

/** A scalar or atomic value is taken whole from one side, or cleared. */
export interface LeafDecision {
  readonly take: 'local' | 'upstream' | 'clear';
  readonly rule: RuleName;
}

/**
 * A map or associative list is cleared, kept whole as local has it, or its items are merged into
 * local (or a new one).
 */
export type CollectionDecision =
  | { readonly action: 'clear'; readonly rule: RuleName }
  | { readonly action: 'keep'; readonly rule: RuleName }
  | { readonly action: 'merge'; readonly base: 'local' | 'new'; readonly rule: RuleName };

export interface MergeVisitor {
  readonly name: string;
  leaf(element: LeafElement): LeafDecision;
  map(element: MapElement): CollectionDecision;
  list(element: ListElement): CollectionDecision;
  /** Whose comments a field's key keeps: local's, or upstream's. */
  keyComments(keys: Sources<Scalar>): 'local' | 'upstream';
  /** Whose comments a scalar taken from upstream keeps. */
  valueComments(element: LeafElement): 'local' | 'upstream';
}

export type { Element };
