import { Document, isMap, isScalar, Pair, Scalar, type ToStringOptions, type YAMLMap } from 'yaml';
import { commentsOf, type YamlNode } from '../yaml/nodes.js';
import { isBlockScalar, lastValueOf, yamlDocumentOptions, type SourceDocument } from '../yaml/parse.js';

/**
 * A merged document written as local's text with only the scalars the merge changed replaced:
 * the usual update of a big map (a ConfigMap whose upstream changed some values) needs neither
 * printing the whole document twice nor comparing the two prints line by line. Undefined when
 * the merge changed more than scalar values in place (a key added, removed, moved or re-commented,
 * a list, a flow or block collection, a multi-line value): the caller prints the document.
 */
export function spliceChangedScalars(source: SourceDocument, merged: YamlNode | undefined, options: ToStringOptions): string | undefined {
  const local = source.doc.contents as YamlNode | null;
  if (source.start === undefined || merged === undefined || local === null || !isMap(local) || !isMap(merged)) return undefined;
  // the file's end is layout the printer decides on (see printMergedDocument): not spliced
  if (isBlockScalar(lastValueOf(local)) || isBlockScalar(lastValueOf(merged))) return undefined;
  const edits: Edit[] = [];
  if (!changedScalars(local, merged, edits)) return undefined;
  const printer = new ScalarPrinter(options);
  const parts: string[] = [];
  let at = 0;
  for (const e of edits) {
    const from = e.from - source.start;
    const to = e.to - source.start;
    const text = printer.print(e.node);
    if (text === undefined || from < at || to > source.text.length) return undefined;
    parts.push(source.text.slice(at, from), text);
    at = to;
  }
  parts.push(source.text.slice(at));
  return parts.join('');
}

/** A scalar of local's text (its range) that the merge replaced with `node`. */
interface Edit {
  readonly from: number;
  readonly to: number;
  readonly node: Scalar;
}

/** Flow scalars on one line: what a splice replaces. */
const ONE_LINE_TYPES = new Set(['PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE']);

/**
 * Collects, in text order, local's scalars that `merged` replaced; false when the two differ in
 * anything else.
 */
function changedScalars(local: YAMLMap, merged: YAMLMap, edits: Edit[]): boolean {
  if (local === merged) return true;
  if (local.flow || merged.flow || local.items.length !== merged.items.length) return false;
  if (commentsOf(local) !== commentsOf(merged) || local.tag !== merged.tag) return false;
  for (let i = 0; i < local.items.length; i++) {
    const l = local.items[i] as Pair<unknown, unknown>;
    const m = merged.items[i] as Pair<unknown, unknown>;
    if (l === m) continue;
    // the same key node: its text, and its comments, are local's
    if (l.key !== m.key) return false;
    const lv = l.value;
    const mv = m.value;
    if (lv === mv) continue;
    if (isMap(lv) && isMap(mv)) {
      if (!changedScalars(lv, mv, edits)) return false;
      continue;
    }
    if (!isScalar(lv) || !isScalar(mv) || !replaceable(lv, mv)) return false;
    edits.push({ from: lv.range![0], to: lv.range![1], node: mv });
  }
  return true;
}

/** A scalar written on one line, whose replacement changes nothing but its value there. */
function replaceable(local: Scalar, merged: Scalar): boolean {
  const plain = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  return (
    local.range !== undefined &&
    local.range !== null &&
    // an empty value (`key:`) has no text to replace: a value written there needs its space
    local.range[1] > local.range[0] &&
    ONE_LINE_TYPES.has(local.type ?? '') &&
    ONE_LINE_TYPES.has(merged.type ?? local.type ?? '') &&
    // a tag or an anchor is written before the value's text: the printer decides where
    !local.anchor &&
    !merged.anchor &&
    !local.tag &&
    !merged.tag &&
    Boolean(local.spaceBefore) === Boolean(merged.spaceBefore) &&
    commentsOf(local) === commentsOf(merged) &&
    plain(local.value) &&
    plain(merged.value)
  );
}

/** Printable ASCII without `"` or `\\`: nothing a double-quoted string escapes. */
const PRINTABLE_AS_IS = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Prints a scalar as the printer writes it as a map's value: one line, or undefined. */
export class ScalarPrinter {
  private readonly doc = new Document(null, yamlDocumentOptions);
  private readonly pair = new Pair(new Scalar('k'), null as unknown);
  constructor(private readonly options: ToStringOptions) {
    this.doc.contents = this.doc.createNode({}) as typeof this.doc.contents;
    (this.doc.contents as unknown as YAMLMap).items = [this.pair];
  }

  print(value: Scalar): string | undefined {
    // The common case, a double-quoted string of printable ASCII with nothing to escape: the
    // printer writes it between its quotes, as is (a test holds the two alike).
    if (value.type === 'QUOTE_DOUBLE' && typeof value.value === 'string' && PRINTABLE_AS_IS.test(value.value)) return `"${value.value}"`;
    return this.printed(value);
  }

  /** What the printer writes. */
  printed(value: Scalar): string | undefined {
    // without its comments: local's stay in the text, and they are the same (see `replaceable`)
    const bare = value.clone() as Scalar;
    bare.comment = null;
    bare.commentBefore = null;
    bare.spaceBefore = false;
    this.pair.value = bare;
    const text = this.doc.toString(this.options);
    if (!text.startsWith('k: ') || !text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) return undefined;
    return text.slice(3, -1);
  }
}
