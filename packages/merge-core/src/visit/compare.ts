import { isScalar } from 'yaml';
import type { Sources } from '../collate/element.js';
import { commentsOf, isMissingOrNull, isNull, sameScalarWithComments, sameValue, type YamlNode } from '../yaml/nodes.js';

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

/** kyaml: any explicit null in upstream or local clears. */
export function taggedNull(node: YamlNode | undefined): boolean {
  return isNull(node);
}

export function kyamlScalarDiffers(a: YamlNode | undefined, b: YamlNode | undefined): boolean {
  if (isScalar(a) && isScalar(b)) return !sameScalarWithComments(a, b);
  return !sameValue(a, b);
}

export function sameComments(a: unknown, b: unknown): boolean {
  return commentsOf(a) === commentsOf(b);
}
