/**
 * kpt's merge comments: `metadata: # kpt-merge: <namespace>/<name>` records a resource's
 * upstream identity so a local rename still matches it, and the annotation
 * `internal.kpt.dev/upstream-identifier: '<group>|<kind>|<namespace or default>|<name>'`
 * carries the same identity. Edits are made in the text, so everything else in the file stays
 * byte for byte.
 *
 * Two paths give the same edits. The fast one reads files written in the plain block style of
 * KRM files (no tabs, anchors, tags, multi-line flow or plain scalars...) with merge-core's line
 * scanner, which checks on the way that `yaml` would compose them without error. Anything it does
 * not model exactly makes it give up, and the file goes through `yaml`'s composed Documents.
 */
import {
  type IdentifiedDocument,
  identifyScanned,
  parseYamlStream,
  type ScannedLines,
  type ScannedPair,
  type ScannedValue,
  scanEachDocument,
  scannedPair,
} from '@kdelta/merge-core';
import { isCrlf } from './yaml-file.js';
import { isMap, isScalar, type Document, type Node, type Pair, type YAMLMap } from 'yaml';

export const MERGE_COMMENT_PREFIX = 'kpt-merge:';
export const UPSTREAM_IDENTIFIER_ANNOTATION = 'internal.kpt.dev/upstream-identifier';

export interface MergeIdentity {
  namespace: string;
  name: string;
}

/** Reads `kpt-merge: <ns>/<name>` out of a comment, if there is one. */
export function parseMergeComment(comment: string | undefined | null): MergeIdentity | undefined {
  if (!comment) return undefined;
  const m = /kpt-merge:\s*([^\s/]*)\/(\S+)/.exec(comment);
  if (!m) return undefined;
  return { namespace: m[1] ?? '', name: m[2] ?? '' };
}

interface Edit {
  at: number;
  end: number;
  text: string;
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion?.includes('/')) return '';
  return apiVersion.slice(0, apiVersion.indexOf('/'));
}

