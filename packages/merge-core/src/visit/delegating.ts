/**
 * The delegating visitor: picks, per field, the visitor that decides it. A field at or above a
 * `# kdelta:local` pin goes to the pin's visitor; every other field goes to the strategy chosen
 * for the merge, which decorates seed 001's rules (`rules.ts`). Adding a strategy is adding its
 * file and its line in `strategies`.
 */
import type { Element, FieldElement, LeafElement, ListElement, MapElement } from '../collate/element.js';
import { failOnConflict } from './fail.js';
import { localWins } from './local-wins.js';
import { pinned } from './pinned.js';
import { kptRules } from './rules.js';
import { upstreamWins } from './upstream-wins.js';
import type { ConflictStrategy, Emptied, MergeVisitor } from './visitor.js';

const strategies: Record<ConflictStrategy, (rules: MergeVisitor) => MergeVisitor> = {
  'upstream-wins': upstreamWins,
  'local-wins': localWins,
  fail: failOnConflict,
};

export function delegatingVisitor(strategy: ConflictStrategy): MergeVisitor {
  const chosen = strategies[strategy](kptRules());
  const pin = pinned(chosen);
  const pick = (e: Element): MergeVisitor => (e.holdsPin && e.sources.local !== undefined ? pin : chosen);
  return {
    name: chosen.name,
    leaf: (e: LeafElement) => pick(e).leaf(e),
    map: (e: MapElement) => pick(e).map(e),
    list: (e: ListElement) => pick(e).list(e),
    keepEmpty: (e: Element, where: Emptied) => pick(e).keepEmpty(e, where),
    keyComments: (field: FieldElement) => pick(field.value).keyComments(field),
    valueComments: (e: Element) => pick(e).valueComments(e),
  };
}
