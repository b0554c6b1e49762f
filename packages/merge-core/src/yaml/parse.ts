/**
 * Reading YAML as Kubernetes reads it: YAML 1.1 scalars (`0644` is octal, `yes` is a boolean),
 * every document of a stream, and enough of the source kept to print untouched documents
 * byte for byte. Every YAML read of kdelta, in every package, goes through `parseYamlStream` or
 * `parseYamlDocument` here (a test greps for any other), so every read is linear in its input.
 */
import {
  type Document,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  Document as YamlDocument,
  parseAllDocuments,
  parseDocument,
  type Pair,
  type Scalar,
  type ScalarTag,
  type Schema,
  type Tags,
  type ToStringOptions,
  type YAMLMap,
  YAMLParseError,
  type YAMLSeq,
} from 'yaml';
import { keyName } from './nodes.js';
import { MergeInputError, type Side } from '../errors.js';

/**
 * Tags of yaml's YAML 1.1 schema that Kubernetes does not read: `!!omap` and `!!set` would also
 * tag the maps `yaml` creates for a missing path (`doc.setIn(['status', 'conditions'], …)` wrote
 * `status: !!omap`), and timestamps stay strings, as Kubernetes reads them into an object.
 */
const NOT_KUBERNETES_TAGS = new Set(['tag:yaml.org,2002:omap', 'tag:yaml.org,2002:set', 'tag:yaml.org,2002:timestamp']);

/**
 * yaml's YAML 1.1 floats take `.` and `e5` for numbers (NaN: its mantissa digits are all
 * optional); Kubernetes reads them as strings. A float must have a digit before its exponent.
 */
function withDigitInFloats(tag: Tags[number]): Tags[number] {
  if (typeof tag === 'string' || tag.tag !== 'tag:yaml.org,2002:float' || !(tag.test instanceof RegExp)) return tag;
  if (/nan/i.test(tag.test.source)) return tag;
  return { ...tag, test: new RegExp(`^(?=[-+]?\\.?[0-9])${tag.test.source.slice(1)}`) } as Tags[number];
}

const NUMBER_TAGS = new Set(['tag:yaml.org,2002:int', 'tag:yaml.org,2002:float']);

type NumberTag = Extract<Tags[number], { resolve: unknown }> & { test: RegExp };
const isNumberTag = (tag: Tags[number]): tag is NumberTag =>
  typeof tag !== 'string' && NUMBER_TAGS.has(tag.tag) && 'resolve' in tag && tag.test instanceof RegExp;

/**
 * Numbers print as they were written (`1_000`, `+1`, `.5`, `0x1F`) while that text still reads as
 * their value. yaml prints numbers from their value: upstream's `1_000` became `1000` (to a YAML
 * 1.2 reader such as kpt's, the string "1_000" became a number) and `0_` became `.nan`.
 */
function keepingNumberSources(tags: Tags): Tags {
  const readers = tags.filter(isNumberTag);
  const written = (item: Scalar): string | undefined => {
    const source = (item as Scalar & { source?: unknown }).source;
    if (typeof source !== 'string') return undefined;
    // the tag that read the text: the first whose test it passes, as the parser chose
    const reader = readers.find((t) => t.test.test(source));
    if (reader === undefined) return undefined;
    // yaml's float tags resolve to a Scalar (keeping `1.50`'s trailing zero), the others to a value
    const read: unknown = reader.resolve(source, () => {}, {} as never);
    return Object.is(isScalar(read) ? read.value : read, item.value) ? source : undefined;
  };
  return tags.map((tag) => {
    if (!isNumberTag(tag) || tag.stringify === undefined) return tag;
    const { stringify } = tag;
    return {
      ...tag,
      stringify: (item, ctx, onComment, onChompKeep) => written(item as Scalar) ?? stringify(item, ctx, onComment, onChompKeep),
    };
  });
}

let kubernetesSchema: Tags | undefined;

/**
 * yaml's YAML 1.1 tags as Kubernetes reads them, worked out once: yaml asks at every parse, with
 * a copy of the same YAML 1.1 tags each time (the options always name YAML 1.1).
 */
function kubernetesTags(tags: Tags): Tags {
  kubernetesSchema ??= keepingNumberSources(
    tags.filter((t) => typeof t === 'string' || !NOT_KUBERNETES_TAGS.has(t.tag)).map(withDigitInFloats),
  );
  return kubernetesSchema;
}