function column(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** Where the line holding `offset` ends, before its `\n` or `\r\n`. */
function endOfKeyLine(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  if (nl < 0) return text.length;
  return nl > offset && text[nl - 1] === '\r' ? nl - 1 : nl;
}

/** The text of the `metadata:` key line after the key: where the merge comment goes. */
function commentEdit(
  text: string,
  keyEnd: number,
  namespace: string | undefined,
  name: string | undefined,
): { identity: MergeIdentity; edit?: Edit } {
  const lineEnd = endOfKeyLine(text, keyEnd);
  const afterKey = text.slice(keyEnd, lineEnd);
  const hash = afterKey.indexOf('#');
  const found = parseMergeComment(hash >= 0 ? afterKey.slice(hash) : undefined);
  if (found) return { identity: found };
  const identity = { namespace: namespace ?? '', name: name ?? '' };
  const comment = `# ${MERGE_COMMENT_PREFIX} ${identity.namespace}/${identity.name}`;
  if (hash >= 0) return { identity, edit: { at: keyEnd + hash, end: lineEnd, text: comment } };
  const trimmed = afterKey.replace(/[ \t]+$/, '');
  return { identity, edit: { at: keyEnd + trimmed.length, end: lineEnd, text: ` ${comment}` } };
}

function insertion(text: string, at: number, indent: string, lines: string): Edit {
  return { at, end: at, text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${lines.replace(/^/gm, indent)}\n` };
}

const identifierLine = (id: string): string => `${UPSTREAM_IDENTIFIER_ANNOTATION}: ${quote(id)}`;

// ---------------------------------------------------------------------------------------------
// Fast path: merge-core's line scanner for the block-style subset of YAML KRM files are written in.

/** Thrown when the scanned text needs an edit the fast path does not make. */
class Unsupported {}
const UNSUPPORTED = new Unsupported();
function bail(): never {
  throw UNSUPPORTED;
}

const isSkippable = (line: string): boolean => /^ *(?:#.*)?$/.test(line);

/** The edits of the documents of one text, made on the scan's own lines. */
class ScannedFile {
  constructor(
    readonly text: string,
    readonly lines: ScannedLines,
  ) {}

  /** Offset where text goes after `v`, the value of the last entry of a block map. */
  insertAt(v: ScannedValue): number {
    let line: number;
    switch (v.kind) {
      case 'scalar':
      case 'flow-map':
      case 'flow-seq':
        line = v.line;
        break;
      case 'map':
      case 'seq':
      case 'block-scalar': {
        line = v.last;
        const next = line + 1;
        // what follows must be a content line, a `---` or the end of the text
        // (or the empty rest after the text's last newline)
        const atEnd = next === this.lines.count - 1 && this.lines.text(next) === '';
        if (next < this.lines.count && !atEnd && isSkippable(this.lines.text(next))) bail();
        break;
      }
      default:
        return bail();
    }
    return this.lines.start(line + 1);
  }

  /** Adds the document's edits to `out`; returns the identity its merge comment names, if it has one. */
  edits(root: readonly ScannedPair[], out: Edit[]): MergeIdentity | undefined {
    const text = this.text;
    const str = (v: ScannedValue | undefined): string | undefined => {
      if (v?.kind === 'block-scalar') bail();
      if (v?.kind !== 'scalar') return undefined;
      if (v.str === null) bail();
      return v.str;
    };
    const metaPair = scannedPair(root, 'metadata');
    const meta = metaPair?.value;
    if (meta?.kind === 'flow-map' && meta.size > 0) bail(); // flow-style metadata: see flowMetadataEdits
    if (!metaPair || !meta || meta.kind !== 'map') return;
    const name = str(scannedPair(meta.items, 'name')?.value);
    const namespace = str(scannedPair(meta.items, 'namespace')?.value);
    const labels = scannedPair(meta.items, 'labels')?.value;
    const hasLabels = labels?.kind === 'map' || (labels?.kind === 'flow-map' && labels.size > 0);
    if (!name && !namespace && !hasLabels) return;

    const edits: Edit[] = [];
    const { identity, edit } = commentEdit(text, metaPair.keyEnd, namespace, name);
    if (edit) edits.push(edit);
    const apiVersion = str(scannedPair(root, 'apiVersion')?.value);
    const kind = str(scannedPair(root, 'kind')?.value) ?? '';
    const id = `${groupOf(apiVersion)}|${kind}|${identity.namespace || 'default'}|${identity.name}`;
    const annPair = scannedPair(meta.items, 'annotations');
    const ann = annPair?.value;
    if (ann?.kind === 'map') {
      const existing = scannedPair(ann.items, UPSTREAM_IDENTIFIER_ANNOTATION);
      if (existing) {
        const v = existing.value;
        if (v.kind !== 'scalar') bail();
        // an identifier contains '|', which no non-string plain scalar does
        if ((v.str ?? text.slice(v.start, v.end)) !== id) edits.push({ at: v.start, end: v.end, text: quote(id) });
        out.push(...edits);
        return identity;
      }
      const lastItem = ann.items[ann.items.length - 1]!;
      out.push(
        ...edits,
        insertion(text, this.insertAt(lastItem.value), ' '.repeat(column(text, ann.items[0]!.keyStart)), identifierLine(id)),
      );
      return identity;
    }
    if (annPair) bail(); // empty, null or flow-style annotations: see annotationEdits
    const lastItem = meta.items[meta.items.length - 1]!;
    const at = this.insertAt(lastItem.value);
    out.push(...edits, insertion(text, at, ' '.repeat(column(text, meta.items[0]!.keyStart)), `annotations:\n  ${identifierLine(id)}`));
    return identity;
  }
}

/**
 * The edits of the fast path, or undefined when the text is outside what it models; with each
 * document as the merge will identify it once marked (merge-core's `identifyScanned`), or
 * undefined where an edit strays out of its document.
 */
function fastEdits(text: string): { edits: Edit[]; documents: IdentifiedDocument[] | undefined } | undefined {
  const edits: Edit[] = [];
  let documents: IdentifiedDocument[] | undefined = [];
  let file: ScannedFile | undefined;
  let start = 0;
  try {
    // each document's edits as the scan reads it: its scanned tree is not kept
    const scanned = scanEachDocument(text, (d, lines) => {
      if (d.declined) bail();
      file ??= new ScannedFile(text, lines);
      const end = start + d.text.length;
      const mine: Edit[] = [];
      const identity = d.root ? file.edits(d.root, mine) : undefined;
      edits.push(...mine);
      if (mine.length === 0 || identity === undefined) documents?.push(identifyScanned(d, text));
      else if (documents && mine.every((e) => e.at > start && e.end <= end)) {
        const marked = applyEdits(
          d.text,
          mine.map((e) => ({ at: e.at - start, end: e.end - start, text: e.text })),
        );
        documents.push(identifyScanned(d, text, { text: marked, ...identity }));
      } else documents = undefined;
      start = end;
    });
    return scanned ? { edits, documents } : undefined;
  } catch (e) {
    if (e === UNSUPPORTED) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Full path: yaml's composed Documents.

function str(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  return node.value === null || node.value === undefined ? undefined : String(node.value);
}

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => str(p.key) === key) as Pair | undefined;
}

/** Offset just after the line holding the end of `node` (its trailing comment included). */
function endOfLine(text: string, node: Node): number {
  const end = node.range?.[2] ?? text.length;
  if (end > 0 && text[end - 1] === '\n') return end;
  const nl = text.indexOf('\n', end);
  return nl < 0 ? text.length : nl + 1;
}

function composedEdits(doc: Document, text: string): Edit[] {
  const root = doc.contents;
  if (!isMap(root)) return [];
  const metaPair = pairOf(root, 'metadata');
  const meta = metaPair?.value;
  if (!metaPair || !isMap(meta) || meta.items.length === 0) return [];
  const name = str(pairOf(meta, 'name')?.value);
  const namespace = str(pairOf(meta, 'namespace')?.value);
  const labels = pairOf(meta, 'labels')?.value;
  if (!name && !namespace && !(isMap(labels) && labels.items.length > 0)) return [];
  const group = groupOf(str(pairOf(root, 'apiVersion')?.value));
  const kind = str(pairOf(root, 'kind')?.value) ?? '';
  if (meta.flow) return flowMetadataEdits(text, root, meta, group, kind, { namespace: namespace ?? '', name: name ?? '' });

  const edits: Edit[] = [];
  const key = metaPair.key as Node;
  const lineEnd = endOfKeyLine(text, key.range?.[1] ?? 0);
  const afterKey = text.slice(key.range?.[1] ?? 0, lineEnd);
  const hash = afterKey.indexOf('#');
  let identity = parseMergeComment(hash >= 0 ? afterKey.slice(hash) : undefined);
  if (!identity) {
    identity = { namespace: namespace ?? '', name: name ?? '' };
    const comment = `# ${MERGE_COMMENT_PREFIX} ${identity.namespace}/${identity.name}`;
    if (hash >= 0) {
      const start = (key.range?.[1] ?? 0) + hash;
      edits.push({ at: start, end: lineEnd, text: comment });
    } else {
      const trimmed = afterKey.replace(/[ \t]+$/, '');
      const start = (key.range?.[1] ?? 0) + trimmed.length;
      edits.push({ at: start, end: lineEnd, text: ` ${comment}` });
    }
  }

  const id = identifierOf(group, kind, identity);
  const annPair = pairOf(meta, 'annotations');
  const ann = annPair?.value;
  if (annPair && isMap(ann) && !ann.flow && ann.items.length > 0) {
    const existing = pairOf(ann, UPSTREAM_IDENTIFIER_ANNOTATION);
    if (existing) {
      const v = existing.value as Node | null;
      if (str(v) === id) return edits;
      if (v?.range) {
        edits.push({ at: v.range[0], end: v.range[1], text: quote(id) });
        return edits;
      }
      return [];
    }
    const last = ann.items[ann.items.length - 1] as Pair;
    const anchor = (last.value as Node | null) ?? (last.key as Node);
    const at = endOfLine(text, anchor);
    const indent = ' '.repeat(column(text, (ann.items[0]?.key as Node | undefined)?.range?.[0] ?? 0));
    edits.push({
      at,
      end: at,
      text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${indent}${UPSTREAM_IDENTIFIER_ANNOTATION}: ${quote(id)}\n`,
    });
    return edits;
  }
  if (annPair) {
    const annotation = flowAnnotationEdits(text, annPair, id, 'block');
    return annotation ? [...edits, ...annotation] : [];
  }
  const last = meta.items[meta.items.length - 1] as Pair;
  const anchor = (last.value as Node | null) ?? (last.key as Node);
  const at = endOfLine(text, anchor);
  const indent = ' '.repeat(column(text, (meta.items[0]?.key as Node | undefined)?.range?.[0] ?? 0));
  edits.push({
    at,
    end: at,
    text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${indent}annotations:\n${indent}  ${UPSTREAM_IDENTIFIER_ANNOTATION}: ${quote(id)}\n`,
  });
  return edits;
}

function identifierOf(group: string, kind: string, identity: MergeIdentity): string {
  return `${group}|${kind}|${identity.namespace || 'default'}|${identity.name}`;
}

/** The identity an upstream-identifier annotation names, when it is one of this group and kind. */
function identityOfIdentifier(annotations: unknown, group: string, kind: string): MergeIdentity | undefined {
  if (!isMap(annotations)) return undefined;
  const parts = str(pairOf(annotations, UPSTREAM_IDENTIFIER_ANNOTATION)?.value)?.split('|');
  if (parts?.length !== 4 || parts[0] !== group || parts[1] !== kind) return undefined;
  return { namespace: parts[2] === 'default' ? '' : parts[2]!, name: parts[3]! };
}

/** Where text goes after the last entry of a flow map; undefined when that entry has no end to follow. */
function afterLastFlowItem(map: YAMLMap): number | undefined {
  const last = map.items[map.items.length - 1] as Pair | undefined;
  const value = last?.value as Node | null | undefined;
  if (value?.range && value.range[1] > value.range[0]) return value.range[1];
  // `{a}` ends at its key; `{a: }` has nowhere to put a following entry without rewriting it
  if (value === null && (last?.key as Node | undefined)?.range) return (last!.key as Node).range![1];
  return undefined;
}

/**
 * kpt's edits for metadata written in flow style (`metadata: {name: c, annotations: {}}`, as
 * kubebuilder writes it): the identifier goes into the flow map, and the merge comment after its
 * closing brace, on the `metadata:` line where the identity is read. kpt's yaml.v3 prints that
 * comment on the line of the key after `metadata` instead and never reads it back; the identifier
 * it wrote is then the only record of the identity, so it is trusted when no comment names one.
 */
function flowMetadataEdits(text: string, root: YAMLMap, meta: YAMLMap, group: string, kind: string, current: MergeIdentity): Edit[] {
  const end = meta.range?.[1];
  if (end === undefined) return [];
  const nl = text.indexOf('\n', end);
  const lineEnd = nl < 0 ? text.length : nl;
  const afterValue = text.slice(end, lineEnd);
  const hash = afterValue.indexOf('#');
  const annPair = pairOf(meta, 'annotations');
  const commented = parseMergeComment(hash >= 0 ? afterValue.slice(hash) : undefined);
  const identity = commented ?? identityOfIdentifier(annPair?.value, group, kind) ?? current;
  const edits: Edit[] = [];
  // In a flow-style document the rest of the line is more of the document, not a place for a comment.
  if (!commented && !root.flow) {
    const comment = `# ${MERGE_COMMENT_PREFIX} ${identity.namespace}/${identity.name}`;
    if (hash >= 0) edits.push({ at: end + hash, end: lineEnd, text: comment });
    else edits.push({ at: end + afterValue.replace(/[ \t]+$/, '').length, end: lineEnd, text: ` ${comment}` });
  }
  const id = identifierOf(group, kind, identity);
  if (!annPair) {
    const at = afterLastFlowItem(meta);
    return at === undefined ? [] : [...edits, { at, end: at, text: `, annotations: {${identifierLine(id)}}` }];
  }
  const annotation = flowAnnotationEdits(text, annPair, id, 'flow');
  return annotation ? [...edits, ...annotation] : [];
}

/**
 * The identifier added to annotations that are not a block map: into a flow map with entries
 * after its last one (kpt: `{a: b, internal.kpt.dev/upstream-identifier: '...'}`); in place of
 * empty or null annotations, as a block map in block-style metadata (as kpt writes it) and as a
 * flow map in flow-style metadata. Undefined when the annotations are no map at all.
 */
function flowAnnotationEdits(text: string, annPair: Pair, id: string, style: 'block' | 'flow'): Edit[] | undefined {
  const ann = annPair.value as Node | null;
  if (isMap(ann) && ann.items.length > 0) {
    const existing = pairOf(ann, UPSTREAM_IDENTIFIER_ANNOTATION);
    if (existing) {
      const v = existing.value as Node | null;
      if (str(v) === id) return [];
      return v?.range && v.range[1] > v.range[0] ? [{ at: v.range[0], end: v.range[1], text: quote(id) }] : undefined;
    }
    const at = afterLastFlowItem(ann);
    return at === undefined ? undefined : [{ at, end: at, text: `, ${identifierLine(id)}` }];
  }
  const isNull = ann === null || (isScalar(ann) && (ann.value === null || ann.value === undefined));
  if (!isNull && !isMap(ann)) return undefined;
  const key = annPair.key as Node;
  const colon = text.indexOf(':', key.range?.[1] ?? 0);
  if (colon < 0) return undefined;
  const valueEnd = Math.max(colon + 1, ann?.range?.[1] ?? 0);
  if (style === 'flow') return [{ at: colon + 1, end: valueEnd, text: ` {${identifierLine(id)}}` }];
  const indent = ' '.repeat(column(text, key.range?.[0] ?? 0) + 2);
  return [{ at: colon + 1, end: valueEnd, text: `\n${indent}${identifierLine(id)}` }];
}

/**
 * The text with the edits made, in one pass: the pieces between edits are joined once, so a
 * stream of thousands of resources costs one copy of its text, not one per resource (quadratic
 * time, and garbage in proportion). Edits at the same offset land as if made last-first, as
 * they always have; overlapping edits (none of the scanners make them) take the old path.
 */
function applyEdits(text: string, edits: Edit[]): string {
  const order = edits.map((e, i) => ({ e, i })).sort((a, b) => a.e.at - b.e.at || b.i - a.i);
  const pieces: string[] = [];
  let from = 0;
  for (const { e } of order) {
    if (e.at < from) return applyEditsOneByOne(text, edits);
    pieces.push(text.slice(from, e.at), e.text);
    from = e.end;
  }
  pieces.push(text.slice(from));
  return pieces.join('');
}

function applyEditsOneByOne(text: string, edits: Edit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.end);
  return out;
}

/**
 * The marks found through `yaml`'s composed Documents: the path for whatever the scanner does
 * not model, and the reference the scanner is tested against. Not exported from the package.
 */
export function addMergeCommentsComposed(text: string): string {
  const docs = parseYamlStream(text);
  if (docs.some((d) => d.errors.length > 0)) return text;
  return applyEdits(
    text,
    docs.flatMap((d) => composedEdits(d as Document, text)),
  );
}

/** Which path produced the result; for tests and benchmarks, not exported from the package. */
export function addMergeCommentsTraced(text: string): { text: string; path: 'scan' | 'compose' } {
  const { text: marked, path } = markedText(text);
  return { text: marked, path };
}

/**
 * The marked text, and, when the scanner read it, its documents as the merge identifies them
 * (merge-core's `identifyScanned`): a caller that merges the marked text hands them to the merge
 * (`mergeFiles`' `identified`), which then does not scan the text again.
 */
function markedText(text: string): { text: string; path: 'scan' | 'compose'; documents?: readonly IdentifiedDocument[] } {
  // a CRLF file is edited with LF line ends and turned back, so the edits never land between a
  // `\r` and its `\n` and the lines they add end as the file's do
  if (isCrlf(text)) {
    const lf = markedText(text.replace(/\r\n/g, '\n'));
    return { text: lf.text.replace(/\n/g, '\r\n'), path: lf.path };
  }
  const fast = fastEdits(text);
  if (!fast) return { text: addMergeCommentsComposed(text), path: 'compose' };
  const marked = applyEdits(text, fast.edits);
  // the documents, marked one by one, must make the marked text: else the merge scans it
  const documents = fast.documents && fast.documents.map((d) => d.text).join('') === marked ? fast.documents : undefined;
  return documents ? { text: marked, path: 'scan', documents } : { text: marked, path: 'scan' };
}

/**
 * Adds the merge comment and the upstream-identifier annotation to every KRM object in a YAML
 * file's text. Objects without metadata (or without name, namespace and labels), non-KRM
 * documents and files that do not parse are returned unchanged, as kpt does.
 */
export function addMergeComments(text: string): string {
  return markedText(text).text;
}

/**
 * {@link addMergeComments}, with the marked text's documents as merge-core's merge identifies
 * them when the line scanner read the text (undefined otherwise), for `mergeFiles`' `identified`.
 */
export function addMergeCommentsIdentified(text: string): { text: string; documents: readonly IdentifiedDocument[] | undefined } {
  const { text: marked, documents } = markedText(text);
  return { text: marked, documents };
}
