/**
 * kpt's resource-merge rules (seed 001, "Merge rules"), in one place: every branch quotes the
 * sentence of seed 001 it implements, or says which kyaml behaviour it follows where seed 001 is
 * silent. Where local and upstream both changed a value, seed 001 takes upstream's: these rules
 * are the `upstream-wins` strategy, and the other strategies decorate them. The Kptfile merges by
 * these rules too (with its own schema; its pipeline's functions are whole items, seed 001's
 * resource-level rules).
 */
import { isMap, isSeq } from 'yaml';
import type { Element, FieldElement, LeafElement, ListElement, MapElement, Sources } from '../collate/element.js';
import type { YamlNode } from '../yaml/nodes.js';
import { isMissingOrNull, isNull } from '../yaml/nodes.js';
import type { RuleName } from '../errors.js';
import { clearedBy, localChanged, sameComments, sameCommentsInside, sameOrBothEmpty } from './compare.js';
import type { CollectionDecision, Emptied, LeafDecision, MergeVisitor, Report } from './visitor.js';

/** Seed 001: "If the field is present in either upstream or local and the value is null, remove the field from local." */
const cleared = (s: Sources<YamlNode>): boolean => clearedBy(s.origin, s.upstream) || clearedBy(s.origin, s.local);

/** Local changed a value that the merge replaces with another (or removes): upstream won a conflict. */
const upstreamWon = (s: Sources<YamlNode>, result: YamlNode | undefined): Report | undefined =>
  localChanged(s) && !sameOrBothEmpty(s.local, result) ? 'upstream-won' : undefined;

/** A collection that goes as a whole: a conflict when local had changed it. */
const clearCollection = (e: MapElement | ListElement, rule: 'explicit-null' | 'upstream-removed'): CollectionDecision => ({
  action: 'clear',
  rule,
  report: (isMap(e.sources.local) || isSeq(e.sources.local)) && localChanged(e.sources) ? 'upstream-won' : undefined,
});

/**
 * An item of a keyed list that local deleted (alone, or with the list or a map holding it) and
 * upstream kept: local deleted it as it would a resource, and it stays deleted as a resource does
 * (kpt's Skip), its fields not merged: rebuilt from upstream's delta it would be half an item (a
 * container with no image, which Kubernetes refuses). Upstream's change to it has nowhere to go,
 * so it is reported (`modified-upstream-deleted-locally`), never dropped in silence. Undefined
 * for every other element.
 */
function deletedLocally(e: Element): { rule: RuleName; report?: Report } | undefined {
  const { origin, upstream, local } = e.sources;
  if (!e.keyedItem || local !== undefined || origin === undefined || upstream === undefined) return undefined;
  // Unchanged upstream (its value: a comment changed is no change to report, as for a resource):
  // "If the field is unchanged between upstream and local, leave the local value unchanged."
  if (sameOrBothEmpty(origin, upstream)) return { rule: 'unchanged-upstream' };
  return { rule: 'modified-upstream-deleted-locally', report: 'local-won' };
}

