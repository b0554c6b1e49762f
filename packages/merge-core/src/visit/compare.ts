import type { Sources } from '../collate/element.js';
import { allCommentsOf, commentsOf, isMissingOrNull, isNull, sameValue, type YamlNode } from '../yaml/nodes.js';

/** Missing and null count as the same "no value", as kyaml's IsMissingOrNull does. */
export function sameOrBothEmpty(a: YamlNode | undefined, b: YamlNode | undefined): boolean {
  const aEmpty = isMissingOrNull(a);
  const bEmpty = isMissingOrNull(b);
  if (aEmpty || bEmpty) return aEmpty && bEmpty;
  return sameValue(a, b);
}

/** The local side changed the value since origin. */
export function localChanged(sources: Sources<YamlNode>): boolean {
  return !sameOrBothEmpty(sources.local, sources.origin);
}

/** kpt: a field is cleared when a side sets null where origin had a value. */
export function clearedBy(origin: YamlNode | undefined, side: YamlNode | undefined): boolean {
  return isNull(side) && !isNull(origin);
}

/** The same comments on the nodes themselves (a missing node has none). */
export function sameComments(a: unknown, b: unknown): boolean {
  return commentsOf(a) === commentsOf(b);
}

/** The same comments everywhere inside the nodes: for values merged whole (atomic lists and maps). */
export function sameCommentsInside(a: unknown, b: unknown): boolean {
  return allCommentsOf(a) === allCommentsOf(b);
}
