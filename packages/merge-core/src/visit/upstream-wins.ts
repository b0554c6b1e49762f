/**
 * Upstream wins every conflict: seed 001's rules as they are ("If the field has been changed in
 * both upstream and local, update local with the value from upstream."), kpt's behaviour.
 */
import type { MergeVisitor } from './visitor.js';

export function upstreamWins(rules: MergeVisitor): MergeVisitor {
  return { ...rules, name: 'upstream-wins' };
}
