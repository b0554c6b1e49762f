/**
 * Associative keys where no schema speaks (seed 001, "Merge rules"): kpt recognises these
 * fields as merge keys. The order is the precedence: the first key that every element of a
 * list has is the list's key.
 */
export const FALLBACK_MERGE_KEYS: readonly string[] = Object.freeze([
  'mountPath',
  'devicePath',
  'ip',
  'type',
  'topologyKey',
  'name',
  'containerPort',
]);

/**
 * The candidates kyaml v0.21.1 (the version kpt pins; the conformance corpus) actually infers:
 * `name` only. With the seven fallback keys a Kptfile's `status.conditions` would become
 * keyed by `type`; the conformance corpus says such lists stay atomic.
 */
export const KYAML_INFERRED_KEYS: readonly string[] = Object.freeze(['name']);

function hasKey(element: unknown, key: string): boolean {
  if (element instanceof Map) return element.has(key);
  return typeof element === 'object' && element !== null && !Array.isArray(element) && Object.hasOwn(element, key);
}

/** The first candidate that every element of a non-empty list has, or undefined. */
function keyOfList(list: readonly unknown[], candidates: readonly string[]): string | undefined {
  if (list.length === 0) return undefined;
  return candidates.find((key) => list.every((element) => hasKey(element, key)));
}

/**
 * kyaml's inference of an associative list without a schema (walker `IsAssociative` +
 * `elementKey`), given the list as it is in each source (origin, upstream, local; absent or
 * null sources left out or passed as non-arrays):
 * - a source's key is the first candidate (in `candidates` order) that every one of its
 *   elements has as a field (elements are maps; `null` values count as present);
 * - the list is associative when some source has a key, and its key is that key;
 * - when two sources have different keys there is no agreed key: undefined (kyaml fails with
 *   "conflicting merge keys"; here the list is left non-associative).
 * Deliberate difference: an empty list says nothing. kyaml finds every key in an empty list
 * (vacuous truth), so `[]` in one source makes the list associative and then fails with "no
 * merge key found" when no other source has a key; here `[]` is simply skipped.
 * Returns the keys (one key) or undefined for a non-associative list.
 */
export function inferListKeys(lists: readonly unknown[][], candidates: readonly string[] = FALLBACK_MERGE_KEYS): string[] | undefined {
  let found: string | undefined;
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    const key = keyOfList(list, candidates);
    if (key === undefined) continue;
    if (found !== undefined && found !== key) return undefined;
    found = key;
  }
  return found === undefined ? undefined : [found];
}
