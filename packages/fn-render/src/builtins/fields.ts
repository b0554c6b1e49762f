/**
 * Field helpers the built-in functions share: kustomize's field specs (`spec/template/metadata/labels`,
 * lists walked through, `[]` marking one), function configs, and results.
 */
import { isMap, isScalar, isSeq, YAMLMap, type Document, type Node, type Scalar } from 'yaml';
import { groupOf, identity, type Item, type Plain } from '../items.js';
import type { KrmResult } from '../results.js';

/** What a built-in gets: the selected resources (edited in place) and its functionConfig. */
export interface BuiltinInput {
  readonly items: Item[];
  readonly config: Plain | undefined;
}

/** What it gives back: the resources after it (the same list unless it adds or removes) and its results. */
export interface BuiltinOutput {
  readonly items?: Item[];
  readonly results: KrmResult[];
}

export type Builtin = (input: BuiltinInput) => BuiltinOutput;

/** A failure a built-in reports as an error result (the function then fails, as its container would). */
export class BuiltinConfigError extends Error {}

/** A field spec: which resources (group, version, kind; empty means any) and the `/`-separated path. */
export interface FieldSpec {
  readonly group?: string;
  readonly version?: string;
  readonly kind?: string;
  readonly path: string;
  readonly create?: boolean;
}

export function specApplies(doc: Document, spec: FieldSpec): boolean {
  const id = identity(doc);
  if (spec.kind && spec.kind !== id.kind) return false;
  if (spec.group !== undefined && spec.group !== groupOf(id.apiVersion)) return false;
  if (spec.version && spec.version !== id.apiVersion.slice(id.apiVersion.indexOf('/') + 1)) return false;
  return true;
}

/**
 * The maps at a field spec's path whose key `leaf` is to be set (the path's last segment is the
 * map's own key: `metadata/labels` gives the labels map). Lists on the way are walked through;
 * missing maps are made when `create` is set.
 */
export function mapsAt(doc: Document, path: string, create: boolean): YAMLMap[] {
  const segments = path.split('/').filter((s) => s !== '');
  const out: YAMLMap[] = [];
  const walk = (node: unknown, i: number) => {
    if (isSeq(node)) {
      for (const el of node.items) walk(el, i);
      return;
    }
    if (!isMap(node)) return;
    if (i === segments.length) {
      out.push(node);
      return;
    }
    const seg = (segments[i] as string).replace(/\[\]$/, '');
    let child = node.get(seg, true) as unknown;
    if ((child === undefined || (isScalar(child) && child.value === null)) && create && !segments[i]?.endsWith('[]')) {
      child = new YAMLMap();
      node.set(seg, child);
    }
    walk(child, i + 1);
  };
  walk(doc.contents, 0);
  return out;
}

/** The string values of a ConfigMap's `data` (or another field of a custom config). */
export function stringData(config: Plain | undefined, field = 'data'): Record<string, string> {
  const data = config?.[field];
  const out: Record<string, string> = {};
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    for (const [k, v] of Object.entries(data as Plain)) out[k] = v === null || v === undefined ? '' : String(v);
  }
  return out;
}

export function isKind(config: Plain | undefined, apiVersion: string | undefined, kind: string): boolean {
  return config?.['kind'] === kind && (apiVersion === undefined || config['apiVersion'] === apiVersion);
}

/** Where a result is about: the resource and its file, as the catalog functions report it. */
export function resultFor(item: Item, message: string, severity: KrmResult['severity'], fieldPath?: string): KrmResult {
  const id = identity(item.doc);
  return {
    message,
    ...(severity ? { severity } : {}),
    resourceRef: { apiVersion: id.apiVersion, kind: id.kind, name: id.name, ...(id.namespace ? { namespace: id.namespace } : {}) },
    ...(fieldPath ? { field: { path: fieldPath } } : {}),
    file: { path: item.path, index: item.index },
  };
}

/** A scalar node set to text: a string stays a string, a number or boolean is read from the text. */
export function setScalarText(node: Scalar, text: string): void {
  node.value = typeof node.value === 'string' ? text : parseScalarText(text);
}

export function parseScalarText(text: string): unknown {
  if (/^-?(?:0|[1-9]\d*)$/.test(text)) return Number(text);
  if (/^-?(?:0|[1-9]\d*)\.\d+$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null' || text === '~') return null;
  return text;
}

export type { Node };
