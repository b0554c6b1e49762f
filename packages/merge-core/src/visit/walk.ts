/**
 * Applies a visitor's decisions to the collated tree and builds the merged value. The walker
 * decides no field: it walks, orders and builds, and records the conflicts and decisions the
 * visitor reports; every rule is in a visitor (seed 001's in `rules.ts`). Nothing is
 * mutated: unchanged local nodes are reused as they are (so an untouched document prints byte for
 * byte), changed maps and lists are shallow copies, and values from upstream are cloned.
 */
import { isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import type { Element, FieldElement, ItemElement, LeafElement, ListElement, MapElement } from '../collate/element.js';
import type { FieldConflict, FieldDecision, RuleName } from '../errors.js';
import { cloneNode, commentsOf, isMissingOrNull, isNull, keyName, pairsOf, sameValue, type YamlNode } from '../yaml/nodes.js';
import type { MergeVisitor, Report } from './visitor.js';

export interface WalkOptions {
  readonly visitor: MergeVisitor;
}

export interface WalkResult {
  readonly node: YamlNode | undefined;
  readonly conflicts: readonly FieldConflict[];
  /** Fields kept as local has them because local pinned them, where upstream changed them. */
  readonly decisions: readonly FieldDecision[];
}

export function walkElement(element: Element, options: WalkOptions): WalkResult {
  const conflicts: FieldConflict[] = [];
  const decisions: FieldDecision[] = [];
  const node = new Walker(options, conflicts, decisions).walk(element);
  return { node, conflicts, decisions };
}

class Walker {
  constructor(
    private readonly options: WalkOptions,
    private readonly conflicts: FieldConflict[],
    private readonly decisions: FieldDecision[],
  ) {}

  walk(element: Element): YamlNode | undefined {
    switch (element.kind) {
      case 'leaf':
        return this.leaf(element);
      case 'map':
        return this.map(element);
      case 'list':
        return this.list(element);
    }
  }

  private leaf(e: LeafElement): YamlNode | undefined {
    const decision = this.options.visitor.leaf(e);
    const { local, upstream } = e.sources;
    this.report(e, decision.rule, decision.report);
    if (decision.take === 'local') return local;
    if (decision.take === 'clear' || isMissingOrNull(upstream)) return undefined;
    const result = this.fromUpstream(e, upstream!);
    // Upstream's value equals local's already: keep local's node, so its text stays as it is.
    if (local !== undefined && sameValue(local, result) && commentsOf(local) === commentsOf(result)) return local;
    return result;
  }

  /** A value taken from upstream, keeping local's quoting style and, where local edited them, its comments. */
  private fromUpstream(e: LeafElement, upstream: YamlNode): YamlNode {
    const local = e.sources.local;
    const copy = cloneNode(upstream);
    if (isScalar(copy) && isScalar(local)) {
      if (typeof copy.value === 'string' && typeof local.value === 'string' && local.type) copy.type = local.type;
      if (this.options.visitor.valueComments(e) === 'local') {
        copy.comment = local.comment;
        copy.commentBefore = local.commentBefore;
      }
      copy.spaceBefore = local.spaceBefore;
    }
    return copy;
  }

  private map(e: MapElement): YamlNode | undefined {
    const decision = this.options.visitor.map(e);
    const local = e.sources.local;
    this.report(e, decision.rule, decision.report);
    if (decision.action === 'keep') return local;
    if (decision.action === 'clear') return undefined;
    const base = decision.base === 'local' && isMap(local) ? local : undefined;
    // Each of local's pairs that changes maps to its replacement (null: it goes); new pairs are
    // placed afterwards. Maps of tens of thousands of keys (a ConfigMap) stay linear this way.
    const replaced = new Map<Pair<unknown, unknown>, Pair<unknown, unknown> | null>();
    const added: { field: FieldElement; pair: Pair<unknown, unknown> }[] = [];
    let changed = base === undefined;
    for (const field of e.fields) {
      const value = this.walk(field.value);
      const existing = base ? field.pairs.local : undefined;
      if (value === undefined) {
        if (existing) {
          replaced.set(existing, null);
          changed = true;
        }
        continue;
      }
      const key = this.key(field, existing);
      if (existing) {
        const sameValueNode = existing.value === value || (existing.value == null && isNull(value) && !isScalar(existing.value));
        if (sameValueNode && key === existing.key) continue;
        replaced.set(existing, new Pair(key, value));
        changed = true;
        continue;
      }
      added.push({ field, pair: new Pair(key, value) });
      changed = true;
    }
    const kept: Pair<unknown, unknown>[] = [];
    for (const pair of base ? pairsOf(base) : []) {
      const next = replaced.get(pair);
      if (next === undefined) kept.push(pair);
      else if (next !== null) kept.push(next);
    }
    const pairs = added.length === 0 ? kept : this.placeAdded(kept, added, e);
    if (pairs.length === 0 && !this.options.visitor.keepEmpty(e, { rebuilt: base === undefined, item: false })) return undefined;
    if (!changed) return base;
    const out = new YAMLMap();
    const template = base ?? e.sources.upstream ?? e.sources.origin;
    if (template) copyCollectionProps(template, out, base !== undefined);
    out.items = pairs;
    return out;
  }

  /** The key node for a field: local's, or a copy carrying upstream's comments. */
  private key(field: FieldElement, existing: Pair<unknown, unknown> | undefined): unknown {
    const { local, upstream, origin } = field.keys;
    if (existing) {
      if (!local || !upstream || this.options.visitor.keyComments(field) === 'local') return existing.key;
      if (local.comment === upstream.comment && local.commentBefore === upstream.commentBefore) return existing.key;
      const key = cloneNode(local);
      key.comment = upstream.comment;
      key.commentBefore = upstream.commentBefore;
      return key;
    }
    const source = upstream ?? origin ?? local;
    return source ? cloneNode(source) : new Scalar(field.name);
  }

  /**
   * Where fields new to local go: each after the
   * field that precedes it upstream (else before the one that follows it), so added fields land
   * where upstream has them. Fields of local's come first in the visit order, so every new field
   * is placed among local's remaining pairs and the new fields placed before it.
   */
  private placeAdded(
    kept: Pair<unknown, unknown>[],
    added: readonly { field: FieldElement; pair: Pair<unknown, unknown> }[],
    e: MapElement,
  ): Pair<unknown, unknown>[] {
    const upstream = e.sources.upstream;
    if (!isMap(upstream)) return [...kept, ...added.map((a) => a.pair)];
    const order = pairsOf(upstream).map((p) => keyName(p.key));
    const position = new Map<string, number>();
    order.forEach((name, i) => {
      if (!position.has(name)) position.set(name, i);
    });
    // A doubly linked list over the pairs, so that an insertion next to a named pair costs O(1).
    interface Link {
      readonly pair: Pair<unknown, unknown>;
      prev: Link | undefined;
      next: Link | undefined;
    }
    let head: Link | undefined;
    let tail: Link | undefined;
    const byName = new Map<string, Link>();
    const link = (pair: Pair<unknown, unknown>, name: string, after: Link | undefined, before: Link | undefined): void => {
      const node: Link = { pair, prev: after, next: before };
      if (after) after.next = node;
      else head = node;
      if (before) before.prev = node;
      else tail = node;
      if (!byName.has(name)) byName.set(name, node);
    };
    for (const pair of kept) link(pair, keyName(pair.key), tail, undefined);
    for (const { field, pair } of added) {
      const at = position.get(field.name);
      let anchor: Link | undefined;
      if (at !== undefined) {
        for (let i = at - 1; i >= 0 && !anchor; i--) anchor = byName.get(order[i]!);
        if (anchor) {
          link(pair, field.name, anchor, anchor.next);
          continue;
        }
        for (let i = at + 1; i < order.length && !anchor; i++) anchor = byName.get(order[i]!);
        if (anchor) {
          link(pair, field.name, anchor.prev, anchor);
          continue;
        }
      }
      link(pair, field.name, tail, undefined);
    }
    const out: Pair<unknown, unknown>[] = [];
    for (let node = head; node; node = node.next) out.push(node.pair);
    return out;
  }

  private list(e: ListElement): YamlNode | undefined {
    const decision = this.options.visitor.list(e);
    const local = e.sources.local;
    this.report(e, decision.rule, decision.report);
    if (decision.action === 'keep') return local;
    if (decision.action === 'clear') return undefined;
    const base = decision.base === 'local' && isSeq(local) ? local : undefined;
    // As for maps: local's items that change map to their replacement (null: they go).
    const replaced = new Map<unknown, unknown>();
    const added: unknown[] = [];
    // Output node → its item, for lists whose order follows upstream's (whole items).
    const itemOf = e.wholeItems ? new Map<unknown, ItemElement>() : undefined;
    let changed = base === undefined;
    for (const item of e.items) {
      let value = this.walk(item.value);
      const existing = base ? item.value.sources.local : undefined;
      const emptied =
        isMap(value) && value.items.length === 0 && !this.options.visitor.keepEmpty(item.value, { rebuilt: false, item: true });
      if (value === undefined || emptied) {
        if (existing) {
          replaced.set(existing, null);
          changed = true;
        }
        continue;
      }
      if (e.listType === 'map' && isMap(value) && !e.derivedKey) value = withKeys(value, item.identity);
      itemOf?.set(value, item);
      if (existing) {
        if (existing !== value) {
          replaced.set(existing, value);
          changed = true;
        }
      } else {
        added.push(value);
        changed = true;
      }
    }
    const items: unknown[] = [];
    for (const item of base ? base.items : []) {
      const next = replaced.has(item) ? replaced.get(item) : item;
      if (next !== null) items.push(next);
    }
    items.push(...added);
    if (itemOf && this.takeUpstreamOrder(e, items, itemOf)) changed = true;
    if (!changed) return base;
    if (items.length === 0 && !this.options.visitor.keepEmpty(e, { rebuilt: base === undefined, item: false })) return undefined;
    const out = new YAMLSeq();
    const template = base ?? e.sources.upstream ?? e.sources.origin;
    if (template) copyCollectionProps(template, out, base !== undefined);
    out.items = items;
    return out;
  }

  /**
   * Whole items run in order (a pipeline's functions): where local kept origin's order, upstream's
   * order is taken (items upstream does not have keep their place after the ones before them).
   * Sorts `items` in place; true when the order changed.
   */
  private takeUpstreamOrder(e: ListElement, items: unknown[], itemOf: Map<unknown, ItemElement>): boolean {
    const { origin, local, upstream } = e.sources;
    if (!isSeq(upstream) || !isSeq(local) || !isSeq(origin)) return false;
    const rank = (side: 'origin' | 'local' | 'upstream') => {
      const seq = e.sources[side] as YAMLSeq;
      const at = new Map<ItemElement, number>();
      for (const item of e.items) {
        const node = item.value.sources[side];
        if (node !== undefined) at.set(item, seq.items.indexOf(node));
      }
      return at;
    };
    const originRank = rank('origin');
    const localRank = rank('local');
    const common = e.items.filter((i) => originRank.has(i) && localRank.has(i));
    const inOrigin = [...common].sort((a, b) => originRank.get(a)! - originRank.get(b)!);
    const inLocal = [...common].sort((a, b) => localRank.get(a)! - localRank.get(b)!);
    if (inOrigin.some((item, i) => inLocal[i] !== item)) return false;
    const upstreamRank = rank('upstream');
    // Each item sorts by upstream's position, or just after the item before it.
    const keys: number[] = [];
    let last = -1;
    for (const node of items) {
      const item = itemOf.get(node);
      const at = item !== undefined ? upstreamRank.get(item) : undefined;
      last = at ?? last + 1e-6;
      keys.push(last);
    }
    const order = items.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
    if (order.every((i, n) => i === n)) return false;
    const sorted = order.map((i) => items[i]);
    items.splice(0, items.length, ...sorted);
    return true;
  }

  /** Records what the visitor said to report: a conflict and its winner, or a pin's decision. */
  private report(e: Element, rule: RuleName, report: Report | undefined): void {
    if (report === undefined) return;
    const { origin, upstream, local } = e.sources;
    const values = { origin, upstream, local };
    if (report === 'pinned') this.decisions.push({ path: e.path, rule: 'pinned-local', values });
    else this.conflicts.push({ path: e.path, rule, winner: report === 'local-won' ? 'local' : 'upstream', values });
  }
}

/** An item rebuilt from its fields may have lost its key (upstream deleted it): put the key back. */
function withKeys(map: YAMLMap, identity: readonly (readonly [string, string])[]): YAMLMap {
  const missing = identity.filter(([k]) => !pairsOf(map).some((p) => keyName(p.key) === k));
  if (missing.length === 0) return map;
  const out = new YAMLMap();
  copyCollectionProps(map, out, true);
  out.items = [...pairsOf(map), ...missing.map(([k, v]) => new Pair(new Scalar(k), new Scalar(v)))];
  return out;
}

function copyCollectionProps(from: YAMLMap | YAMLSeq | YamlNode, to: YAMLMap | YAMLSeq, withComments: boolean): void {
  const source = from as YAMLMap;
  to.flow = source.flow;
  to.tag = source.tag;
  if (withComments) {
    to.comment = source.comment;
    to.commentBefore = source.commentBefore;
    to.spaceBefore = source.spaceBefore;
  }
}
