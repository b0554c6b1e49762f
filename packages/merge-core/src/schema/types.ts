/**
 * Schemas in the words of KEP 0006 (seed 003): what a merge needs to know about a field,
 * and nothing else. Built from OpenAPI definitions, CRDs, or a generated table of built-ins.
 */
import type { YAMLMap } from 'yaml';

/** How a list merges: `atomic` is replaced whole, `set` merges by value, `map` merges by keys. */
export type ListType = 'atomic' | 'set' | 'map';

/** How a map merges: `granular` field by field, `atomic` replaced whole. */
export type MapType = 'granular' | 'atomic';

export interface ObjectSchema {
  readonly kind: 'object';
  readonly mapType: MapType;
  /** The schema of a named field, or undefined when the schema says nothing about it. */
  field(name: string): Schema | undefined;
}

export interface ListSchema {
  readonly kind: 'list';
  readonly listType: ListType;
  /** Associative keys, for `listType: map` (x-kubernetes-list-map-keys or the patch merge key). */
  readonly keys: readonly string[];
  /** True when the schema said so explicitly (x-kubernetes-list-type or a patch strategy). */
  readonly explicit: boolean;
  items(): Schema | undefined;
  /**
   * For `listType: map` lists whose identity no single field holds (a Kptfile pipeline's
   * functions, seed 000): the key of an item, computed from it. `keys` then names the key in
   * paths only (`[key="..."]`) and is never written into an item.
   */
  readonly deriveKey?: ((item: YAMLMap) => string | undefined) | undefined;
  /**
   * Items are whole units, like resources in a package (seed 001's resource-level rules apply to
   * them): an item only local has survives upstream deleting the list, and an item upstream
   * deleted that local changed is kept whole. (Their order merges by the positional rule of every
   * keyed list, `visit/order.ts`.)
   */
  readonly wholeItems?: boolean | undefined;
}

export interface ScalarSchema {
  readonly kind: 'scalar';
}

export type Schema = ObjectSchema | ListSchema | ScalarSchema;

/** Group/version/kind of a resource; group is '' for the core group. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Finds the schema of a resource type. Registries are layered: the first that knows a kind wins. */
export interface SchemaRegistry {
  lookup(gvk: GroupVersionKind): ObjectSchema | undefined;
}

/** Resolves OpenAPI definition names (`#/definitions/<name>` references in schemas and comments). */
export interface DefinitionSource {
  /** The schema of a definition by its OpenAPI name, or undefined when unknown. */
  definition(name: string): Schema | undefined;
}

/** A registry that can also resolve definitions by name (every registry built here is one). */
export interface SchemaSource extends SchemaRegistry, DefinitionSource {}
