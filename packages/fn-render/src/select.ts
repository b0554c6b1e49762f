/**
 * `selectors` and `exclude` of a pipeline function (kpt's rules): a resource is given to the
 * function when it matches any selector (or there are none) and matches no exclusion. A selector
 * matches when every field it sets matches: apiVersion, kind, name and namespace exactly, labels
 * and annotations as subsets.
 */
import type { Selector } from '@kdelta/kptfile-model';
import { identity, stringMap, type Item } from './items.js';

export function matchesSelector(item: Item, selector: Selector): boolean {
  const id = identity(item.doc);
  if (selector.apiVersion && selector.apiVersion !== id.apiVersion) return false;
  if (selector.kind && selector.kind !== id.kind) return false;
  if (selector.name && selector.name !== id.name) return false;
  if (selector.namespace && selector.namespace !== id.namespace) return false;
  for (const field of ['labels', 'annotations'] as const) {
    const wanted = selector[field];
    if (!wanted || Object.keys(wanted).length === 0) continue;
    const have = stringMap(item.doc, field);
    for (const [k, v] of Object.entries(wanted)) if (have[k] !== v) return false;
  }
  return true;
}

const isEmptySelector = (s: Selector): boolean =>
  !s.apiVersion &&
  !s.kind &&
  !s.name &&
  !s.namespace &&
  Object.keys(s.labels ?? {}).length === 0 &&
  Object.keys(s.annotations ?? {}).length === 0;

/** Splits the items into those the function sees and those it does not. */
export function selectItems(
  items: readonly Item[],
  selectors: readonly Selector[] | undefined,
  exclude: readonly Selector[] | undefined,
): { selected: Item[]; unselected: Item[] } {
  const sel = (selectors ?? []).filter((s) => !isEmptySelector(s));
  const exc = (exclude ?? []).filter((s) => !isEmptySelector(s));
  if (sel.length === 0 && exc.length === 0) return { selected: [...items], unselected: [] };
  const selected: Item[] = [];
  const unselected: Item[] = [];
  for (const item of items) {
    const chosen = (sel.length === 0 || sel.some((s) => matchesSelector(item, s))) && !exc.some((s) => matchesSelector(item, s));
    (chosen ? selected : unselected).push(item);
  }
  return { selected, unselected };
}