export function kptRules(): MergeVisitor {
  return {
    name: 'upstream-wins',

    /** "For scalars and non-associative lists" (and maps the schema makes atomic). */
    leaf(e: LeafElement): LeafDecision {
      const { origin, upstream } = e.sources;
      // "If the field is present in either upstream or local and the value is null, remove the field from local."
      if (cleared(e.sources)) return { take: 'clear', rule: 'explicit-null', report: upstreamWon(e.sources, undefined) };
      // An item local deleted (of a keyed list whose items the schema makes atomic maps).
      const deleted = deletedLocally(e);
      if (deleted) return { take: 'local', ...deleted };
      const upstreamEmpty = isMissingOrNull(upstream);
      const originEmpty = isMissingOrNull(origin);
      // Added or removed upstream (kyaml: upstream's addition or deletion is a change upstream, and
      // "If the field has been changed in both upstream and local, update local with the value from upstream.")
      if (upstreamEmpty !== originEmpty) {
        return { take: 'upstream', rule: upstreamEmpty ? 'upstream-removed' : 'upstream-added', report: upstreamWon(e.sources, upstream) };
      }
      // Deleted upstream where origin held a null and local left that null as it was: local did
      // not change the field, so upstream's deletion stands ("A resource present in origin and
      // deleted from upstream will be deleted from local.", for a field), and merge(o, u, o) = u.
      if (upstream === undefined && isNull(origin) && isNull(e.sources.local)) {
        return { take: 'upstream', rule: 'upstream-removed' };
      }
      // "If the field is present only in local, leave the local value unchanged."
      if (upstreamEmpty) return { take: 'local', rule: 'local-only' };
      // "If the field has been changed in both upstream and local, update local with the value from upstream."
      // (changed upstream only: upstream's value too.)
      if (!sameOrBothEmpty(upstream, origin))
        return { take: 'upstream', rule: 'upstream-changed', report: upstreamWon(e.sources, upstream) };
      // "If the field is unchanged between upstream and local, leave the local value unchanged."
      // (kyaml compares upstream with origin: whatever local did is kept.)
      return { take: 'local', rule: 'unchanged-upstream' };
    },

    /** "For mappings". */
    map(e: MapElement): CollectionDecision {
      const { local, upstream, origin } = e.sources;
      // "If the field is present in either upstream or local and the value is null, remove the field from local."
      if (cleared(e.sources)) return clearCollection(e, 'explicit-null');
      // An item local deleted stays deleted, as a resource local deleted does.
      const deleted = deletedLocally(e);
      if (deleted) return { action: 'clear', ...deleted };
      // A whole item (a pipeline's function) is a resource of its list: a resource upstream
      // deleted and local changed is kept whole ("A resource only in local will be kept without
      // changes."), since without its unchanged fields it would not be the same thing any more.
      if (e.wholeItem && upstream === undefined && origin !== undefined && local !== undefined && localChanged(e.sources)) {
        return { action: 'keep', rule: 'deleted-upstream-modified-locally', report: 'local-won' };
      }
      // Missing from both local and upstream: gone ("A resource present in origin and deleted
      // from upstream will be deleted from local.", for a field local deleted too).
      if (local === undefined && upstream === undefined) return clearCollection(e, 'upstream-removed');
      // "If the field is not present in local, add the delta between origin and upstream as the value in local."
      if (isMissingOrNull(local)) return { action: 'merge', base: 'new', rule: 'upstream-added' };
      // "If the field is present in both upstream and local, recursively merge the values between
      // local, upstream and origin." Also "If the field is present only in local, leave the local
      // value unchanged.": merging keeps local's fields where upstream has none.
      return { action: 'merge', base: 'local', rule: 'upstream-changed' };
    },

    /** "For associative lists". */
    list(e: ListElement): CollectionDecision {
      const { local, origin, upstream } = e.sources;
      // "If the field is present in either upstream or local and the value is null, remove the field from local."
      if (cleared(e.sources)) return clearCollection(e, 'explicit-null');
      if (isMissingOrNull(upstream) && !isMissingOrNull(origin)) {
        // Whole items are resources of their list: "A resource only in local will be kept without
        // changes.", so items only local has outlive the list.
        if (e.wholeItems && e.items.some((i) => i.value.sources.local !== undefined && i.value.sources.origin === undefined)) {
          return { action: 'merge', base: 'local', rule: 'upstream-removed' };
        }
        // Deleted upstream: the associative list goes as a whole (kyaml).
        return clearCollection(e, 'upstream-removed');
      }
      // "If the field is not present in local, add the delta between origin and upstream as the value in local."
      if (isMissingOrNull(local)) return { action: 'merge', base: 'new', rule: 'upstream-added' };
      // "If the field is present in both upstream and local, recursively merge the values between
      // local, upstream and origin." (items only local has stay: "present only in local").
      return { action: 'merge', base: 'local', rule: 'upstream-changed' };
    },

    keepEmpty(e: Element, where: Emptied): boolean {
      const { origin, upstream } = e.sources;
      // An item whose every field went is no item any more (kyaml drops it).
      if (where.item) return false;
      if (e.kind === 'list') {
        // An emptied list goes, unless upstream itself has it empty: then it is upstream's value.
        const upstreamHasItEmpty = isSeq(upstream) && upstream.items.length === 0;
        return upstreamHasItEmpty && (!where.rebuilt || origin === undefined);
      }
      // Upstream deleted the map and nothing local is left in it: it goes. A map rebuilt from
      // nothing that stayed empty is kept only when upstream added it, so that a map local
      // deleted does not come back empty.
      if (origin !== undefined && (upstream === undefined || where.rebuilt)) return false;
      return true;
    },

    // Comments merge three ways, like values (kpt does the same): upstream's change to a comment
    // is taken where local left the comment as origin had it; where both changed it, local's
    // stays. A side without the field has no comment there.
    keyComments(field: FieldElement): 'local' | 'upstream' {
      const { origin, upstream, local } = field.keys;
      if (!upstream) return 'local';
      if (!local) return 'upstream';
      return sameComments(origin, local) && !sameComments(origin, upstream) ? 'upstream' : 'local';
    },

    valueComments(e: Element): 'local' | 'upstream' {
      const { origin, upstream, local } = e.sources;
      if (local === undefined) return 'upstream';
      // A value merged whole carries its items' comments: they are compared whole too.
      const same = e.kind === 'leaf' && e.reason !== 'scalar' ? sameCommentsInside : sameComments;
      return same(origin, local) && !same(origin, upstream) ? 'upstream' : 'local';
    },
  };
}
