/**
 * Small helpers over `yaml` (eemeli) nodes, in the vocabulary of the merge: a field is
 * *absent* (no pair), *null* (present with an explicit null), or has a value.
 */
import { type Alias, isAlias, isMap, isPair, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';

export type YamlNode = Scalar | YAMLMap | YAMLSeq | Alias;

export function isNode(value: unknown): value is YamlNode {
  return isScalar(value) || isMap(value) || isSeq(value) || isAlias(value);
}

/** An explicit null: `x: null`, `x: ~`, `x:` or `x: !!null ""`. */
export function isNull(node: unknown): boolean {
  return isScalar(node) && node.value === null;
}

export function isMissingOrNull(node: unknown): boolean {
  return node === undefined || node === null || isNull(node);
}

/**
 * The name of a map key as written. Keys are always names in KRM, so a key `y`, `on` or `null`
 * stays the string it was written as, although YAML 1.1 would resolve it to a boolean or null.
 */
export function keyName(key: unknown): string {
  if (isScalar(key)) {
    if (typeof key.source === 'string' && key.type === 'PLAIN') return key.source;
    return key.value === null ? '' : String(key.value);
  }
  if (isNode(key)) return String(key.toJSON());
  return String(key);
}

export function pairsOf(map: YAMLMap): Pair<unknown, unknown>[] {
  return map.items as Pair<unknown, unknown>[];
}

export function findPair(map: YAMLMap, name: string): Pair<unknown, unknown> | undefined {
  for (const pair of map.items) if (isPair(pair) && keyName(pair.key) === name) return pair as Pair<unknown, unknown>;
  return undefined;
}

/** The value node of a field; `undefined` when the field is absent. A bare `x:` is a null Scalar. */
export function fieldValue(map: YAMLMap | undefined, name: string): YamlNode | undefined {
  if (!map) return undefined;
  const pair = findPair(map, name);
  if (!pair) return undefined;
  if (pair.value === null || pair.value === undefined) return new Scalar(null);
  return pair.value as YamlNode;
}

/** The plain string value of a scalar field, if it is one. */
export function stringField(map: YAMLMap | undefined, name: string): string | undefined {
  const node = fieldValue(map, name);
  if (!isScalar(node) || node.value === null || node.value === undefined) return undefined;
  return typeof node.value === 'string' ? node.value : scalarText(node);
}

/** The text of a scalar as Kubernetes would stringify it in a key: `8080`, `TCP`, `true`. */
export function scalarText(node: Scalar): string {
  const v = node.value;
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof node.source === 'string' && node.type === 'PLAIN') return node.source;
  return String(v);
}

/** The JSON value of a node, as a consumer of the resource would see it. */
export function toPlain(node: unknown): unknown {
  if (node === undefined || node === null) return null;
  if (isScalar(node)) {
    const v = node.value;
    return typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.toISOString() : v;
  }
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of pairsOf(node)) out[keyName(pair.key)] = toPlain(pair.value);
    return out;
  }
  if (isSeq(node)) return node.items.map(toPlain);
  if (isAlias(node)) return { '*alias': node.source };
  return node;
}

/** Structural equality of two nodes: values only, ignoring style, order of map keys and comments. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const aMissing = a === undefined;
  const bMissing = b === undefined;
  if (aMissing || bMissing) return aMissing && bMissing;
  if (isScalar(a) && isScalar(b)) return scalarEquals(a, b);
  if (isMap(a) && isMap(b)) {
    const ap = pairsOf(a);
    const bp = pairsOf(b);
    if (ap.length !== bp.length) return false;
    // Small maps: a scan per key is cheapest; large ones (a ConfigMap's data) get an index.
    const index = bp.length > 16 ? pairIndex(bp) : undefined;
    for (const pair of ap) {
      const name = keyName(pair.key);
      const other = index ? index.get(name) : findPair(b, name);
      if (!other || !sameValue(valueOrNull(pair.value), valueOrNull(other.value))) return false;
    }
    return true;
  }
  if (isSeq(a) && isSeq(b)) {
    if (a.items.length !== b.items.length) return false;
    return a.items.every((item, i) => sameValue(valueOrNull(item), valueOrNull(b.items[i])));
  }
  if (isAlias(a) && isAlias(b)) return a.source === b.source;
  return false;
}

/** Each key's first pair, as `findPair` would find it. */
function pairIndex(pairs: readonly Pair<unknown, unknown>[]): Map<string, Pair<unknown, unknown>> {
  const index = new Map<string, Pair<unknown, unknown>>();
  for (const pair of pairs) {
    const name = keyName(pair.key);
    if (!index.has(name)) index.set(name, pair);
  }
  return index;
}

function valueOrNull(value: unknown): unknown {
  return value === null || value === undefined ? new Scalar(null) : value;
}

function scalarEquals(a: Scalar, b: Scalar): boolean {
  const av = a.value;
  const bv = b.value;
  if (av === bv) return true;
  if (av instanceof Date && bv instanceof Date) return av.getTime() === bv.getTime();
  if (typeof av === 'number' && typeof bv === 'bigint') return BigInt(av) === bv;
  if (typeof av === 'bigint' && typeof bv === 'number') return av === BigInt(bv);
  return false;
}

/** Comments carried by a node itself (head and line), as one comparable string; none for no node. */
export function commentsOf(node: unknown): string {
  if (!isNode(node)) return '\u0000';
  const n = node as { commentBefore?: string | null; comment?: string | null };
  return `${n.commentBefore ?? ''}\u0000${n.comment ?? ''}`;
}

/** Every comment inside a node (its own, its keys', its items'), in order, as one comparable string. */
export function allCommentsOf(node: unknown): string {
  const parts: string[] = [];
  const collect = (n: unknown): void => {
    if (isPair(n)) {
      collect(n.key);
      collect(n.value);
      return;
    }
    if (!isNode(n)) return;
    parts.push(commentsOf(n));
    if (isMap(n) || isSeq(n)) for (const item of n.items) collect(item);
  };
  collect(node);
  return parts.join('\u0001');
}

/**
 * A scalar compared the way kyaml's merge3 compares scalars: its serialised text, comments
 * included, so an upstream comment change counts as a change.
 */
export function sameScalarWithComments(a: unknown, b: unknown): boolean {
  if (!isScalar(a) || !isScalar(b)) return sameValue(a, b) && commentsOf(a) === commentsOf(b);
  return scalarEquals(a, b) && commentsOf(a) === commentsOf(b);
}

/** A deep copy of a node, comments and styles included, safe to insert in another document. */
export function cloneNode<T extends YamlNode>(node: T): T {
  return node.clone() as T;
}

export { isAlias, isMap, isPair, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq };
