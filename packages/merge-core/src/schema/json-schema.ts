/**
 * Turns an OpenAPI v2 / v3 (structural) schema node, as a plain JS value, into a Schema: lazily,
 * one node at a time, so recursive definitions (JSONSchemaProps) cost nothing until walked.
 */
import type { ListSchema, ListType, MapType, ObjectSchema, ScalarSchema, Schema } from './types.js';

/** Resolves a `$ref` string (`#/definitions/<name>`) to a schema. */
export type RefResolver = (ref: string) => Schema | undefined;

export type JsonObject = { readonly [key: string]: unknown };

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function own(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** The one scalar schema: scalars carry no merge information. */
export const SCALAR: ScalarSchema = Object.freeze({ kind: 'scalar' as const });

/** The `#/definitions/` prefix of local references. */
export const DEFINITIONS_REF = '#/definitions/';

export interface ListInfo {
  readonly listType: ListType;
  readonly keys: readonly string[];
  readonly explicit: boolean;
}

/**
 * The list type of an array schema (KEP 0006, seed 003), with the older patch markers as the
 * fallback the KEP describes:
 * - `x-kubernetes-list-type` wins when it is atomic, set or map; a map's keys are
 *   `x-kubernetes-list-map-keys`, else `[x-kubernetes-patch-merge-key]`;
 * - else a patch strategy containing `merge` makes a `map` keyed like above when there is a
 *   patch merge key, a `set` when there is none;
 * - else `atomic`; `explicit` only when some patch strategy was given (e.g. `replace`).
 */
export function listInfo(node: JsonObject): ListInfo {
  const lt = own(node, 'x-kubernetes-list-type');
  const rawStrategy = own(node, 'x-kubernetes-patch-strategy');
  const strategies =
    typeof rawStrategy === 'string'
      ? rawStrategy
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : [];
  const pmk = own(node, 'x-kubernetes-patch-merge-key');
  const lmk = own(node, 'x-kubernetes-list-map-keys');
  const mergeKey = typeof pmk === 'string' && pmk !== '' ? pmk : undefined;
  const keys = (): readonly string[] => {
    if (Array.isArray(lmk)) {
      const ks = lmk.filter((k): k is string => typeof k === 'string' && k !== '');
      if (ks.length > 0) return ks;
    }
    return mergeKey === undefined ? [] : [mergeKey];
  };
  if (lt === 'atomic' || lt === 'set' || lt === 'map') {
    return { listType: lt, keys: lt === 'map' ? keys() : [], explicit: true };
  }
  if (strategies.includes('merge')) {
    return mergeKey === undefined ? { listType: 'set', keys: [], explicit: true } : { listType: 'map', keys: keys(), explicit: true };
  }
  return { listType: 'atomic', keys: [], explicit: strategies.length > 0 };
}

export function mapTypeOf(node: JsonObject): MapType {
  return own(node, 'x-kubernetes-map-type') === 'atomic' ? 'atomic' : 'granular';
}

/**
 * An untyped node is a list when it carries list-only extensions: kyaml decides by the YAML
 * node, so `{"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}` in a
 * comment on a sequence describes that sequence.
 */
function saysList(node: JsonObject): boolean {
  const strategy = own(node, 'x-kubernetes-patch-strategy');
  return (
    own(node, 'x-kubernetes-list-type') !== undefined ||
    own(node, 'x-kubernetes-list-map-keys') !== undefined ||
    own(node, 'x-kubernetes-patch-merge-key') !== undefined ||
    (typeof strategy === 'string' && strategy.split(',').some((s) => s.trim() === 'merge'))
  );
}

const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

function typeOf(node: JsonObject): string | undefined {
  const t = own(node, 'type');
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === 'string' && x !== 'null');
  return undefined;
}

/** Converts schema nodes of one document; caches per node so each is converted once. */
export class JsonSchemaConverter {
  private readonly cache = new WeakMap<object, Schema | null>();

  constructor(private readonly resolveRef: RefResolver) {}

  convert(node: unknown): Schema | undefined {
    if (!isRecord(node)) return undefined;
    const hit = this.cache.get(node);
    if (hit !== undefined) return hit ?? undefined;
    const schema = this.build(node);
    this.cache.set(node, schema ?? null);
    return schema;
  }

  private build(node: JsonObject): Schema | undefined {
    const ref = own(node, '$ref');
    // A reference replaces the node (as OpenAPI v2 and kyaml's field comments treat it).
    if (typeof ref === 'string') return this.resolveRef(ref);
    const type = typeOf(node);
    const allOf = own(node, 'allOf');
    if (type === undefined && Array.isArray(allOf) && !own(node, 'properties') && !own(node, 'items')) {
      // `allOf: [{$ref}]` wrappers (descriptions and defaults beside a reference).
      for (const part of allOf) {
        const s = this.convert(part);
        if (s) return s;
      }
      return undefined;
    }
    if (type === 'array' || (type === undefined && (own(node, 'items') !== undefined || saysList(node)))) {
      return new JsonListSchema(node, this);
    }
    if (
      type === 'object' ||
      (type === undefined &&
        (isRecord(own(node, 'properties')) ||
          isRecord(own(node, 'additionalProperties')) ||
          own(node, 'x-kubernetes-map-type') !== undefined))
    ) {
      return new JsonObjectSchema(node, this);
    }
    if ((type !== undefined && SCALAR_TYPES.has(type)) || own(node, 'x-kubernetes-int-or-string') === true) {
      return SCALAR;
    }
    // `{}`, a bare description, x-kubernetes-preserve-unknown-fields alone: nothing said.
    return undefined;
  }
}

class JsonObjectSchema implements ObjectSchema {
  readonly kind = 'object' as const;
  readonly mapType: MapType;

  constructor(
    private readonly node: JsonObject,
    private readonly converter: JsonSchemaConverter,
  ) {
    this.mapType = mapTypeOf(node);
  }

  field(name: string): Schema | undefined {
    const props = own(this.node, 'properties');
    if (isRecord(props) && Object.hasOwn(props, name)) return this.converter.convert(props[name]);
    const extra = own(this.node, 'additionalProperties');
    return isRecord(extra) ? this.converter.convert(extra) : undefined;
  }
}

class JsonListSchema implements ListSchema {
  readonly kind = 'list' as const;
  readonly listType: ListType;
  readonly keys: readonly string[];
  readonly explicit: boolean;

  constructor(
    private readonly node: JsonObject,
    private readonly converter: JsonSchemaConverter,
  ) {
    const info = listInfo(node);
    this.listType = info.listType;
    this.keys = info.keys;
    this.explicit = info.explicit;
  }

  items(): Schema | undefined {
    return this.converter.convert(own(this.node, 'items'));
  }
}

/** A resolver for `#/definitions/<name>` against a definition lookup. */
export function definitionsResolver(definition: (name: string) => Schema | undefined): RefResolver {
  return (ref) => (ref.startsWith(DEFINITIONS_REF) ? definition(ref.slice(DEFINITIONS_REF.length)) : undefined);
}
