/**
 * Reading YAML as Kubernetes reads it: YAML 1.1 scalars (`0644` is octal, `yes` is a boolean),
 * every document of a stream, and enough of the source kept to print untouched documents
 * byte for byte.
 */
import { type Document, isCollection, isMap, isSeq, parseAllDocuments, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { MergeInputError, type Side } from '../errors.js';

export const yamlParseOptions = { version: '1.1', keepSourceTokens: false, prettyErrors: false } as const;

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
    normalizeKeyComments(doc, text);
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

/**
 * `list: # comment` followed by a block collection: the parser files the comment as the
 * collection's `commentBefore`, which would print on a line of its own. Kubernetes tools (and
 * kyaml) treat it as the key's line comment; move it there so it stays on the key's line.
 */
function normalizeKeyComments(doc: Document, text: string): void {
  // A plain recursive walk over the collections: yaml's `visit` would also call back for every
  // scalar, and this runs on every document the merge reads.
  const walk = (node: unknown): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
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