const STRING_TAG = 'tag:yaml.org,2002:str';

/**
 * A string as one piece of memory. yaml builds a double-quoted value one character at a time, and
 * V8 keeps such a string as a chain of its pieces (a 200-character value is about 190 of them,
 * 6 KB): a parsed 8 MB ConfigMap held 240 MB of chains, which every collection of the young
 * generation copied while the document lived and every comparison of two values copied again.
 * Reading a character joins the chain into one string in place, while it is still young garbage.
 */
function flat(value: string): string {
  value.charCodeAt(0);
  return value;
}

/**
 * The schema every parse reads with: yaml's YAML 1.1 schema with the Kubernetes tags, and its
 * strings made {@link flat} as they are read. yaml reads an untagged quoted or block scalar with
 * the schema's own string tag, which no option replaces: the schema is yaml's, copied with that
 * tag swapped (as `Schema.clone` copies one). Without the tag found, yaml's schema is used as it is.
 */
function flatStringSchema(): Schema {
  const schema = new YamlDocument(null, { version: '1.1', customTags: kubernetesTags }).schema;
  const descriptors = Object.getOwnPropertyDescriptors(schema) as PropertyDescriptorMap;
  const slot = Object.getOwnPropertySymbols(schema).find(
    (s) => (descriptors[s]?.value as Partial<ScalarTag> | undefined)?.tag === STRING_TAG,
  );
  if (slot === undefined) return schema;
  descriptors[slot] = { value: { ...(descriptors[slot]!.value as ScalarTag), resolve: flat } };
  return Object.create(Object.getPrototypeOf(schema) as object, descriptors) as Schema;
}

/**
 * `uniqueKeys: false`: yaml's own duplicate-key check compares each key with every earlier key of
 * its map, quadratic in a ConfigMap of tens of thousands of keys; `checkDuplicateKeys` checks in
 * one pass instead. `schema`: YAML 1.1 with the Kubernetes tags (`customTags`), strings flat.
 */
export const yamlParseOptions = {
  version: '1.1',
  keepSourceTokens: false,
  prettyErrors: false,
  uniqueKeys: false,
  customTags: kubernetesTags,
  schema: flatStringSchema(),
} as const;

/**
 * Options of a new Document, so that it prints what `parseYamlStream` reads back as the same
 * value: YAML 1.1 quoting (`'yes'`, `'0644'`, `'y'` stay strings).
 */
export const yamlDocumentOptions = { version: yamlParseOptions.version, customTags: yamlParseOptions.customTags } as const;

/** `value` as YAML that kdelta, and Kubernetes, read back as the same value (YAML 1.1 quoting). */
export function stringifyYaml(value: unknown, options?: ToStringOptions): string {
  return new YamlDocument(value, yamlDocumentOptions).toString(options);
}

/**
 * Parses a YAML stream as Kubernetes reads it (YAML 1.1 scalars), in time linear in its length.
 * Errors are data, as with `yaml`: each document's `errors` holds yaml's own and the first map key
 * written twice (code `DUPLICATE_KEY`, message `map key "a" appears twice (first on line 3)`).
 */
export function parseYamlStream(text: string): Document.Parsed[] {
  const docs = parseAllDocuments(text, yamlParseOptions) as Document.Parsed[] | { empty: true };
  if (!Array.isArray(docs)) return [];
  for (const doc of docs) checkDuplicateKeys(doc, text);
  return docs;
}

/**
 * Parses text that should hold one YAML document (more than one is an error of the document, as
 * with `yaml`'s `parseDocument`), as `parseYamlStream` does.
 */
export function parseYamlDocument(text: string): Document.Parsed {
  const doc = parseDocument(text, yamlParseOptions);
  checkDuplicateKeys(doc, text);
  return doc;
}

/** `invalid YAML (line 3): <yaml's reason>` for a document's first error, or undefined. */
export function yamlErrorReason(doc: Document, text: string): string | undefined {
  const e = doc.errors[0];
  return e === undefined ? undefined : `invalid YAML (line ${lineOf(text, e.pos[0])}): ${firstLine(e.message)}`;
}

/**
 * The plain value of a parsed document. Aliases are expanded here, so an alias bomb (a few lines
 * whose aliases expand to billions of nodes) is refused here, naming the file and the document.
 */
