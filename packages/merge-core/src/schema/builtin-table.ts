/**
 * The shape of the generated table of built-in kinds (builtin.generated.ts). Kept tiny on
 * purpose: one-letter keys, definitions referenced by index, scalars left out.
 */
import type { ListType } from './types.js';

/** A field's type: an index into `defs`, a list, or an inline object. */
export type TableType = number | TableList | TableObject;

export interface TableList {
  /** List type. */
  readonly l: ListType;
  /** Associative keys (list type `map`). */
  readonly k?: readonly string[];
  /** 1 when the schema said so explicitly (x-kubernetes-list-type or a patch strategy). */
  readonly x?: 1;
  /** Item type, when the items have something to say. */
  readonly i?: TableType;
}

export interface TableObject {
  /** `atomic` when x-kubernetes-map-type says so; granular otherwise. */
  readonly m?: 'atomic';
  /** Fields that are, or lead to, lists and atomic maps. */
  readonly f?: { readonly [field: string]: TableType };
  /** Type of every other key (additionalProperties). */
  readonly a?: TableType;
}

export interface BuiltinTable {
  /** [OpenAPI names sharing this structure, the structure]. */
  readonly defs: readonly (readonly [readonly string[], TableObject])[];
  /** [group, kind, [version, index into defs][]]. */
  readonly kinds: readonly (readonly [string, string, readonly (readonly [string, number])[]])[];
}
