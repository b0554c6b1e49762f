import { isMap, isScalar, isSeq, Scalar, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import type { Side } from '../errors.js';
import type { FieldPath } from '../path.js';
import type { ListSchema, ObjectSchema, Schema, SchemaRegistry } from '../schema/types.js';
import { isMissingOrNull, keyName, pairsOf, scalarText, stringField, type YamlNode } from '../yaml/nodes.js';
import type { Element, FieldElement, ItemElement, LeafReason, ListElement, Sources } from './element.js';
import { sides } from './element.js';
import { holdsPinnedPair, isPinnedPair } from './pin.js';

export interface CollateOptions {
  readonly registry?: SchemaRegistry | undefined;
  /** Make a list associative by a fallback key when no schema speaks (kpt's `--infer-keys`). */
  readonly inferKeys: boolean;
  /** The fallback keys, in precedence order: the first that every item of a source has wins. */
  readonly fallbackKeys: readonly string[];
  /** kyaml's field-level schemas written as JSON in a comment on the field. */
  readonly commentSchema?: ((comment: string) => Schema | undefined) | undefined;
  /** Reports bad input at a path; must throw. */
  readonly fail: (code: 'missing-list-key', path: FieldPath, side: Side, reason: string) => never;
}

/** Collates three nodes (any may be absent) at a path into an Element tree. */
export function collate(sources: Sources<YamlNode>, path: FieldPath, schema: Schema | undefined, options: CollateOptions): Element {
  const first = sides.map((s) => sources[s]).find((n) => !isMissingOrNull(n));
  if (first === undefined) return { kind: 'leaf', reason: 'scalar', path, sources };

  if (isMap(first)) {
    if (!allAre(sources, isMap)) return leaf('mixed-kinds', path, sources);
    const objectSchema = schema?.kind === 'object' ? schema : lookupKind(sources as Sources<YAMLMap>, options.registry);
    if (objectSchema?.mapType === 'atomic') return leaf('atomic-map', path, sources);
    return collateMap(sources as Sources<YAMLMap>, path, objectSchema, options);
  }
  if (isSeq(first)) {
    if (!allAre(sources, isSeq)) return leaf('mixed-kinds', path, sources);
    return collateList(sources as Sources<YAMLSeq>, path, schema?.kind === 'list' ? schema : undefined, schema !== undefined, options);
  }
  if (!allAre(sources, isScalar)) return leaf('mixed-kinds', path, sources);
  return leaf('scalar', path, sources);
}

function leaf(reason: LeafReason, path: FieldPath, sources: Sources<YamlNode>): Element {
  // A value merged whole that holds a pinned field is kept whole, as local has it.
  if (reason !== 'scalar' && holdsPinnedPair(sources.local)) return { kind: 'leaf', reason, path, sources, holdsPin: true };
  return { kind: 'leaf', reason, path, sources };
}

function allAre(sources: Sources<YamlNode>, guard: (n: unknown) => boolean): boolean {
  return sides.every((s) => isMissingOrNull(sources[s]) || guard(sources[s]));
}

/** kyaml resolves a schema from apiVersion/kind wherever a map carries both (the root, List items). */
function lookupKind(sources: Sources<YAMLMap>, registry: SchemaRegistry | undefined): ObjectSchema | undefined {
  if (!registry) return undefined;
  for (const side of sides) {
    const map = sources[side];
    if (!isMap(map)) continue;
    const apiVersion = stringField(map, 'apiVersion');
    const kind = stringField(map, 'kind');
    if (!apiVersion || !kind) continue;
    const slash = apiVersion.lastIndexOf('/');
    const found = registry.lookup({
      group: slash === -1 ? '' : apiVersion.slice(0, slash),
      version: slash === -1 ? apiVersion : apiVersion.slice(slash + 1),
      kind,
    });
    if (found) return found;
  }
  return undefined;
}

function collateMap(sources: Sources<YAMLMap>, path: FieldPath, schema: ObjectSchema | undefined, options: CollateOptions): Element {
  const pairIndex: Record<Side, Map<string, Pair<unknown, unknown>>> = { local: new Map(), origin: new Map(), upstream: new Map() };
  const names: string[] = [];
  const seen = new Set<string>();
  // Fields are visited in local's order, then upstream's new ones, then origin's.
  for (const side of ['local', 'upstream', 'origin'] as const) {
    const map = sources[side];
    if (!isMap(map)) continue;
    for (const pair of pairsOf(map)) {
      const name = keyName(pair.key);
      if (!pairIndex[side].has(name)) pairIndex[side].set(name, pair);
      if (!seen.has(name)) {
        seen.add(name);
        names.push(name);
      }
    }
  }
  let holdsPin = false;

  const fields: FieldElement[] = names.map((name) => {
    const pairs: { -readonly [S in Side]?: Pair<unknown, unknown> } = {};
    const keys: { -readonly [S in Side]?: Scalar } = {};
    const values: { -readonly [S in Side]?: YamlNode } = {};
    let commentSchema: Schema | undefined;
    for (const side of sides) {
      const pair = pairIndex[side].get(name);
      if (!pair) continue;
      pairs[side] = pair;
      if (isScalar(pair.key)) keys[side] = pair.key;
      values[side] = (pair.value ?? nullScalar(pair)) as YamlNode;
      if (options.commentSchema && !commentSchema) commentSchema = schemaInComments(pair, sources[side]!, options.commentSchema);
    }
    const fieldSchema = commentSchema ?? schema?.field(name);
    let value = collate(values, path.field(name), fieldSchema, options);
    if (pairs.local && isPinnedPair(pairs.local)) value = { ...value, pinned: true, holdsPin: true };
    if (value.holdsPin) holdsPin = true;
    return { name, keys, pairs, value };
  });
  return holdsPin ? { kind: 'map', path, sources, schema, fields, holdsPin } : { kind: 'map', path, sources, schema, fields };
}

const nullScalars = new WeakMap<object, Scalar>();

/** `x:` with nothing after it has no value node; a (stable) null scalar stands in for it. */
function nullScalar(pair: Pair<unknown, unknown>): Scalar {
  let node = nullScalars.get(pair);
  if (!node) {
    node = new Scalar(null);
    nullScalars.set(pair, node);
  }
  return node;
}

function schemaInComments(pair: Pair<unknown, unknown>, map: YAMLMap, parse: (comment: string) => Schema | undefined): Schema | undefined {
  const value = pair.value as { comment?: string | null; commentBefore?: string | null } | null;
  const key = pair.key as { comment?: string | null; commentBefore?: string | null } | null;
  // A head comment on a map's first field is filed as the map's own comment by the parser.
  const head = map.items[0] === pair ? map.commentBefore : undefined;
  for (const text of [value?.comment, value?.commentBefore, key?.comment, key?.commentBefore, head]) {
    if (!text?.includes('{')) continue;
    const found = parse(text.trim());
    if (found) return found;
  }
  return undefined;
}

function collateList(
  sources: Sources<YAMLSeq>,
  path: FieldPath,
  schema: ListSchema | undefined,
  schemaSpoke: boolean,
  options: CollateOptions,
): Element {
  let listType: 'atomic' | 'set' | 'map' = 'atomic';
  let keys: readonly string[] = [];
  if (schema) {
    listType = schema.listType;
    keys = schema.keys;
    if (listType === 'map' && keys.length === 0) listType = 'atomic';
  } else if (!schemaSpoke && options.inferKeys) {
    const inferred = inferKeys(sources, options.fallbackKeys);
    if (inferred) {
      listType = 'map';
      keys = [inferred];
    }
  }
  if (listType === 'atomic') return leaf('atomic-list', path, sources);
  if (listType === 'set') {
    const scalarsOnly = sides.every((s) => !isSeq(sources[s]) || sources[s]!.items.every((i) => isScalar(i)));
    if (!scalarsOnly) return leaf('atomic-list', path, sources);
    return withPins({ kind: 'list', listType, keys: [], path, sources, items: matchSetItems(sources, path, options) });
  }
  const items = matchKeyedItems(sources, keys, schema?.deriveKey, schema?.items(), path, options);
  if (!schema?.deriveKey && !schema?.wholeItems) return withPins({ kind: 'list', listType, keys, path, sources, items });
  return withPins({
    kind: 'list',
    listType,
    keys,
    path,
    sources,
    ...(schema.deriveKey ? { derivedKey: true } : {}),
    ...(schema.wholeItems ? { wholeItems: true } : {}),
    items: schema.wholeItems ? items.map((i) => ({ ...i, value: { ...i.value, wholeItem: true } })) : items,
  });
}

function withPins(list: ListElement): ListElement {
  return list.items.some((i) => i.value.holdsPin) ? { ...list, holdsPin: true } : list;
}

/** The first fallback key that every item of some source has (kyaml's inference). */
function inferKeys(sources: Sources<YAMLSeq>, fallbackKeys: readonly string[]): string | undefined {
  let candidate: string | undefined;
  for (const side of sides) {
    const seq = sources[side];
    if (!isSeq(seq) || seq.items.length === 0) continue;
    const key = fallbackKeys.find((k) => seq.items.every((item) => isMap(item) && hasKey(item, k)));
    if (key) {
      candidate = key;
      break;
    }
  }
  if (!candidate) return undefined;
  // Every item of every side must carry the key, or items could not be matched: stay atomic.
  for (const side of sides) {
    const seq = sources[side];
    if (isSeq(seq) && !seq.items.every((item) => isMap(item) && hasKey(item, candidate!))) return undefined;
  }
  return candidate;
}

function hasKey(map: YAMLMap, key: string): boolean {
  return pairsOf(map).some((p) => keyName(p.key) === key);
}

interface Group {
  values: (string | undefined)[];
  nodes: { -readonly [S in Side]?: YamlNode };
}

/**
 * Items matched by their key fields. With several keys (container ports: containerPort and
 * protocol), an item missing a secondary key still matches one that has it (kyaml does the same).
 */
function matchKeyedItems(
  sources: Sources<YAMLSeq>,
  keys: readonly string[],
  deriveKey: ((item: YAMLMap) => string | undefined) | undefined,
  itemSchema: Schema | undefined,
  path: FieldPath,
  options: CollateOptions,
): ItemElement[] {
  const groups: Group[] = [];
  for (const side of sides) {
    const seq = sources[side];
    if (!isSeq(seq)) continue;
    seq.items.forEach((item, index) => {
      if (!isMap(item)) {
        options.fail(
          'missing-list-key',
          path.index(index),
          side,
          `list item is not a mapping, but the list is keyed by ${keys.join(', ')}`,
        );
      }
      const values = deriveKey
        ? [deriveKey(item)]
        : keys.map((k) => {
            const pair = pairsOf(item).find((p) => keyName(p.key) === k);
            return pair && isScalar(pair.value) && pair.value.value !== null ? scalarText(pair.value) : undefined;
          });
      if (values[0] === undefined && values.every((v) => v === undefined)) {
        options.fail(
          'missing-list-key',
          path.index(index),
          side,
          `list item has no "${keys[0]}" (the list is keyed by ${keys.join(', ')})`,
        );
      }
      const group = groups.find((g) => g.nodes[side] === undefined && compatible(g.values, values));
      if (group) {
        group.nodes[side] = item;
        group.values = group.values.map((v, i) => v ?? values[i]);
      } else {
        groups.push({ values, nodes: { [side]: item } });
      }
    });
  }
  return groups.map((g) => {
    const identity = keys.flatMap((k, i) => (g.values[i] === undefined ? [] : [[k, g.values[i]!] as const]));
    return { identity, value: { ...collate(g.nodes, path.keyed(identity), itemSchema, options), keyedItem: true } };
  });
}

function compatible(a: readonly (string | undefined)[], b: readonly (string | undefined)[]): boolean {
  let common = false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === undefined || b[i] === undefined) continue;
    if (a[i] !== b[i]) return false;
    common = true;
  }
  return common;
}

/** Items of a set matched by value; the n-th duplicate on one side matches the n-th on another. */
function matchSetItems(sources: Sources<YAMLSeq>, path: FieldPath, options: CollateOptions): ItemElement[] {
  const groups: { text: string; nodes: { -readonly [S in Side]?: YamlNode } }[] = [];
  for (const side of sides) {
    const seq = sources[side];
    if (!isSeq(seq)) continue;
    for (const item of seq.items) {
      const text = isScalar(item) ? scalarText(item) : '';
      const group = groups.find((g) => g.text === text && g.nodes[side] === undefined);
      if (group) group.nodes[side] = item as YamlNode;
      else groups.push({ text, nodes: { [side]: item as YamlNode } });
    }
  }
  return groups.map((g) => ({
    identity: [['', g.text] as const],
    value: collate(g.nodes, path.value(g.text), undefined, options),
  }));
}
