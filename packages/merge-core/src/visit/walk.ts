/**
 * Applies a visitor's decisions to the collated tree and builds the merged value. The walker
 * decides no field: it walks, orders and builds, and records the conflicts and decisions the
 * visitor reports; every rule is in a visitor (seed 001's in `rules.ts`). Nothing is
 * mutated: unchanged local nodes are reused as they are (so an untouched document prints byte for
 * byte), changed maps and lists are shallow copies, and values from upstream are cloned.
 */
import { isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import type { Element, FieldElement, ItemElement, LeafElement, ListElement, MapElement, Sources } from '../collate/element.js';
import type { FieldConflict, FieldDecision, RuleName } from '../errors.js';
import { cloneNode, commentsOf, isMissingOrNull, isNull, keyName, pairsOf, sameValue, type YamlNode } from '../yaml/nodes.js';
import { mergedOrder } from './order.js';
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
    if (decision.take === 'local') return this.localWithComments(e);
    if (decision.take === 'clear' || isMissingOrNull(upstream)) return undefined;
    const result = this.fromUpstream(e, upstream!);
    // Upstream's value equals local's already: keep local's node, so its text stays as it is.
    if (local !== undefined && sameValue(local, result) && commentsOf(local) === commentsOf(result)) return local;
    return result;
  }

  /**
   * Local's value, with upstream's comments where the visitor says so (upstream changed a comment
   * local left alone). A value merged whole that is upstream's value too is taken from upstream.
   */
  private localWithComments(e: LeafElement): YamlNode | undefined {
    const { local, upstream } = e.sources;
    if (local === undefined || isMissingOrNull(upstream) || this.options.visitor.valueComments(e) === 'local') return local;
    if (!isScalar(local) && sameValue(local, upstream)) return this.fromUpstream(e, upstream!);
    return withOwnComments(local, upstream!);
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
    const merged: { pair: Pair<unknown, unknown>; name: string; local: number | undefined }[] = [];
    (base ? pairsOf(base) : []).forEach((pair, at) => {
      const next = replaced.get(pair);
      if (next === undefined) merged.push({ pair, name: keyName(pair.key), local: at });
      else if (next !== null) merged.push({ pair: next, name: keyName(pair.key), local: at });
    });
    for (const { field, pair } of added) merged.push({ pair, name: field.name, local: undefined });
    const order = added.length === 0 && sameKeyOrder(e.sources.origin, e.sources.upstream) ? undefined : this.order(e, merged);
    if (order) changed = true;
    const pairs = order ? order.map((i) => merged[i]!.pair) : merged.map((m) => m.pair);
    if (pairs.length === 0 && !this.options.visitor.keepEmpty(e, { rebuilt: base === undefined, item: false })) return undefined;
    const comments = this.collectionComments(e, base);
    if (!changed && comments === base) return base;
    const out = new YAMLMap();
    const template = base ?? e.sources.upstream ?? e.sources.origin;
    if (template) copyCollectionProps(template, out, base !== undefined);
    if (comments) copyComments(comments, out);
    out.items = pairs;
    return out;
  }

  /**
   * The merged order of a map's pairs (local's, then the new ones). Not needed where upstream's
   * keys are origin's in origin's order and none is new: the rule then gives local's order.
   */
  private order(e: MapElement, merged: readonly { name: string; local: number | undefined }[]): number[] | undefined {
    const origin = positionsOf(e.sources.origin);
    const upstream = positionsOf(e.sources.upstream);
    return mergedOrder(
      merged.map((m) => ({ origin: origin.get(m.name), upstream: upstream.get(m.name), local: m.local })),
      origin.size === 0,
    );
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

  private list(e: ListElement): YamlNode | undefined {
    const decision = this.options.visitor.list(e);
    const local = e.sources.local;
    this.report(e, decision.rule, decision.report);
    if (decision.action === 'keep') return local;
    if (decision.action === 'clear') return undefined;
    const base = decision.base === 'local' && isSeq(local) ? local : undefined;
    // As for maps: local's items that change map to their replacement (null: they go).
    const replaced = new Map<unknown, unknown>();
    const added: { value: unknown; item: ItemElement }[] = [];
    const itemOfLocal = new Map<unknown, ItemElement>();
    let changed = base === undefined;
    for (const item of e.items) {
      let value = this.walk(item.value);
      const existing = base ? item.value.sources.local : undefined;
      if (existing) itemOfLocal.set(existing, item);
      const emptied =
        isMap(value) && value.items.length === 0 && !this.options.visitor.keepEmpty(item.value, { rebuilt: false, item: true });
      if (value === undefined || emptied) {
        if (existing) {
          replaced.set(existing, null);
          changed = true;
        }
        continue;
      }
      if (e.listType === 'map' && isMap(value) && !e.derivedKey) value = withKeys(value, e.keys, item.value.sources);
      if (existing) {
        if (existing !== value) {
          replaced.set(existing, value);
          changed = true;
        }
      } else {
        added.push({ value, item });
        changed = true;
      }
    }
    const merged: { value: unknown; item: ItemElement | undefined; local: number | undefined }[] = [];
    (base ? base.items : []).forEach((node, at) => {
      const next = replaced.has(node) ? replaced.get(node) : node;
      if (next !== null) merged.push({ value: next, item: itemOfLocal.get(node), local: at });
    });
    for (const { value, item } of added) merged.push({ value, item, local: undefined });
    const origin = indexesOf(e.sources.origin);
    const upstream = indexesOf(e.sources.upstream);
    const order = mergedOrder(
      merged.map(({ item, local }) => ({
        origin: origin.get(item?.value.sources.origin),
        upstream: upstream.get(item?.value.sources.upstream),
        local,
      })),
      origin.size === 0,
    );
    if (order) changed = true;
    const items = order ? order.map((i) => merged[i]!.value) : merged.map((m) => m.value);
    const comments = this.collectionComments(e, base);
    if (!changed && comments === base) return base;
    if (items.length === 0 && !this.options.visitor.keepEmpty(e, { rebuilt: base === undefined, item: false })) return undefined;
    const out = new YAMLSeq();
    const template = base ?? e.sources.upstream ?? e.sources.origin;
    if (template) copyCollectionProps(template, out, base !== undefined);
    if (comments) copyComments(comments, out);
    out.items = items;
    return out;
  }

  /**
   * The node whose own comments a merged map or list carries: local's (merged into local), or
   * upstream's where the visitor says so, for a collection merged into local or rebuilt from
   * upstream's; none for one rebuilt from origin's alone.
   */
  private collectionComments(e: MapElement | ListElement, base: YAMLMap | YAMLSeq | undefined): YamlNode | undefined {
    const upstream = e.sources.upstream;
    if (isMissingOrNull(upstream)) return base;
    if (base !== undefined && this.options.visitor.valueComments(e) === 'local') return base;
    return upstream;
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

/** Each field name's position in a map (its first pair's); empty for anything else. */
function positionsOf(node: YamlNode | undefined): Map<string, number> {
  const at = new Map<string, number>();
  if (!isMap(node)) return at;
  pairsOf(node).forEach((pair, i) => {
    const name = keyName(pair.key);
    if (!at.has(name)) at.set(name, i);
  });
  return at;
}

/** Two maps with the same keys in the same order. */
function sameKeyOrder(a: YamlNode | undefined, b: YamlNode | undefined): boolean {
  if (!isMap(a) || !isMap(b) || a.items.length !== b.items.length) return false;
  const bPairs = pairsOf(b);
  return pairsOf(a).every((pair, i) => keyName(pair.key) === keyName(bPairs[i]!.key));
}

/** Each item node's position in a list; empty for anything else. */
function indexesOf(node: YamlNode | undefined): Map<unknown, number> {
  const at = new Map<unknown, number>();
  if (isSeq(node)) node.items.forEach((item, i) => at.set(item, i));
  return at;
}

/**
 * An item upstream deleted stays for the fields local added or changed in it, and its key fields
 * went with upstream's deletion: put them back as local has them. An item upstream has had its
 * key fields merged like any other field: a secondary key upstream deleted (a port's `protocol`)
 * stays deleted, so that merge(o, u, o) = u. (An item local lacks is never rebuilt from
 * upstream's delta: it is upstream's whole, or it stays deleted; `rules.ts`.)
 */
function withKeys(map: YAMLMap, keys: readonly string[], sources: Sources<YamlNode>): YAMLMap {
  const { local, upstream } = sources;
  if (upstream !== undefined || !isMap(local)) return map;
  const merged = new Map(pairsOf(map).map((pair) => [keyName(pair.key), pair] as const));
  const missing = new Set(
    pairsOf(local).filter((pair) => isScalar(pair.value) && keys.includes(keyName(pair.key)) && !merged.has(keyName(pair.key))),
  );
  if (missing.size === 0) return map;
  // Local's order: the key fields put back where local has them, among the merged fields.
  const pairs = pairsOf(local).flatMap((pair) => {
    if (missing.has(pair)) return [new Pair(cloneNode(pair.key as YamlNode), cloneNode(pair.value as Scalar))];
    const kept = merged.get(keyName(pair.key));
    merged.delete(keyName(pair.key));
    return kept ? [kept] : [];
  });
  const out = new YAMLMap();
  copyCollectionProps(map, out, true);
  out.items = [...pairs, ...merged.values()];
  return out;
}

/** A copy of local's node with upstream's own comments (the line comment and the lines above). */
function withOwnComments(local: YamlNode, upstream: YamlNode): YamlNode {
  const copy = cloneNode(local);
  copyComments(upstream, copy);
  return copy;
}

function copyComments(from: YamlNode, to: YamlNode): void {
  const source = from as { comment?: string | null; commentBefore?: string | null };
  const target = to as { comment?: string | null; commentBefore?: string | null };
  target.comment = source.comment;
  target.commentBefore = source.commentBefore;
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
