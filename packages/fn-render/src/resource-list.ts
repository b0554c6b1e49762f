/**
 * The wire format of the KRM Functions Specification: a `config.kubernetes.io/v1` `ResourceList`
 * with `items`, `functionConfig` and, on the way back, `results`. Each item carries where it came
 * from in kpt's annotations (its file and index, relative to its own package, and the package),
 * which a function may change to move it; they are taken off again on the way back.
 */
import { parseYamlDocument, yamlDocumentOptions } from '@kdelta/kptfile-model';
import { Document, isMap, isNode, isSeq, isScalar, YAMLMap, YAMLSeq } from 'yaml';
import type { Item, Plain } from './items.js';
import type { KrmResult } from './results.js';

export const PATH_ANNOTATION = 'config.kubernetes.io/path';
export const INDEX_ANNOTATION = 'config.kubernetes.io/index';
export const INTERNAL_PATH_ANNOTATION = 'internal.config.kubernetes.io/path';
export const INTERNAL_INDEX_ANNOTATION = 'internal.config.kubernetes.io/index';
export const PACKAGE_PATH_ANNOTATION = 'internal.config.kubernetes.io/package-path';
export const ID_ANNOTATION = 'config.k8s.io/id';
const WIRE_ANNOTATIONS = [
  PATH_ANNOTATION,
  INDEX_ANNOTATION,
  INTERNAL_PATH_ANNOTATION,
  INTERNAL_INDEX_ANNOTATION,
  PACKAGE_PATH_ANNOTATION,
  ID_ANNOTATION,
];

/** `pkg` as the functions see it: relative to the package being rendered, `.` for that package. */
function packagePath(root: string, pkg: string): string {
  if (pkg === root) return '.';
  return root === '' ? pkg : pkg.slice(root.length + 1);
}

function treePackage(root: string, rel: string): string {
  const r = rel.replace(/^\.\/?/, '').replace(/\/$/, '');
  if (r === '') return root;
  return root === '' ? r : `${root}/${r}`;
}

