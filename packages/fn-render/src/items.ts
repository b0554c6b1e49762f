/**
 * The resources a render works on: every KRM document of a package (its Kptfile included, as kpt
 * passes it), as a mutable YAML document that keeps its comments, with the place it came from.
 */
import { isCollection, isMap, isScalar, isSeq, type Document, YAMLMap } from 'yaml';
import { type PackageView, parseYamlDocument } from '@kdelta/kptfile-model';

export interface Item {
  /** The resource (comments kept); functions edit it in place or replace it. */
  doc: Document;
  /** The package it belongs to: a directory of the tree (`''` is the tree's root). */
  pkg: string;
  /** Its file, relative to {@link pkg}. */
  path: string;
  /** Its position among the resources of that file. */
  index: number;
  /** The document's text as read, when it came from a file: written back as is while unchanged. */
  readonly original?: string;
  /** The resource as read, as plain data: tells a changed resource from a reprinted one cheaply. */
  readonly baseline?: unknown;
  /** The tree file and index it was read from (kept through functions: a document stays in place). */
  readonly fromFile?: string;
  readonly fromIndex?: number;
}

export type Plain = Record<string, unknown>;

const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses a resource so that it prints back as written: the `yaml` library reads the comment of
 * `key: # comment` before a block list or map as the list's own comment and would print it on the
 * next line; it goes back on the key.
 */
export function parseResource(text: string, parsed?: Document): Document {
  const doc = parsed ?? parseYamlDocument(text);
  const visit = (node: unknown) => {
    if (isSeq(node)) for (const el of node.items) visit(el);
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const value = pair.value;
      if (isScalar(pair.key) && isCollection(value) && value.commentBefore && pair.key.range) {
        const end = text.indexOf('\n', pair.key.range[1]);
        const line = text.slice(pair.key.range[1], end < 0 ? text.length : end);
        const [first, ...rest] = value.commentBefore.split('\n');
        if (first !== undefined && /^\s*:\s*#/.test(line) && line.slice(line.indexOf('#') + 1) === first) {
          pair.key.comment = first;
          value.commentBefore = rest.length > 0 ? rest.join('\n') : undefined;
        }
      }
      visit(value);
    }
  };
  visit(doc.contents);
  return doc;
}

/** The package's resources in file order, the Kptfile first (kpt reads it as one). */
export function packageItems(view: PackageView): Item[] {
  const out: Item[] = [];
  const kptfile = view.kptfileText();
  const file = (rel: string) => (view.dir === '' ? rel : `${view.dir}/${rel}`);
  if (kptfile !== undefined) {
    const doc = parseResource(kptfile);
    out.push({
      doc,
      baseline: doc.toJS(),
      pkg: view.dir,
      path: 'Kptfile',
      index: 0,
      original: kptfile,
      fromFile: file('Kptfile'),
      fromIndex: 0,
    });
  }
  for (const r of view.resources()) {
    // the package model parsed it already: a copy is much cheaper than a second parse
    out.push({
      doc: parseResource(r.text, r.document.clone()),
      baseline: r.object,
      pkg: view.dir,
      path: r.file,
      index: r.index,
      original: r.text,
      fromFile: file(r.file),
      fromIndex: r.index,
    });
  }
  return out;
}

/** The resource as plain data (a fresh copy). */
export function plain(item: Item): Plain {
  const v = item.doc.toJS() as unknown;
  return isPlain(v) ? v : {};
}

/** `apiVersion`, `kind`, `metadata.name` and `metadata.namespace`, read without converting the document. */
export function identity(doc: Document): { apiVersion: string; kind: string; name: string; namespace: string } {
  const str = (path: string[]) => {
    const v = doc.getIn(path);
    return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
  };
  return {
    apiVersion: str(['apiVersion']),
    kind: str(['kind']),
    name: str(['metadata', 'name']),
    namespace: str(['metadata', 'namespace']),
  };
}

/** The resource's labels or annotations as a string map. */
export function stringMap(doc: Document, field: 'labels' | 'annotations'): Record<string, string> {
  const node = doc.getIn(['metadata', field], true);
  const out: Record<string, string> = {};
  if (!isMap(node)) return out;
  for (const pair of node.items) {
    const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const v = isScalar(pair.value) ? pair.value.value : pair.value;
    out[k] = v === null || v === undefined ? '' : String(v);
  }
  return out;
}

/** The API group of an `apiVersion` (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** kpt's `config.kubernetes.io/local-config: "true"`: a resource that is never applied to a cluster. */
export function isLocalConfig(doc: Document): boolean {
  return stringMap(doc, 'annotations')['config.kubernetes.io/local-config'] === 'true';
}

/** Sets `metadata.<field>.<key>`, creating the map at the end of `metadata` when there is none. */
export function setMetadataEntry(doc: Document, field: 'labels' | 'annotations', key: string, value: string): boolean {
  const current = doc.getIn(['metadata', field, key]);
  if (current === value) return false;
  if (!isMap(doc.getIn(['metadata', field], true))) doc.setIn(['metadata', field], new YAMLMap());
  doc.setIn(['metadata', field, key], value);
  return true;
}

/** The sequence indentation a file uses (kpt keeps it: `compact` is `- ` under the key's column). */
export function sequenceIndent(text: string): 'compact' | 'wide' {
  const m = /^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n( *)- /m.exec(text);
  if (!m) return 'compact';
  return (m[2]?.length ?? 0) > (m[1]?.length ?? 0) ? 'wide' : 'compact';
}

/** Prints a resource the way kpt writes one: no line folding, the file's sequence indentation. */
export function printItem(doc: Document, indent: 'compact' | 'wide'): string {
  return doc.toString({ indentSeq: indent === 'wide', lineWidth: 0, flowCollectionPadding: false });
}
