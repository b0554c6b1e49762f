/**
 * apply-replacements (catalog v0.1): kustomize's `replacements` as a function. Each replacement
 * copies the value at `source.fieldPath` (default `metadata.name`) of the one resource `source`
 * selects into the `fieldPaths` of every resource its targets `select` and do not `reject`;
 * `options.delimiter`/`index` take or replace one part of a delimited string, `options.create`
 * makes missing target fields. Paths are dotted, with `[name=value]` to pick a list element and
 * `*` for every element.
 */
import { yamlDocumentOptions } from '@kdelta/kptfile-model';
import { Document, isMap, isScalar, isSeq, YAMLMap, YAMLSeq, type Node } from 'yaml';
import { groupOf, identity, stringMap, type Item, type Plain } from '../items.js';
import { BuiltinConfigError, type Builtin } from './fields.js';

interface ResourceSelector {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  annotationSelector?: string;
}
interface Options {
  delimiter?: string;
  index?: number;
  create?: boolean;
}
interface Replacement {
  source?: ResourceSelector & { fieldPath?: string; options?: Options };
  targets?: { select?: ResourceSelector; reject?: ResourceSelector[]; fieldPaths?: string[]; options?: Options }[];
}

function selectorMatches(item: Item, s: ResourceSelector): boolean {
  const id = identity(item.doc);
  const version = id.apiVersion.includes('/') ? id.apiVersion.slice(id.apiVersion.indexOf('/') + 1) : id.apiVersion;
  if (s.group !== undefined && s.group !== '' && s.group !== groupOf(id.apiVersion)) return false;
  if (s.version && s.version !== version) return false;
  if (s.kind && s.kind !== id.kind) return false;
  if (s.name && s.name !== id.name) return false;
  if (s.namespace && s.namespace !== id.namespace) return false;
  for (const [field, sel] of [
    ['labels', s.labelSelector],
    ['annotations', s.annotationSelector],
  ] as const) {
    if (!sel) continue;
    const have = stringMap(item.doc, field);
    for (const term of sel.split(',')) {
      const [k, v] = term.split('=').map((x) => x.trim());
      if (k === undefined || (v === undefined ? !(k in have) : have[k] !== v)) return false;
    }
  }
  return true;
}

function pathSegments(fieldPath: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  for (const c of fieldPath) {
    if (c === '[') depth++;
    if (c === ']') depth--;
    if (c === '.' && depth === 0) {
      if (cur !== '') out.push(cur);
      cur = '';
    } else if (c === '[' && depth === 1 && cur !== '') {
      out.push(cur);
      cur = '[';
    } else cur += c;
  }
  if (cur !== '') out.push(cur);
  return out;
}