/** The ResourceList text handed to a function. */
export function encodeResourceList(items: readonly Item[], functionConfig: Plain | undefined, root: string): string {
  const list = new Document({ apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList' }, yamlDocumentOptions);
  const seq = new YAMLSeq();
  items.forEach((item, id) => {
    const node = item.doc.clone().contents;
    if (!isMap(node)) return;
    const doc = new Document(null, yamlDocumentOptions);
    doc.contents = node;
    if (!isMap(doc.getIn(['metadata'], true))) doc.setIn(['metadata'], new YAMLMap());
    if (!isMap(doc.getIn(['metadata', 'annotations'], true))) doc.setIn(['metadata', 'annotations'], new YAMLMap());
    const set = (k: string, v: string) => doc.setIn(['metadata', 'annotations', k], v);
    set(PATH_ANNOTATION, item.path);
    set(INDEX_ANNOTATION, String(item.index));
    set(INTERNAL_PATH_ANNOTATION, item.path);
    set(INTERNAL_INDEX_ANNOTATION, String(item.index));
    set(PACKAGE_PATH_ANNOTATION, packagePath(root, item.pkg));
    set(ID_ANNOTATION, String(id));
    seq.items.push(node);
  });
  list.set('items', seq);
  if (functionConfig !== undefined) list.set('functionConfig', list.createNode(functionConfig));
  return list.toString({ lineWidth: 0 });
}

export class ResourceListError extends Error {}

/**
 * Reads a function's output. Items keep the identity (`config.k8s.io/id`) of the input they came
 * from: their package, and their original text while unchanged; new items belong to `pkg`.
 */
export function decodeResourceList(
  text: string,
  inputs: readonly Item[],
  root: string,
  pkg: string,
): { items: Item[]; results: KrmResult[] } {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) throw new ResourceListError(`its output is not YAML: ${doc.errors[0]?.message.split('\n')[0] ?? ''}`);
  if (doc.get('kind') !== 'ResourceList')
    throw new ResourceListError(`its output is not a ResourceList (kind: ${JSON.stringify(doc.get('kind') ?? null)})`);
  const results = (() => {
    const r = doc.get('results');
    if (r === undefined || r === null) return [];
    const js = doc.toJS() as { results?: unknown };
    if (!Array.isArray(js.results)) throw new ResourceListError('its output has `results` that is not a list');
    return js.results.filter((x): x is KrmResult => typeof x === 'object' && x !== null && typeof (x as KrmResult).message === 'string');
  })();
  const seq = doc.get('items', true);
  if (seq !== undefined && seq !== null && !isSeq(seq) && !(isScalar(seq) && seq.value === null))
    throw new ResourceListError('its output has `items` that is not a list');
  const items: Item[] = [];
  for (const node of isSeq(seq) ? seq.items : []) {
    if (!isMap(node)) throw new ResourceListError('its output has an item that is not a map');
    const out = new Document(null, yamlDocumentOptions);
    out.contents = node;
    const annotations = readAnnotations(out);
    const id = annotations[ID_ANNOTATION];
    const input = id !== undefined && /^\d+$/.test(id) ? inputs[Number(id)] : undefined;
    // kyaml's rule: the internal annotation wins when the function changed it; the legacy one otherwise.
    const pick = (internal: string, legacy: string, before: string | undefined) => {
      const i = annotations[internal];
      const l = annotations[legacy];
      if (i !== undefined && i !== before) return i;
      return l ?? i;
    };
    const path = pick(INTERNAL_PATH_ANNOTATION, PATH_ANNOTATION, input?.path);
    const index = pick(INTERNAL_INDEX_ANNOTATION, INDEX_ANNOTATION, input === undefined ? undefined : String(input.index));
    const pkgPath = annotations[PACKAGE_PATH_ANNOTATION];
    stripAnnotations(out, input);
    // kpt keeps the comments of what a function did not change (many functions drop comments)
    const same = input !== undefined && JSON.stringify(out.toJS()) === JSON.stringify(input.doc.toJS());
    if (input !== undefined && !same) restoreComments(input.doc, out);
    const item: Item = {
      doc: same ? input.doc : out,
      pkg: pkgPath !== undefined ? treePackage(root, pkgPath) : (input?.pkg ?? pkg),
      path: path ?? input?.path ?? defaultPath(out),
      index: index !== undefined && /^\d+$/.test(index) ? Number(index) : Number.MAX_SAFE_INTEGER,
      ...(input?.original !== undefined ? { original: input.original } : {}),
      ...(input?.baseline !== undefined ? { baseline: input.baseline } : {}),
      ...(input?.fromFile !== undefined ? { fromFile: input.fromFile, fromIndex: input.fromIndex ?? 0 } : {}),
    };
    items.push(item);
  }
  return { items, results };
}

/**
 * kpt's rule for a resource a function changed (kyaml's CopyComments): each comment of the
 * resource as given comes back where the output has none at the same place — fields by key,
 * list items by position.
 */
export function restoreComments(from: Document, to: Document): void {
  copyComments(from, to);
  restoreNodeComments(from.contents, to.contents);
}

interface Commented {
  commentBefore?: string | null | undefined;
  comment?: string | null | undefined;
}

function copyComments(from: Commented, to: Commented): void {
  if (!to.commentBefore && from.commentBefore) to.commentBefore = from.commentBefore;
  if (!to.comment && from.comment) to.comment = from.comment;
}

function restoreNodeComments(from: unknown, to: unknown): void {
  if (!isNode(from) || !isNode(to)) return;
  copyComments(from, to);
  if (isMap(from) && isMap(to)) {
    const sources = new Map<string, (typeof from.items)[number]>();
    for (const pair of from.items) if (isScalar(pair.key)) sources.set(String(pair.key.value), pair);
    for (const pair of to.items) {
      const source = isScalar(pair.key) ? sources.get(String(pair.key.value)) : undefined;
      if (!source) continue;
      if (isScalar(source.key) && isScalar(pair.key)) copyComments(source.key, pair.key);
      restoreNodeComments(source.value, pair.value);
    }
  } else if (isSeq(from) && isSeq(to)) {
    to.items.forEach((item, i) => restoreNodeComments(from.items[i], item));
  }
}

function readAnnotations(doc: Document): Record<string, string> {
  const node = doc.getIn(['metadata', 'annotations'], true);
  const out: Record<string, string> = {};
  if (!isMap(node)) return out;
  for (const p of node.items) {
    const k = isScalar(p.key) ? String(p.key.value) : String(p.key);
    if (isScalar(p.value)) out[k] = String(p.value.value);
  }
  return out;
}

function stripAnnotations(doc: Document, input: Item | undefined): void {
  // kpt also drops its own bookkeeping annotations a function may have kept
  const node = doc.getIn(['metadata', 'annotations'], true);
  if (isMap(node)) {
    for (const k of WIRE_ANNOTATIONS) node.delete(k);
    node.items = node.items.filter((p) => {
      const k = isScalar(p.key) ? String(p.key.value) : String(p.key);
      return !k.startsWith('internal.config.kubernetes.io/') && !k.startsWith('internal.kpt.dev/');
    });
    const hadAnnotations = input !== undefined && isMap(input.doc.getIn(['metadata', 'annotations'], true));
    if (node.items.length === 0 && !hadAnnotations) doc.deleteIn(['metadata', 'annotations']);
  }
}

/**
 * kyaml's default file for a resource a function made without saying where:
 * `[<namespace>/]<kind>_<name>.yaml`, the kind in lower case, the name as written.
 */
export function defaultPath(doc: Document): string {
  const kind = String(doc.get('kind') ?? 'resource').toLowerCase();
  const name = String(doc.getIn(['metadata', 'name']) ?? '');
  const ns = doc.getIn(['metadata', 'namespace']);
  const file = `${kind}_${name}.yaml`;
  return typeof ns === 'string' && ns !== '' ? `${ns}/${file}` : file;
}
