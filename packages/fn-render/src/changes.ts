import { identity, type Item } from './items.js';

/**
 * What each mutator changed, resource by resource and field by field: the resources are read as
 * plain data before and after the function (in memory, nothing printed), and compared.
 */

/** One step of a field path: a map key, a list position, or the list item of that `name`. */
export type FieldStep = string | number | { readonly name: string };

/** What one function changed in one resource. */
export interface ResourceChange {
  /** The resource's file in the tree (after the function: a function may move a resource). */
  readonly file: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string | undefined;
  /** The fields it changed, added or removed; empty when it added or removed the whole resource. */
  readonly fields: readonly (readonly FieldStep[])[];
  /** The whole resource is new, or gone. */
  readonly whole?: 'added' | 'removed' | undefined;
}

interface Seen {
  readonly file: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly data: unknown;
}

/** The items as plain data, by identity (a resource without a name: by file and position). */
export function snapshot(items: readonly Item[]): Map<string, Seen> {
  const out = new Map<string, Seen>();
  for (const item of items) {
    const id = identity(item.doc);
    const file = item.pkg === '' ? item.path : `${item.pkg}/${item.path}`;
    const key = id.name ? `${id.apiVersion}|${id.kind}|${id.namespace}|${id.name}` : `${file}#${item.index}`;
    out.set(key, { file, kind: id.kind, name: id.name, namespace: id.namespace, data: item.doc.toJS() });
  }
  return out;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A list whose items are maps each with a distinct string `name` is keyed by it (containers, env...). */
function namesOf(list: readonly unknown[]): string[] | undefined {
  const names = list.map((i) => (isMap(i) && typeof i.name === 'string' ? i.name : undefined));
  if (names.some((n) => n === undefined) || new Set(names).size !== names.length) return undefined;
  return names as string[];
}

/** The paths where `b` differs from `a`: the deepest map key or list item that differs. */
export function fieldChanges(a: unknown, b: unknown, path: readonly FieldStep[] = []): FieldStep[][] {
  if (isMap(a) && isMap(b)) {
    const out: FieldStep[][] = [];
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) out.push(...fieldChanges(a[key], b[key], [...path, key]));
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const an = namesOf(a);
    const bn = namesOf(b);
    if (an && bn && a.length > 0 && b.length > 0) {
      const out: FieldStep[][] = [];
      for (const name of new Set([...an, ...bn])) out.push(...fieldChanges(a[an.indexOf(name)], b[bn.indexOf(name)], [...path, { name }]));
      return out;
    }
    if (a.length !== b.length) return [[...path]];
    return a.flatMap((item, i) => fieldChanges(item, b[i], [...path, i]));
  }
  return Object.is(a, b) || (a === undefined && b === undefined) ? [] : [[...path]];
}

/** What changed from `before` to `after`, resource by resource, in the order of `after` then the removed. */
export function changesBetween(before: ReadonlyMap<string, Seen>, after: ReadonlyMap<string, Seen>): ResourceChange[] {
  const out: ResourceChange[] = [];
  const of = (s: Seen) => ({ file: s.file, kind: s.kind, name: s.name, ...(s.namespace ? { namespace: s.namespace } : {}) });
  for (const [key, now] of after) {
    const was = before.get(key);
    if (!was) {
      out.push({ ...of(now), fields: [], whole: 'added' });
      continue;
    }
    const fields = fieldChanges(was.data, now.data);
    if (fields.length > 0 || was.file !== now.file) out.push({ ...of(now), fields });
  }
  for (const [key, was] of before) if (!after.has(key)) out.push({ ...of(was), fields: [], whole: 'removed' });
  return out;
}
