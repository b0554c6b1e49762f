/**
 * Applies a visitor's decisions to the collated tree and builds the merged value. Nothing is
 * mutated: unchanged local nodes are reused as they are (so an untouched document prints byte for
 * byte), changed maps and lists are shallow copies, and values from upstream are cloned.
 */
import { isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import type { Element, FieldElement, LeafElement, ListElement, MapElement, Sources } from '../collate/element.js';
import type { FieldConflict } from '../errors.js';
import { cloneNode, commentsOf, isMissingOrNull, isNull, keyName, pairsOf, sameValue, type YamlNode } from '../yaml/nodes.js';
import { localChanged, sameOrBothEmpty } from './compare.js';
import type { MergeVisitor } from './visitor.js';

export interface WalkOptions {
  readonly visitor: MergeVisitor;
  /** `kyaml`: explicit nulls are dropped from the output and new keys are appended in visit order. */
  readonly rules: 'kpt' | 'kyaml';
}

export interface WalkResult {
  readonly node: YamlNode | undefined;
  readonly conflicts: readonly FieldConflict[];
}

export function walkElement(element: Element, options: WalkOptions): WalkResult {
  const conflicts: FieldConflict[] = [];
  const node = new Walker(options, conflicts).walk(element);
  return { node, conflicts };
}

class Walker {
  constructor(
    private readonly options: WalkOptions,
    private readonly conflicts: FieldConflict[],
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
    let result: YamlNode | undefined;
    if (decision.take === 'local') result = local;
    else if (decision.take === 'upstream') result = isMissingOrNull(upstream) ? undefined : this.fromUpstream(e, upstream!);
    // Upstream's value equals local's already: keep local's node, so its text stays as it is.
    if (result !== undefined && result !== local && local !== undefined && sameValue(local, result) && commentsOf(local) === commentsOf(result)) {
      result = local;
    }
    if (decision.take !== 'local' && localChanged(e.sources) && !sameOrBothEmpty(local, result)) {
      this.conflict(e.sources, e.path, decision.take === 'clear' ? 'explicit-null' : decision.rule, 'upstream');
    } else if (decision.rule === 'both-changed-local-wins' && !sameOrBothEmpty(local, upstream)) {
      this.conflict(e.sources, e.path, decision.rule, 'local');
    }
    if (result !== undefined && this.options.rules === 'kyaml' && isNull(result)) return undefined;
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
    if (decision.action === 'clear') {
      if (isMap(local) && localChanged(e.sources)) this.conflict(e.sources, e.path, decision.rule, 'upstream');
      return undefined;
    }
    const base = decision.base === 'local' && isMap(local) ? local : undefined;
    const pairs: Pair<unknown, unknown>[] = base ? [...pairsOf(base)] : [];
    let changed = base === undefined;
    for (const field of e.fields) {
      const value = this.walk(field.value);
      const existing = base ? field.pairs.local : undefined;
      const at = existing ? pairs.indexOf(existing) : -1;
      if (value === undefined) {
        if (at !== -1) {
          pairs.splice(at, 1);
          changed = true;
        }
        continue;
      }
      const key = this.key(field, existing);
      if (existing && at !== -1) {
        const sameValueNode = existing.value === value || (existing.value == null && isNull(value) && !isScalar(existing.value));
        if (sameValueNode && key === existing.key) continue;
        pairs[at] = new Pair(key, value);
        changed = true;
        continue;
      }
      pairs.splice(this.insertAt(pairs, field, e), 0, new Pair(key, value));
      changed = true;
    }
    // Upstream deleted the map and nothing local is left in it: it goes (kpt); kyaml keeps `{}`.
    if (this.options.rules === 'kpt' && pairs.length === 0 && e.sources.upstream === undefined && e.sources.origin !== undefined) {
      return undefined;
    }
    if (!changed) return base;
    // A map rebuilt from nothing that stayed empty: kyaml keeps `{}`; kpt mode keeps it only when
    // upstream added it, so a map local deleted does not come back empty.
    if (!base && pairs.length === 0 && this.options.rules === 'kpt' && e.sources.origin !== undefined) return undefined;
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
      if (!local || !upstream || this.options.visitor.keyComments(field.keys) === 'local') return existing.key;
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
   * Where a field new to local goes: kyaml appends in visit order; kpt mode puts it after the
   * field that precedes it upstream, so added fields land where upstream has them.
   */
  private insertAt(pairs: readonly Pair<unknown, unknown>[], field: FieldElement, e: MapElement): number {
    const upstream = e.sources.upstream;
    if (this.options.rules === 'kyaml' || !isMap(upstream)) return pairs.length;
    const order = pairsOf(upstream).map((p) => keyName(p.key));
    const position = order.indexOf(field.name);
    if (position === -1) return pairs.length;
    const names = pairs.map((p) => keyName(p.key));
    for (let i = position - 1; i >= 0; i--) {
      const at = names.indexOf(order[i]!);
      if (at !== -1) return at + 1;
    }
    for (let i = position + 1; i < order.length; i++) {
      const at = names.indexOf(order[i]!);
      if (at !== -1) return at;
    }
    return pairs.length;
  }

  private list(e: ListElement): YamlNode | undefined {
    const decision = this.options.visitor.list(e);
    const local = e.sources.local;
    if (decision.action === 'clear') {
      if (isSeq(local) && localChanged(e.sources)) this.conflict(e.sources, e.path, decision.rule, 'upstream');
      return undefined;
    }
    const base = decision.base === 'local' && isSeq(local) ? local : undefined;
    const items: unknown[] = base ? [...base.items] : [];
    const added: unknown[] = [];
    let changed = base === undefined;
    for (const item of e.items) {
      let value = this.walk(item.value);
      const existing = base ? item.value.sources.local : undefined;
      const at = existing ? items.indexOf(existing) : -1;
      if (value === undefined || (isMap(value) && value.items.length === 0)) {
        if (at !== -1) {
          items.splice(at, 1);
          changed = true;
        }
        continue;
      }
      if (e.listType === 'map' && isMap(value)) value = withKeys(value, item.identity);
      if (at !== -1) {
        if (items[at] !== value) {
          items[at] = value;
          changed = true;
        }
      } else {
        added.push(value);
        changed = true;
      }
    }
    if (!changed) return base;
    items.push(...added);
    // An emptied list goes (kyaml), unless upstream itself has it empty: then it is upstream's value.
    if (items.length === 0) {
      const upstreamHasItEmpty = isSeq(e.sources.upstream) && e.sources.upstream.items.length === 0;
      const keep = this.options.rules === 'kpt' && upstreamHasItEmpty && (base !== undefined || e.sources.origin === undefined);
      if (!keep) return undefined;
    }
    const out = new YAMLSeq();
    const template = base ?? e.sources.upstream ?? e.sources.origin;
    if (template) copyCollectionProps(template, out, base !== undefined);
    out.items = items;
    return out;
  }

  private conflict(sources: Sources<YamlNode>, path: FieldConflict['path'], rule: FieldConflict['rule'], winner: 'upstream' | 'local') {
    this.conflicts.push({ path, rule, winner, values: { origin: sources.origin, upstream: sources.upstream, local: sources.local } });
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
