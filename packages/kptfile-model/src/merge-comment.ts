/**
 * kpt's merge comments: `metadata: # kpt-merge: <namespace>/<name>` records a resource's
 * upstream identity so a local rename still matches it, and the annotation
 * `internal.kpt.dev/upstream-identifier: '<group>|<kind>|<namespace or default>|<name>'`
 * carries the same identity. Edits are made in the text, so everything else in the file stays
 * byte for byte.
 *
 * Two paths give the same edits. The fast one scans the lines of files written in the plain
 * block style of KRM files (no tabs, anchors, tags, multi-line flow or plain scalars...) and
 * checks on the way that `yaml` would compose them without error. Anything it does not model
 * exactly makes it give up, and the file goes through `yaml`'s composed Documents instead.
 */
import { isMap, isScalar, parseAllDocuments, type Document, type Node, type Pair, type YAMLMap } from 'yaml';

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

/** The text of the `metadata:` key line after the key: where the merge comment goes. */
function commentEdit(
  text: string,
  keyEnd: number,
  namespace: string | undefined,
  name: string | undefined,
): { identity: MergeIdentity; edit?: Edit } {
  const keyLineEnd = text.indexOf('\n', keyEnd);
  const lineEnd = keyLineEnd < 0 ? text.length : keyLineEnd;
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
// Fast path: a line scanner for the block-style subset of YAML that KRM files are written in.

/** Thrown when the scanner meets something it does not model exactly. */
class Unsupported {}
const UNSUPPORTED = new Unsupported();
function bail(): never {
  throw UNSUPPORTED;
}

/** A plain scalar the core schema would not read as a string (null, bool, number, ...). */
const SPECIAL_PLAIN = /^(?:[-+.0-9~]|(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)$)/;
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_./-]*/;
const DQ_KEY = /^"([^"\\]*)"/;
const SQ_KEY = /^'((?:[^']|'')*)'/;
const BLOCK_HEADER = /^[|>][-+]?(?: +#.*)?$/;
const FLOW_ITEM = `(?:"[^"\\\\]*"|'(?:[^']|'')*'|[A-Za-z0-9_./][A-Za-z0-9_./=+-]*)`;
const FLOW_SEQ = new RegExp(`^\\[ *(?:${FLOW_ITEM} *(?:, *${FLOW_ITEM} *)*)?\\]`);
const FLOW_MAP = new RegExp(`^\\{ *(?:([A-Za-z_][A-Za-z0-9_./-]*): +${FLOW_ITEM} *(?:, *[A-Za-z_][A-Za-z0-9_./-]*: +${FLOW_ITEM} *)*)?\\}`);
const FLOW_MAP_KEYS = /[{,] *([A-Za-z_][A-Za-z0-9_./-]*):/g;
const BOOL_OR_NULL = /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)$/;
const AFTER_VALUE = /^(?: *| +#.*)$/;

interface FastPair {
  key: string;
  keyStart: number;
  keyEnd: number;
  value: FastValue;
}

/** `str` is the composed scalar's `String(value)`; `null` when the scan cannot tell. */
type FastValue =
  | { kind: 'empty' }
  | { kind: 'scalar'; str: string | null; start: number; end: number; line: number }
  | { kind: 'flow-map'; size: number; line: number }
  | { kind: 'flow-seq'; line: number }
  | { kind: 'map'; items: FastPair[]; last: number }
  | { kind: 'seq'; last: number }
  | { kind: 'block-scalar'; last: number };

class Scanner {
  readonly starts: number[] = [];
  pos = 0;
  end = 0;

  constructor(readonly text: string) {
    let i = 0;
    for (;;) {
      this.starts.push(i);
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl + 1;
    }
  }

  get lineCount(): number {
    return this.starts.length;
  }

  lineText(i: number): string {
    const s = this.starts[i]!;
    const next = this.starts[i + 1];
    return this.text.slice(s, next === undefined ? this.text.length : next - 1);
  }

  indentOf(line: string): number {
    let n = 0;
    while (line.charCodeAt(n) === 32) n++;
    return n;
  }

  /** Blank or comment-only line. */
  isSkippable(line: string): boolean {
    const n = this.indentOf(line);
    return n === line.length || line.charCodeAt(n) === 35; // '#'
  }

  nextContent(from: number): number {
    let i = from;
    while (i < this.end && this.isSkippable(this.lineText(i))) i++;
    return i;
  }

  static isSeqAt(line: string, col: number): boolean {
    return line.charCodeAt(col) === 45 && (line.length === col + 1 || line.charCodeAt(col + 1) === 32);
  }

  /** Every document's edits, or Unsupported thrown. */
  documents(): Edit[] {
    const edits: Edit[] = [];
    let first = 0;
    for (let i = 0; i <= this.lineCount; i++) {
      const line = i < this.lineCount ? this.lineText(i) : undefined;
      if (line !== undefined) {
        if (line === '---') {
          // fallthrough to close the document
        } else if (line.startsWith('---') || line.startsWith('...')) {
          bail();
        } else continue;
      }
      this.end = i;
      this.document(first, edits);
      first = i + 1;
    }
    return edits;
  }

  document(first: number, edits: Edit[]): void {
    const i = this.nextContent(first);
    if (i >= this.end) return; // empty document
    if (this.indentOf(this.lineText(i)) !== 0) bail();
    this.pos = i;
    const root = this.block(0);
    if (this.nextContent(this.pos) < this.end) bail();
    if (root.kind === 'map') this.edits(root.items, edits);
  }

  block(indent: number): FastValue {
    const line = this.lineText(this.pos);
    return Scanner.isSeqAt(line, indent) ? this.seq(indent) : this.map(indent, indent);
  }

  /** A block map whose first key is at `col` on line `this.pos`; later keys at `indent`. */
  map(indent: number, col: number): FastValue {
    const items: FastPair[] = [];
    const keys = new Set<string>();
    let last = this.pos;
    let firstCol: number | undefined = col;
    for (;;) {
      let c: number;
      if (firstCol !== undefined) {
        c = firstCol;
        firstCol = undefined;
      } else {
        const i = this.nextContent(this.pos);
        if (i >= this.end) break;
        const line = this.lineText(i);
        const n = this.indentOf(line);
        if (n < indent) break;
        if (n > indent) bail();
        if (Scanner.isSeqAt(line, n)) break;
        this.pos = i;
        c = n;
      }
      const pair = this.entry(c);
      if (keys.has(pair.key)) bail();
      keys.add(pair.key);
      items.push(pair);
      last = this.lastLineOf(pair.value, this.pos - 1);
    }
    return { kind: 'map', items, last };
  }

  lastLineOf(v: FastValue, fallback: number): number {
    switch (v.kind) {
      case 'scalar':
      case 'flow-map':
      case 'flow-seq':
        return v.line;
      case 'map':
      case 'seq':
      case 'block-scalar':
        return v.last;
      default:
        return fallback;
    }
  }

  /** A key at column `col` of line `this.pos`, and its value; leaves `pos` after the entry. */
  entry(col: number): FastPair {
    const lineNo = this.pos;
    const line = this.lineText(lineNo);
    const s = line.slice(col);
    let key: string;
    let len: number;
    let m: RegExpExecArray | null;
    if ((m = PLAIN_KEY.exec(s))) {
      key = m[0];
      len = key.length;
      if (BOOL_OR_NULL.test(key)) bail();
    } else if ((m = DQ_KEY.exec(s))) {
      key = m[1]!;
      len = m[0].length;
    } else if ((m = SQ_KEY.exec(s))) {
      key = m[1]!.replace(/''/g, "'");
      len = m[0].length;
    } else return bail();
    if (s.charCodeAt(len) !== 58 || (s.length > len + 1 && s.charCodeAt(len + 1) !== 32) || len > 1000) bail();
    const keyStart = this.starts[lineNo]! + col;
    const value = this.value(lineNo, col, col + len + 1, true);
    return { key, keyStart, keyEnd: keyStart + len, value };
  }

  /**
   * The value starting at column `from` of line `lineNo` (after `key:` or `-`), whose parent
   * collection sits at column `col`. Leaves `pos` on the line after the value.
   */
  value(lineNo: number, col: number, from: number, inMap: boolean): FastValue {
    const line = this.lineText(lineNo);
    const rest = line.slice(from);
    const t = rest.replace(/^ +/, '');
    const at = this.starts[lineNo]! + from + (rest.length - t.length);
    this.pos = lineNo + 1;
    if (t === '' || t.charCodeAt(0) === 35) {
      const j = this.nextContent(this.pos);
      if (j >= this.end) return { kind: 'empty' };
      const next = this.lineText(j);
      const n = this.indentOf(next);
      if (n > col) {
        this.pos = j;
        return this.block(n);
      }
      if (inMap && n === col && Scanner.isSeqAt(next, n)) {
        this.pos = j;
        return this.seq(n);
      }
      return { kind: 'empty' };
    }
    if (!inMap) {
      const c2 = from + (rest.length - t.length);
      if (Scanner.isSeqAt(line, c2)) bail();
      if (PLAIN_KEY.test(t) || DQ_KEY.test(t) || SQ_KEY.test(t)) {
        const k = PLAIN_KEY.exec(t) ?? DQ_KEY.exec(t) ?? SQ_KEY.exec(t);
        const after = t.charCodeAt(k![0].length);
        if (after === 58 && (t.length === k![0].length + 1 || t.charCodeAt(k![0].length + 1) === 32)) {
          this.pos = lineNo;
          return this.map(c2, c2);
        }
      }
    }
    const c0 = t.charCodeAt(0);
    if (c0 === 124 || c0 === 62) {
      if (!inMap || !BLOCK_HEADER.test(t)) bail();
      return this.blockScalar(col);
    }
    if (c0 === 34 || c0 === 39) {
      const m = (c0 === 34 ? DQ_KEY : SQ_KEY).exec(t);
      if (!m || !AFTER_VALUE.test(t.slice(m[0].length))) bail();
      const str = c0 === 34 ? m[1]! : m[1]!.replace(/''/g, "'");
      return { kind: 'scalar', str, start: at, end: at + m[0].length, line: lineNo };
    }
    if (c0 === 91) {
      const m = FLOW_SEQ.exec(t);
      if (!m || !AFTER_VALUE.test(t.slice(m[0].length))) bail();
      return { kind: 'flow-seq', line: lineNo };
    }
    if (c0 === 123) {
      const m = FLOW_MAP.exec(t);
      if (!m || !AFTER_VALUE.test(t.slice(m[0].length))) bail();
      const keys = new Set<string>();
      for (const k of m[0].matchAll(FLOW_MAP_KEYS)) {
        if (keys.has(k[1]!) || BOOL_OR_NULL.test(k[1]!)) bail();
        keys.add(k[1]!);
      }
      return { kind: 'flow-map', size: keys.size, line: lineNo };
    }
    // plain scalar
    if ('-?:,[]{}#&*!|>\'"%@`'.includes(t[0]!) && !(c0 === 45 && /^-[A-Za-z0-9]/.test(t))) bail();
    const hash = t.indexOf(' #');
    const raw = (hash < 0 ? t : t.slice(0, hash)).replace(/ +$/, '');
    if (raw.includes(': ') || raw.endsWith(':')) bail();
    return { kind: 'scalar', str: SPECIAL_PLAIN.test(raw) ? null : raw, start: at, end: at + raw.length, line: lineNo };
  }

  /** Block scalar lines after the header line; content must be indented past `col`. */
  blockScalar(col: number): FastValue {
    let i = this.pos;
    let contentIndent = -1;
    let last = i - 1;
    for (; i < this.end; i++) {
      const line = this.lineText(i);
      if (line === '') continue;
      const n = this.indentOf(line);
      if (n === line.length) bail(); // whitespace-only line
      if (contentIndent < 0) {
        if (n <= col) bail(); // empty block scalar
        contentIndent = n;
      } else if (n < contentIndent) break;
      last = i;
    }
    if (contentIndent < 0) bail();
    this.pos = last + 1;
    return { kind: 'block-scalar', last };
  }

  seq(indent: number): FastValue {
    let last = this.pos;
    for (;;) {
      const i = this.nextContent(this.pos);
      if (i >= this.end) break;
      const line = this.lineText(i);
      const n = this.indentOf(line);
      if (n < indent) break;
      if (n > indent) bail();
      if (!Scanner.isSeqAt(line, n)) break;
      const v = this.value(i, indent, indent + 1, false);
      last = this.lastLineOf(v, i);
    }
    return { kind: 'seq', last };
  }

  /** Offset where text goes after `v`, the value of the last entry of a block map. */
  insertAt(v: FastValue): number {
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
        const atEnd = next === this.lineCount - 1 && this.lineText(next) === '';
        if (next < this.lineCount && !atEnd && this.isSkippable(this.lineText(next))) bail();
        break;
      }
      default:
        return bail();
    }
    const next = this.starts[line + 1];
    return next === undefined ? this.text.length : next;
  }

  edits(root: FastPair[], out: Edit[]): void {
    const text = this.text;
    const get = (items: FastPair[], key: string): FastPair | undefined => items.find((p) => p.key === key);
    const str = (v: FastValue | undefined): string | undefined => {
      if (v?.kind === 'block-scalar') bail();
      if (v?.kind !== 'scalar') return undefined;
      if (v.str === null) bail();
      return v.str;
    };
    const metaPair = get(root, 'metadata');
    const meta = metaPair?.value;
    if (!metaPair || !meta || meta.kind !== 'map') return;
    const name = str(get(meta.items, 'name')?.value);
    const namespace = str(get(meta.items, 'namespace')?.value);
    const labels = get(meta.items, 'labels')?.value;
    const hasLabels = labels?.kind === 'map' || (labels?.kind === 'flow-map' && labels.size > 0);
    if (!name && !namespace && !hasLabels) return;

    const edits: Edit[] = [];
    const { identity, edit } = commentEdit(text, metaPair.keyEnd, namespace, name);
    if (edit) edits.push(edit);
    const apiVersion = str(get(root, 'apiVersion')?.value);
    const kind = str(get(root, 'kind')?.value) ?? '';
    const id = `${groupOf(apiVersion)}|${kind}|${identity.namespace || 'default'}|${identity.name}`;
    const annPair = get(meta.items, 'annotations');
    const ann = annPair?.value;
    if (ann?.kind === 'map') {
      const existing = get(ann.items, UPSTREAM_IDENTIFIER_ANNOTATION);
      if (existing) {
        const v = existing.value;
        if (v.kind !== 'scalar') bail();
        // an identifier contains '|', which no non-string plain scalar does
        if ((v.str ?? text.slice(v.start, v.end)) !== id) edits.push({ at: v.start, end: v.end, text: quote(id) });
        out.push(...edits);
        return;
      }
      const lastItem = ann.items[ann.items.length - 1]!;
      out.push(
        ...edits,
        insertion(text, this.insertAt(lastItem.value), ' '.repeat(column(text, ann.items[0]!.keyStart)), identifierLine(id)),
      );
      return;
    }
    if (annPair) return; // empty, null or flow-style annotations: left for a Document rewrite
    const lastItem = meta.items[meta.items.length - 1]!;
    const at = this.insertAt(lastItem.value);
    out.push(...edits, insertion(text, at, ' '.repeat(column(text, meta.items[0]!.keyStart)), `annotations:\n  ${identifierLine(id)}`));
  }
}

