/**
 * Phase 1 of the merge (seed 002): the three sources collated into one tree that holds, for
 * every field, the origin, upstream and local node side by side. Every identity decision is
 * made here; the visitors only decide values, and the walker orders the result (`visit/order.ts`).
 */
import type { Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import type { FieldPath } from '../path.js';
import type { ObjectSchema } from '../schema/types.js';
import type { YamlNode } from '../yaml/nodes.js';

/** One node per side; an absent key means the field is absent on that side. */
export interface Sources<N> {
  readonly origin?: N | undefined;
  readonly upstream?: N | undefined;
  readonly local?: N | undefined;
}

/** Why a value is merged as one piece. */
export type LeafReason = 'scalar' | 'atomic-list' | 'atomic-map' | 'mixed-kinds';

/** What every element carries besides its kind. */
interface ElementBase {
  /** Local marks the field `# kdelta:local`: it keeps local's value, whatever upstream does. */
  readonly pinned?: boolean;
  /** A pinned field is at or below this element: it may not be cleared as a whole. */
  readonly holdsPin?: boolean;
  /** An item of a list whose items are whole units (`ListSchema.wholeItems`). */
  readonly wholeItem?: boolean;
  /** An item of a keyed list (a container, a port, a pipeline's function). */
  readonly keyedItem?: boolean;
}

/** A scalar, or a list or map that the schema makes atomic: taken whole from one side. */
export interface LeafElement extends ElementBase {
  readonly kind: 'leaf';
  readonly reason: LeafReason;
  readonly path: FieldPath;
  readonly sources: Sources<YamlNode>;
}

export interface FieldElement {
  readonly name: string;
  /** The key nodes, which carry the field's head and line comments. */
  readonly keys: Sources<Scalar>;
  readonly pairs: Sources<Pair<unknown, unknown>>;
  readonly value: Element;
}

export interface MapElement extends ElementBase {
  readonly kind: 'map';
  readonly path: FieldPath;
  readonly sources: Sources<YAMLMap>;
  readonly schema: ObjectSchema | undefined;
  /** Every field of the union of the three maps, in the order the rules visit them. */
  readonly fields: readonly FieldElement[];
}

export interface ItemElement {
  /** Key field values (`map` lists) or the item's own text (`set` lists). */
  readonly identity: readonly (readonly [string, string])[];
  readonly value: Element;
}

/** An associative list: `map` (items matched by key fields) or `set` (matched by value). */
export interface ListElement extends ElementBase {
  readonly kind: 'list';
  readonly listType: 'map' | 'set';
  readonly keys: readonly string[];
  /** The key is computed from each item (`ListSchema.deriveKey`), not held by a field. */
  readonly derivedKey?: boolean;
  /** Items are whole units, like resources of a package (`ListSchema.wholeItems`). */
  readonly wholeItems?: boolean;
  readonly path: FieldPath;
  readonly sources: Sources<YAMLSeq>;
  /** Items in visit order: local's, then new ones as they first appear in origin, upstream (the walker orders the result, `visit/order.ts`). */
  readonly items: readonly ItemElement[];
}

export type Element = LeafElement | MapElement | ListElement;

export const sides = ['local', 'origin', 'upstream'] as const;
