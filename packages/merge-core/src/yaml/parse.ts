/**
 * Reading YAML as Kubernetes reads it: YAML 1.1 scalars (`0644` is octal, `yes` is a boolean),
 * every document of a stream, and enough of the source kept to print untouched documents
 * byte for byte.
 */
import {
  type Document,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Pair,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { keyName } from './nodes.js';
import { MergeInputError, type Side } from '../errors.js';

/**
 * `uniqueKeys: false`: yaml's own duplicate-key check compares each key with every earlier key of
 * its map, quadratic in a ConfigMap of tens of thousands of keys; `parseStream` checks in one pass.
 */
export const yamlParseOptions = { version: '1.1', keepSourceTokens: false, prettyErrors: false, uniqueKeys: false } as const;

export interface SourceDocument {
  readonly file: string;
  /** Index of the document in its file's stream, counting empty documents too. */
  readonly index: number;
  readonly doc: Document.Parsed;
  /** The exact text of this document's chunk of the file: its `---`, comments and body. */
  readonly text: string;
  /** True when the document holds nothing (a stray `---`, only comments). */
  readonly empty: boolean;
}

export interface SourceFileDocuments {
  readonly file: string;
  readonly text: string;
  readonly documents: readonly SourceDocument[];
}

/** Parses a YAML stream; throws MergeInputError naming the file, the document and the reason. */
export function parseStream(text: string, file: string, side?: Side): SourceFileDocuments {
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, yamlParseOptions) as Document.Parsed[];
  } catch (error) {
    throw new MergeInputError('invalid-yaml', file, undefined, error instanceof Error ? error.message : String(error), side);
  }
  if (!Array.isArray(docs)) docs = [];
  const documents: SourceDocument[] = [];
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    const firstError = doc.errors[0];
    if (firstError) {
      const where = ` (line ${lineOf(text, firstError.pos[0])})`;
      throw new MergeInputError('invalid-yaml', file, i, `invalid YAML${where}: ${firstLine(firstError.message)}`, side);
    }
    const start = i === 0 ? 0 : doc.range[0];
    const end = i + 1 < docs.length ? docs[i + 1]!.range[0] : text.length;
    const duplicate = normalizeKeyComments(doc, text);
    if (duplicate) {
      const [name, first, again] = duplicate;
      const reason = `invalid YAML (line ${lineOf(text, again)}): map key "${name}" appears twice (first on line ${lineOf(text, first)})`;
      throw new MergeInputError('invalid-yaml', file, i, reason, side);
    }
    if (i === docs.length - 1) readEndAsKubernetes(doc, text);
    trailingCommentToContents(doc);
    const contents = doc.contents;
    documents.push({
      file,
      index: i,
      doc,
      text: text.slice(start, end),
      empty: contents === null || (!isCollection(contents) && (contents as { value?: unknown }).value == null),
    });
  }
  return { file, text, documents };
}

/**
 * The block scalar (`|`, `>`) whose last line ends `text` with no line break after it, if any.
 * There yaml reads a final line break into the value (clip and keep chomping) where Kubernetes'
 * reader (go-yaml) reads none, and a line break written after it would become part of the value.
 * `doc` is parsed from `text` (its ranges are offsets in it).
 */
export function blockScalarAtEnd(doc: Document, text: string): Scalar | undefined {
  if (text.endsWith('\n') || text.endsWith('\r')) return undefined;
  if (text.slice(text.lastIndexOf('\n') + 1).trim() === '') return undefined;
  const node = lastValueOf(doc.contents);
  if (!isBlockScalar(node)) return undefined;
  return (node.range?.[1] ?? -1) >= text.length ? node : undefined;
}

/** The value written last in a node: its last field's or item's, down to a scalar. */
export function lastValueOf(node: unknown): unknown {
  let value = node;
  while (isMap(value) || isSeq(value)) {
    const last: unknown = value.items[value.items.length - 1];
    value = isMap(value) ? (last as Pair | undefined)?.value : last;
  }
  return value;
}

export function isBlockScalar(node: unknown): node is Scalar {
  return isScalar(node) && (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED');
}

/** A file's last value read as Kubernetes reads it, where yaml differs (`blockScalarAtEnd`). */
function readEndAsKubernetes(doc: Document, text: string): void {
  const scalar = blockScalarAtEnd(doc, text);
  if (scalar && typeof scalar.value === 'string' && scalar.value.endsWith('\n')) scalar.value = scalar.value.slice(0, -1);
}

/**
 * A comment after a document's last line belongs to its top-level map or list, so that it merges
 * three ways with that value's own comments (kpt takes upstream's change to it) and prints right
 * after it, where the document's own trailing comment would print after a blank line.
 */
function trailingCommentToContents(doc: Document): void {
  const contents = doc.contents;
  if (!doc.comment || !(isMap(contents) || isSeq(contents)) || contents.comment) return;
  contents.comment = doc.comment;
  doc.comment = null;
}

/** 1-based line of an offset in the file. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function firstLine(message: string): string {
  const nl = message.indexOf('\n');
  return nl === -1 ? message : message.slice(0, nl);
}

/** A key written twice in one map: its name and the offsets of the first and the second. */
type DuplicateKey = [name: string, first: number, again: number];

/**
 * Two jobs in one walk over the collections. `list: # comment` followed by a block collection:
 * the parser files the comment as the collection's `commentBefore`, which would print on a line
 * of its own; Kubernetes tools (and kyaml) treat it as the key's line comment, so it moves there.
 * And the first key written twice in a map is returned: yaml's check (equal scalar values, so
 * `yes` and `true` are one key in YAML 1.1) made linear by a Map per map.
 */
function normalizeKeyComments(doc: Document, text: string): DuplicateKey | undefined {
  let duplicate: DuplicateKey | undefined;
  // A plain recursive walk: yaml's `visit` would also call back for every scalar, and this runs
  // on every document the merge reads.
  const walk = (node: unknown): void => {
    if (isMap(node)) {
      const seen = new Map<unknown, Scalar>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          const earlier = seen.get(key.value);
          if (earlier && !duplicate) duplicate = [keyName(key), earlier.range?.[0] ?? 0, key.range?.[0] ?? 0];
          else seen.set(key.value, key);
        }
        const value = pair.value;
        if (!(isMap(value) || isSeq(value))) continue;
        if (value.commentBefore && !value.flow) moveToKeyLine(pair, value, text);
        walk(value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) walk(item);
    }
  };
  walk(doc.contents);
  return duplicate;
}

function moveToKeyLine(pair: Pair<unknown, unknown>, value: YAMLMap | YAMLSeq, text: string): void {
  const key = pair.key as { range?: [number, number, number] } | null;
  const keyEnd = key?.range?.[1];
  if (keyEnd === undefined) return;
  const nl = text.indexOf('\n', keyEnd);
  const rest = text.slice(keyEnd, nl === -1 ? text.length : nl);
  if (!/^\s*:\s*#/.test(rest)) return;
  const [first, ...others] = value.commentBefore!.split('\n');
  (pair.key as { comment?: string }).comment = first;
  value.commentBefore = others.length > 0 ? others.join('\n') : undefined;
}
