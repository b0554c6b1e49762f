/**
 * A line scanner for the plain block style KRM files are written in: it splits a stream into the
 * same document texts as `parseStream` and reads each document's block maps and scalars without
 * building `yaml`'s nodes. It checks on the way that `yaml` (YAML 1.1, as `parseStream` reads)
 * would compose the text without error and without a duplicate key. Anything it does not model
 * exactly (tabs, anchors, tags, multi-line plain or flow scalars) makes it decline the document,
 * and the caller parses that document instead; what could move a document boundary (directives,
 * `...`, `---` with more on its line, other line breaks than `\n`) makes it decline the stream.
 * kptfile-model's merge comments read files through it too.
 */

/** A document of a stream as the scanner read it. */
export interface ScannedDocument {
  /** Exactly `parseStream`'s `SourceDocument.text` for the same index. */
  readonly text: string;
  readonly empty: boolean;
  /** Top-level pairs of the document's block map; undefined for an empty document. */
  readonly root: readonly ScannedPair[] | undefined;
}

/**
 * A document of a stream as `scanDocuments` read it: scanned, or declined (its text only):
 * whether a declined document parses, and into what, only the parser can say.
 */
export type ScannedOrDeclined = (ScannedDocument & { readonly declined: false }) | { readonly text: string; readonly declined: true };

export interface ScannedPair {
  readonly key: string;
  /** Offset of the start of the key in the file's text. */
  readonly keyStart: number;
  /** Offset of the end of the key in the file's text (where its `:` is). */
  readonly keyEnd: number;
  readonly value: ScannedValue;
}

/**
 * `str` is the composed string of a scalar; `null` when YAML 1.1 would not read it as a string.
 * `start`/`end` are the scalar's offsets in the file's text, quotes included.
 */
export type ScannedValue =
  | { readonly kind: 'empty' }
  | { readonly kind: 'scalar'; readonly str: string | null; readonly start: number; readonly end: number; readonly line: number }
  | { readonly kind: 'flow-map'; readonly size: number; readonly line: number }
  | { readonly kind: 'flow-seq'; readonly line: number }
  | { readonly kind: 'map'; readonly items: readonly ScannedPair[]; readonly last: number }
  | { readonly kind: 'seq'; readonly last: number }
  | { readonly kind: 'block-scalar'; readonly last: number };

class Unsupported {}
const UNSUPPORTED = new Unsupported();
const DECLINED = Symbol('declined');
function bail(): never {
  throw UNSUPPORTED;
}