/** The nodes at `fieldPath` (several when `*` is used); missing maps made when `create`. */
function nodesAt(doc: Document, fieldPath: string, create: boolean): { parent: YAMLMap | YAMLSeq; key: string | number }[] {
  const segs = pathSegments(fieldPath);
  const out: { parent: YAMLMap | YAMLSeq; key: string | number }[] = [];
  const walk = (node: unknown, i: number, parent: YAMLMap | YAMLSeq | undefined, key: string | number | undefined) => {
    if (i === segs.length) {
      if (parent !== undefined && key !== undefined) out.push({ parent, key });
      return;
    }
    const seg = segs[i] as string;
    const bracket = /^\[(.*)\]$/.exec(seg);
    if (bracket) {
      if (!isSeq(node)) return;
      const inner = bracket[1] as string;
      const eq = inner.indexOf('=');
      if (eq >= 0) {
        const [k, v] = [inner.slice(0, eq), inner.slice(eq + 1)];
        node.items.forEach((el, idx) => {
          if (isMap(el) && String(el.get(k)) === v) walk(el, i + 1, node, idx);
        });
      } else if (/^\d+$/.test(inner)) walk(node.items[Number(inner)], i + 1, node, Number(inner));
      return;
    }
    if (seg === '*' && isSeq(node)) {
      node.items.forEach((el, idx) => walk(el, i + 1, node, idx));
      return;
    }
    if (isSeq(node) && /^\d+$/.test(seg)) {
      walk(node.items[Number(seg)], i + 1, node, Number(seg));
      return;
    }
    if (!isMap(node)) return;
    let child = node.get(seg, true) as unknown;
    if (child === undefined && create) {
      if (i === segs.length - 1) {
        out.push({ parent: node, key: seg });
        return;
      }
      child = /^\[/.test(segs[i + 1] ?? '') ? new YAMLSeq() : new YAMLMap();
      node.set(seg, child);
    }
    if (child === undefined) return;
    walk(child, i + 1, node, seg);
  };
  walk(doc.contents, 0, undefined, undefined);
  return out;
}

function getValue(parent: YAMLMap | YAMLSeq, key: string | number): unknown {
  return parent.get(key as never, true);
}

export const applyReplacements: Builtin = ({ items, config }) => {
  const replacements = (config as Plain | undefined)?.['replacements'];
  if (!Array.isArray(replacements)) throw new BuiltinConfigError('functionConfig must be an ApplyReplacements with a `replacements` list');
  for (const [n, raw] of (replacements as Replacement[]).entries()) {
    const r = raw ?? {};
    if (!r.source) throw new BuiltinConfigError(`replacements[${n}]: a source is required`);
    const sources = items.filter((item) => selectorMatches(item, r.source as ResourceSelector));
    if (sources.length === 0) throw new BuiltinConfigError(`replacements[${n}]: nothing selected by source ${JSON.stringify(r.source)}`);
    if (sources.length > 1)
      throw new BuiltinConfigError(`replacements[${n}]: more than one resource selected by source ${JSON.stringify(r.source)}`);
    const fieldPath = r.source.fieldPath || 'metadata.name';
    const found = nodesAt((sources[0] as Item).doc, fieldPath, false);
    if (found.length === 0)
      throw new BuiltinConfigError(
        `replacements[${n}]: fieldPath \`${fieldPath}\` is missing for replacement source ${JSON.stringify(r.source)}`,
      );
    const { parent, key } = found[0] as { parent: YAMLMap | YAMLSeq; key: string | number };
    let value = getValue(parent, key) as Node;
    const so = r.source.options;
    if (so?.delimiter) {
      if (!isScalar(value)) throw new BuiltinConfigError(`replacements[${n}]: delimiter option can only be used with scalar values`);
      const parts = String(value.value).split(so.delimiter);
      const idx = so.index ?? 0;
      if (idx < 0 || idx >= parts.length)
        throw new BuiltinConfigError(`replacements[${n}]: options.index ${idx} is out of bounds for value ${String(value.value)}`);
      value = new Document(parts[idx], yamlDocumentOptions).contents as Node;
    }
    for (const target of r.targets ?? []) {
      if (!target.select) throw new BuiltinConfigError(`replacements[${n}]: target must specify resources to select`);
      const chosen = items.filter(
        (item) =>
          selectorMatches(item, target.select as ResourceSelector) && !(target.reject ?? []).some((rj) => selectorMatches(item, rj)),
      );
      for (const item of chosen) {
        for (const fp of target.fieldPaths ?? ['metadata.name']) {
          const to = target.options ?? {};
          for (const place of nodesAt(item.doc, fp, to.create ?? false)) {
            const current = getValue(place.parent, place.key);
            let next: unknown = value.clone ? value.clone() : value;
            if (to.delimiter) {
              if (!isScalar(value))
                throw new BuiltinConfigError(`replacements[${n}]: delimiter option can only be used with scalar values`);
              const parts = isScalar(current) && current.value !== null ? String(current.value).split(to.delimiter) : [];
              const idx = to.index ?? 0;
              const v = String(value.value);
              if (idx < 0) parts.unshift(v);
              else if (idx >= parts.length) parts.push(v);
              else parts[idx] = v;
              next = parts.join(to.delimiter);
            }
            if (isScalar(current) && isScalar(next)) current.value = next.value;
            else if (isScalar(current) && typeof next === 'string') current.value = next;
            else place.parent.set(place.key as never, next);
          }
        }
      }
    }
  }
  return { results: [] };
};