/** The edits of the fast path, or undefined when the text is outside what it models. */
function fastEdits(text: string): Edit[] | undefined {
  // tabs, CR, BOM, control characters and unusual line breaks: left to the full parser
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  if (/[\x00-\x09\x0b-\x1f\x7f\x85\ufeff\u2028\u2029]/.test(text)) return undefined;
  try {
    return new Scanner(text).documents();
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
  if (!metaPair || !isMap(meta) || meta.items.length === 0 || meta.flow) return [];
  const name = str(pairOf(meta, 'name')?.value);
  const namespace = str(pairOf(meta, 'namespace')?.value);
  const labels = pairOf(meta, 'labels')?.value;
  if (!name && !namespace && !(isMap(labels) && labels.items.length > 0)) return [];

  const edits: Edit[] = [];
  const key = metaPair.key as Node;
  const keyLineEnd = text.indexOf('\n', key.range?.[1] ?? 0);
  const lineEnd = keyLineEnd < 0 ? text.length : keyLineEnd;
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

  const apiVersion = str(pairOf(root, 'apiVersion')?.value);
  const kind = str(pairOf(root, 'kind')?.value) ?? '';
  const id = `${groupOf(apiVersion)}|${kind}|${identity.namespace || 'default'}|${identity.name}`;
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
  if (annPair) return []; // empty, null or flow-style annotations: left for a Document rewrite
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

function applyEdits(text: string, edits: Edit[]): string {
  let out = text;
  for (const e of edits.sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.end);
  return out;
}

/**
 * The marks found through `yaml`'s composed Documents: the path for whatever the scanner does
 * not model, and the reference the scanner is tested against. Not exported from the package.
 */
export function addMergeCommentsComposed(text: string): string {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return text;
  return applyEdits(
    text,
    docs.flatMap((d) => composedEdits(d as Document, text)),
  );
}

/** Which path produced the result; for tests and benchmarks, not exported from the package. */
export function addMergeCommentsTraced(text: string): { text: string; path: 'scan' | 'compose' } {
  const edits = fastEdits(text);
  return edits ? { text: applyEdits(text, edits), path: 'scan' } : { text: addMergeCommentsComposed(text), path: 'compose' };
}

/**
 * Adds the merge comment and the upstream-identifier annotation to every KRM object in a YAML
 * file's text. Objects without metadata (or without name, namespace and labels), non-KRM
 * documents and files that do not parse are returned unchanged, as kpt does.
 */
export function addMergeComments(text: string): string {
  return addMergeCommentsTraced(text).text;
}