/** YAML 1.1 booleans and nulls: as keys they could equal another key, as values they are not strings. */
const BOOL_OR_NULL = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$/;
/** {@link BOOL_OR_NULL}, the pattern tried only on a word short enough to be one (most are not). */
const isBoolOrNull = (word: string): boolean => word.length <= 5 && BOOL_OR_NULL.test(word);
/** Maps of more keys than this check for a duplicate with a set; smaller ones by looking (no set to build). */
const KEYS_LOOKED_THROUGH = 16;
/** A plain scalar YAML 1.1 might not read as a string: numbers, timestamps, `.inf`, `=`, `<<`... */
const SPECIAL_PLAIN_START = /^[-+.0-9~=<]/;
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_./-]*/;
const DQ = /^"([^"\\]*)"/;
const SQ = /^'((?:[^']|'')*)'/;
// the same, sticky: read where a key starts on its line, without a copy of the rest of the line
const PLAIN_KEY_AT = /[A-Za-z_][A-Za-z0-9_./-]*/y;
const DQ_AT = /"([^"\\]*)"/y;
const SQ_AT = /'((?:[^']|'')*)'/y;
function at(pattern: RegExp, text: string, from: number): RegExpExecArray | null {
  pattern.lastIndex = from;
  return pattern.exec(text);
}
const BLOCK_HEADER = /^[|>][-+]?(?: +#.*)?$/;
const FLOW_ITEM = `(?:"[^"\\\\]*"|'(?:[^']|'')*'|[A-Za-z0-9_./][A-Za-z0-9_./=+-]*)`;
const FLOW_SEQ = new RegExp(`^\\[ *(?:${FLOW_ITEM} *(?:, *${FLOW_ITEM} *)*)?\\]`);
const FLOW_MAP = new RegExp(`^\\{ *(?:([A-Za-z_][A-Za-z0-9_./-]*): +${FLOW_ITEM} *(?:, *[A-Za-z_][A-Za-z0-9_./-]*: +${FLOW_ITEM} *)*)?\\}`);
const FLOW_MAP_KEYS = /[{,] *([A-Za-z_][A-Za-z0-9_./-]*):/g;
/** What may follow a value on its line: spaces, and a comment after one. Sticky: read in place. */
const AFTER_VALUE = /(?: *| +#.*)$/y;
function afterValue(text: string, from: number): boolean {
  AFTER_VALUE.lastIndex = from;
  return AFTER_VALUE.test(text);
}
// tabs, CR, BOM, control characters and unusual line breaks: left to the parser
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNUSUAL_CHARACTERS = /[\x00-\x09\x0b-\x1f\x7f\x85\ufeff\u2028\u2029]/;
/** Characters that could make the parser see lines, or a stream start, where the scan does not. */
const UNUSUAL_LINE_BREAKS = /[\r\x85\ufeff\u2028\u2029]/;

class Scanner {
  readonly starts: number[] = [];
  readonly lines: string[];
  pos = 0;
  end = 0;

  constructor(readonly text: string) {
    this.lines = text.split('\n');
    let at = 0;
    for (const line of this.lines) {
      this.starts.push(at);
      at += line.length + 1;
    }
  }

  get lineCount(): number {
    return this.lines.length;
  }

  lineText(i: number): string {
    return this.lines[i]!;
  }

  static indentOf(line: string): number {
    let n = 0;
    while (line.charCodeAt(n) === 32) n++;
    return n;
  }

  /** Blank or comment-only line. */
  static isSkippable(line: string): boolean {
    const n = Scanner.indentOf(line);
    return n === line.length || line.charCodeAt(n) === 35; // '#'
  }

  nextContent(from: number): number {
    let i = from;
    while (i < this.end && Scanner.isSkippable(this.lineText(i))) i++;
    return i;
  }

  static isSeqAt(line: string, col: number): boolean {
    return line.charCodeAt(col) === 45 && (line.length === col + 1 || line.charCodeAt(col + 1) === 32);
  }

  /**
   * The documents, split where `yaml` splits them: at each `---` line, except that blank and
   * comment lines before a first `---` belong to the first document rather than making one. A
   * document the scan does not model is declined alone (`root` is DECLINED). Each document goes
   * to `visit` as soon as it is read, so that its scanned tree is garbage before the next one is
   * built: trees of a whole stream kept to the end outlive the young generation, and each of its
   * collections copies them.
   */
  documents<T>(visit: (text: string, root: ScannedPair[] | undefined | typeof DECLINED) => T): T[] {
    const segments: { first: number; end: number }[] = [];
    let first = 0;
    for (let i = 0; i <= this.lineCount; i++) {
      const line = i < this.lineCount ? this.lineText(i) : undefined;
      if (line !== undefined) {
        // only a line starting `-`, `.` or `%` can be a boundary: most lines are indented keys
        const c = line.charCodeAt(0);
        if ((c !== 45 && c !== 46 && c !== 37) || line !== '---') {
          // a directive, a document end, or `---` with more on its line: boundaries the scan does not model
          if (c === 37 || (c === 45 && line.startsWith('---')) || (c === 46 && line.startsWith('...'))) bail();
          continue;
        }
      }
      segments.push({ first, end: i });
      first = i + 1;
    }
    const out: T[] = [];
    for (let s = 0; s < segments.length; s++) {
      const seg = segments[s]!;
      const root = this.documentOrDeclined(seg.first, seg.end);
      if (s === 0 && root === undefined) continue; // nothing before the first `---` (or at all)
      // Whether lines before a first `---` make a document of their own, only the parser can say
      // when the scan declines them and they may hold nothing but blanks and comments.
      if (s === 0 && root === DECLINED && !this.holdsContent(seg.first, seg.end)) bail();
      // A segment's document starts at its `---` line, the first one at the start of the text,
      // and runs to where the next one starts.
      const start = out.length === 0 ? 0 : this.starts[seg.first - 1]!;
      const next = segments[s + 1];
      const end = next === undefined ? this.text.length : this.starts[next.first - 1]!;
      out.push(visit(this.text.slice(start, end), root));
    }
    return out;
  }

  /** Some line from `first` to `end` is more than blanks (spaces or tabs) and a comment. */
  holdsContent(first: number, end: number): boolean {
    for (let i = first; i < end; i++) {
      const t = this.lineText(i).replace(/^[ \t]+/, '');
      if (t !== '' && t.charCodeAt(0) !== 35) return true;
    }
    return false;
  }

  /** The root map of the document on lines `first` to `end`, undefined when empty, or DECLINED. */
  documentOrDeclined(first: number, end: number): ScannedPair[] | undefined | typeof DECLINED {
    const from = this.starts[first] ?? this.text.length;
    const to = end < this.lineCount ? this.starts[end]! : this.text.length;
    if (UNUSUAL_CHARACTERS.test(this.text.slice(from, to))) return DECLINED;
    this.end = end;
    try {
      return this.document(first);
    } catch (e) {
      if (e === UNSUPPORTED) return DECLINED;
      throw e;
    }
  }

  /** The root map of the document whose lines start at `first`; undefined when it has no content. */
  document(first: number): ScannedPair[] | undefined {
    const i = this.nextContent(first);
    if (i >= this.end) return undefined;
    const line = this.lineText(i);
    if (Scanner.indentOf(line) !== 0 || Scanner.isSeqAt(line, 0)) bail();
    this.pos = i;
    const root = this.map(0, 0);
    if (this.nextContent(this.pos) < this.end) bail();
    return root.items as ScannedPair[];
  }

  block(indent: number): ScannedValue {
    const line = this.lineText(this.pos);
    return Scanner.isSeqAt(line, indent) ? this.seq(indent) : this.map(indent, indent);
  }

  /** A block map whose first key is at `col` on line `this.pos`; later keys at `indent`. */
  map(indent: number, col: number): ScannedValue & { kind: 'map' } {
    const items: ScannedPair[] = [];
    let keys: Set<string> | undefined;
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
        const n = Scanner.indentOf(line);
        if (n < indent) break;
        if (n > indent) bail();
        if (Scanner.isSeqAt(line, n)) break;
        this.pos = i;
        c = n;
      }
      const pair = this.entry(c);
      if (keys) {
        if (keys.has(pair.key)) bail();
        keys.add(pair.key);
      } else {
        for (const p of items) if (p.key === pair.key) bail();
        if (items.length >= KEYS_LOOKED_THROUGH) keys = new Set([...items.map((p) => p.key), pair.key]);
      }
      items.push(pair);
      last = lastLineOf(pair.value, this.pos - 1);
    }
    return { kind: 'map', items, last };
  }

  /** A key at column `col` of line `this.pos`, and its value; leaves `pos` after the entry. */
  entry(col: number): ScannedPair {
    const lineNo = this.pos;
    const line = this.lineText(lineNo);
    let key: string;
    let len: number;
    let m: RegExpExecArray | null;
    if ((m = at(PLAIN_KEY_AT, line, col))) {
      key = m[0];
      len = key.length;
      if (isBoolOrNull(key)) bail();
    } else if ((m = at(DQ_AT, line, col))) {
      key = m[1]!;
      len = m[0].length;
    } else if ((m = at(SQ_AT, line, col))) {
      key = m[1]!.replace(/''/g, "'");
      len = m[0].length;
    } else return bail();
    const end = col + len;
    if (line.charCodeAt(end) !== 58 || (line.length > end + 1 && line.charCodeAt(end + 1) !== 32) || len > 1000) bail();
    const keyStart = this.starts[lineNo]! + col;
    const value = this.value(lineNo, col, col + len + 1, true);
    return { key, keyStart, keyEnd: keyStart + len, value };
  }

  /**
   * The value starting at column `from` of line `lineNo` (after `key:` or `-`), whose parent
   * collection sits at column `col`. Leaves `pos` on the line after the value.
   */
  value(lineNo: number, col: number, from: number, inMap: boolean): ScannedValue {
    const line = this.lineText(lineNo);
    // the value's text, from its first character: one string per value (this runs for every line)
    let first = from;
    while (line.charCodeAt(first) === 32) first++;
    const t = line.slice(first);
    const at = this.starts[lineNo]! + first;
    this.pos = lineNo + 1;
    if (t === '' || t.charCodeAt(0) === 35) {
      const j = this.nextContent(this.pos);
      if (j >= this.end) return { kind: 'empty' };
      const next = this.lineText(j);
      const n = Scanner.indentOf(next);
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
      const c2 = first;
      if (Scanner.isSeqAt(line, c2)) bail();
      const k = PLAIN_KEY.exec(t) ?? DQ.exec(t) ?? SQ.exec(t);
      if (k) {
        const after = t.charCodeAt(k[0].length);
        if (after === 58 && (t.length === k[0].length + 1 || t.charCodeAt(k[0].length + 1) === 32)) {
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
      const m = (c0 === 34 ? DQ : SQ).exec(t);
      if (!m || !afterValue(t, m[0].length)) bail();
      const str = c0 === 34 ? m[1]! : m[1]!.replace(/''/g, "'");
      return { kind: 'scalar', str, start: at, end: at + m[0].length, line: lineNo };
    }
    if (c0 === 91) {
      const m = FLOW_SEQ.exec(t);
      if (!m || !afterValue(t, m[0].length)) bail();
      return { kind: 'flow-seq', line: lineNo };
    }
    if (c0 === 123) {
      const m = FLOW_MAP.exec(t);
      if (!m || !afterValue(t, m[0].length)) bail();
      const keys = new Set<string>();
      for (const k of m[0].matchAll(FLOW_MAP_KEYS)) {
        if (keys.has(k[1]!) || isBoolOrNull(k[1]!)) bail();
        keys.add(k[1]!);
      }
      return { kind: 'flow-map', size: keys.size, line: lineNo };
    }
    // a plain scalar
    if ('-?:,[]{}#&*!|>\'"%@`'.includes(t[0]!) && !(c0 === 45 && /^-[A-Za-z0-9]/.test(t))) bail();
    const hash = t.indexOf(' #');
    let rawEnd = hash < 0 ? t.length : hash;
    while (rawEnd > 0 && t.charCodeAt(rawEnd - 1) === 32) rawEnd--;
    const raw = rawEnd === t.length ? t : t.slice(0, rawEnd);
    if (raw.includes(': ') || raw.endsWith(':')) bail();
    const special = SPECIAL_PLAIN_START.test(raw) || isBoolOrNull(raw);
    return { kind: 'scalar', str: special ? null : raw, start: at, end: at + raw.length, line: lineNo };
  }

  /** Block scalar lines after the header line; content must be indented past `col`. */
  blockScalar(col: number): ScannedValue {
    let i = this.pos;
    let contentIndent = -1;
    let last = i - 1;
    for (; i < this.end; i++) {
      const line = this.lineText(i);
      if (line === '') continue;
      const n = Scanner.indentOf(line);
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

  seq(indent: number): ScannedValue {
    let last = this.pos;
    for (;;) {
      const i = this.nextContent(this.pos);
      if (i >= this.end) break;
      const line = this.lineText(i);
      const n = Scanner.indentOf(line);
      if (n < indent) break;
      if (n > indent) bail();
      if (!Scanner.isSeqAt(line, n)) break;
      const v = this.value(i, indent, indent + 1, false);
      last = lastLineOf(v, i);
    }
    return { kind: 'seq', last };
  }
}

function lastLineOf(v: ScannedValue, fallback: number): number {
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

/**
 * The documents of a YAML stream whose every document is a block map in the subset the scanner
 * models, or undefined: then only `parseStream` can say what the text holds.
 */
export function scanStream(text: string): ScannedDocument[] | undefined {
  const documents = scanDocuments(text);
  if (!documents || documents.some((d) => d.declined)) return undefined;
  return documents as ScannedDocument[];
}

/**
 * The documents of a YAML stream, each scanned or declined alone, or undefined when the scan
 * cannot even say where the documents are. A declined document's text parses alone as it does
 * in its stream whenever the stream parses: a `---` line ends whatever is open before it.
 */
export function scanDocuments(text: string): ScannedOrDeclined[] | undefined {
  return scanEachDocument(text, (d) => d);
}

/** The lines of a scanned text: what a caller that edits the text by line needs of them. */
export interface ScannedLines {
  readonly count: number;
  text(i: number): string;
  /** Offset of line `i` in the text; the text's length for `i` = `count`. */
  start(i: number): number;
}

/**
 * {@link scanDocuments}, each document handed to `visit` as soon as it is read and only what
 * `visit` returns kept: a stream's scanned trees never all live at once (their memory is young
 * garbage, cheap to collect). Undefined when the scan cannot say where the documents are; then
 * `visit` was called for none of them. `lines` are the text's lines, split once for the scan.
 */
export function scanEachDocument<T>(text: string, visit: (document: ScannedOrDeclined, lines: ScannedLines) => T): T[] | undefined {
  if (UNUSUAL_LINE_BREAKS.test(text)) return undefined;
  const scanner = new Scanner(text);
  const lines: ScannedLines = {
    count: scanner.lineCount,
    text: (i) => scanner.lineText(i),
    start: (i) => (i < scanner.lineCount ? scanner.starts[i]! : text.length),
  };
  try {
    return scanner.documents((t, root) =>
      visit(root === DECLINED ? { text: t, declined: true } : { text: t, empty: root === undefined, root, declined: false }, lines),
    );
  } catch (e) {
    if (e === UNSUPPORTED) return undefined;
    throw e;
  }
}

/** The pair of a scanned map with this key. */
export function scannedPair(items: readonly ScannedPair[] | undefined, key: string): ScannedPair | undefined {
  if (!items) return undefined;
  for (const p of items) if (p.key === key) return p;
  return undefined;
}