export function yamlDocumentValue(doc: Document, file: string, index?: number): unknown {
  try {
    return doc.toJS();
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      throw new MergeInputError('invalid-yaml', file, index, `refused: its aliases expand too far (${error.message})`);
    }
    throw error;
  }
}

function checkDuplicateKeys(doc: Document.Parsed, text: string): void {
  if (doc.errors.length > 0) return;
  const duplicate = firstDuplicateKey(doc);
  if (!duplicate) return;
  const [name, first, again] = duplicate;
  const reason = `map key "${name}" appears twice (first on line ${lineOf(text, first)})`;
  doc.errors.push(new YAMLParseError([again, again + 1], 'DUPLICATE_KEY', reason));
}

export interface SourceDocument {
  readonly file: string;
  /** Index of the document in its file's stream, counting empty documents too. */
  readonly index: number;
  readonly doc: Document.Parsed;
  /** The exact text of this document's chunk of the file: its `---`, comments and body. */
  readonly text: string;
  /** Where `text` starts in the text the document was parsed from, which its nodes' ranges count in. */
  readonly start?: number | undefined;
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
    docs = parseYamlStream(text);
  } catch (error) {
    throw new MergeInputError('invalid-yaml', file, undefined, error instanceof Error ? error.message : String(error), side);
  }
  const documents: SourceDocument[] = [];
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    const reason = yamlErrorReason(doc, text);
    if (reason !== undefined) throw new MergeInputError('invalid-yaml', file, i, reason, side);
    const start = i === 0 ? 0 : doc.range[0];
    const end = i + 1 < docs.length ? docs[i + 1]!.range[0] : text.length;
    normalizeKeyComments(doc, text);
    if (i === docs.length - 1) readEndAsKubernetes(doc, text);
    trailingCommentToContents(doc);
    const contents = doc.contents;
    documents.push({
      file,
      index: i,
      doc,
      text: text.slice(start, end),
      start,
      empty: contents === null || (!isCollection(contents) && (contents as { value?: unknown }).value == null),
    });
  }
  return { file, text, documents };
}

/**
 * Texts parsed once for several readers of one update: the merge parses the resources upstream
 * changed, and the list of what upstream changed reads the same texts. A document is never
 * changed by its readers (the merge builds new nodes). Held only as long as its owner holds it: a
 * merge alone lets each parse go once it is done with it.
 */
export interface ParsedTexts {
  /** `parseStream`, once per text: a text seen before gives the same documents. */
  stream(text: string, file: string, side?: Side): SourceFileDocuments;
}

/** An empty {@link ParsedTexts}. A text that does not parse is not remembered (its error is thrown each time). */
export function createParsedTexts(): ParsedTexts {
  const byText = new Map<string, SourceFileDocuments>();
  return {
    stream(text, file, side) {
      const hit = byText.get(text);
      if (hit) return hit.file === file ? hit : { ...hit, file, documents: hit.documents.map((d) => ({ ...d, file })) };
      const parsed = parseStream(text, file, side);
      byText.set(text, parsed);
      return parsed;
    },
  };
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
 * The first key written twice in a map: yaml's check (equal scalar values, so `yes` and `true`
 * are one key in YAML 1.1) made linear by a Map per map. A plain recursive walk: yaml's `visit`
 * would also call back for every scalar.
 */
function firstDuplicateKey(doc: Document): DuplicateKey | undefined {
  let duplicate: DuplicateKey | undefined;
  const walk = (node: unknown): void => {
    if (duplicate) return;
    if (isMap(node)) {
      const seen = new Map<unknown, Scalar>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          const earlier = seen.get(key.value);
          if (earlier) {
            duplicate = [keyName(key), earlier.range?.[0] ?? 0, key.range?.[0] ?? 0];
            return;
          }
          seen.set(key.value, key);
        }
        const value = pair.value;
        if (isMap(value) || isSeq(value)) walk(value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) walk(item);
    }
  };
  walk(doc.contents);
  return duplicate;
}

/**
 * `list: # comment` followed by a block collection: the parser files the comment as the
 * collection's `commentBefore`, which would print on a line of its own; Kubernetes tools (and
 * kyaml) treat it as the key's line comment, so it moves there.
 */
function normalizeKeyComments(doc: Document, text: string): void {
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
