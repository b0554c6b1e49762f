/**
 * Fail on any conflict: the merge decides as upstream-wins does, so that its report names every
 * place where local and upstream both changed a value; the caller fails when there is any and
 * writes nothing. Conflicts are data here, never thrown.
 */
import type { MergeVisitor } from './visitor.js';

export function failOnConflict(rules: MergeVisitor): MergeVisitor {
  return { ...rules, name: 'fail' };
}
