import { Document, type ToStringOptions } from 'yaml';
import {
  blockScalarAtEnd,
  isBlockScalar,
  lastValueOf,
  parseYamlDocument,
  yamlDocumentOptions,
  type SourceDocument,
} from '../yaml/parse.js';
import type { YamlNode } from '../yaml/nodes.js';
import { patchLines, splitLines } from './lines.js';
import { spliceChangedScalars } from './splice.js';

/** How a file lays out its YAML, so that printed lines look like the lines around them. */
export interface LayoutStyle {
  readonly indent: number;
  readonly indentSeq: boolean;
}

/** A line that opens a block under a key: `key:` or `- key:`, maybe with a comment. */
function openingKey(line: string): number | undefined {
  const code = line.replace(/\s+#.*$/, '').trimEnd();
  if (!code.endsWith(':') || code.trimStart().startsWith('#')) return undefined;
  const lead = /^(\s*)((?:- )*)/.exec(code)!;
  return lead[1]!.length + lead[2]!.length;
}

/** Detects indentation and whether block lists under a key are indented (`  - x`) or not (`- x`). */
export function detectLayout(text: string): LayoutStyle {
  const lines = text.split('\n');
  let indent: number | undefined;
  let indentSeq: boolean | undefined;
  for (let k = 0; k < lines.length - 1 && (indent === undefined || indentSeq === undefined); k++) {
    const keyIndent = openingKey(lines[k]!);
    if (keyIndent === undefined) continue;
    // The block's first line, past the comment lines above it.
    let i = k + 1;
    while (i < lines.length && lines[i]!.trimStart().startsWith('#')) i++;
    const line = lines[i] ?? '';
    const lineIndent = /^(\s*)\S/.exec(line)?.[1]?.length;
    if (lineIndent === undefined) continue;
    if (line.trimStart().startsWith('- ') || line.trim() === '-') {
      indentSeq ??= lineIndent > keyIndent;
    } else if (lineIndent > keyIndent) {
      indent ??= lineIndent - keyIndent;
    }
  }
  return { indent: indent ?? 2, indentSeq: indentSeq ?? false };
}

export function printOptions(layout: LayoutStyle): ToStringOptions {
  return {
    indent: layout.indent,
    indentSeq: layout.indentSeq,
    lineWidth: 0,
    minContentWidth: 0,
    flowCollectionPadding: false,
  };
}

/**
 * The text of a merged document: the file's own lines wherever the merge left them alone, the
 * printer's lines where content changed.
 */
export function printMergedDocument(source: SourceDocument, contents: YamlNode | undefined): string {
  // one-line scalars print alike in any layout: the splice needs none detected
  const spliced = spliceChangedScalars(source, contents, printOptions({ indent: 2, indentSeq: false }));
  if (spliced !== undefined) return spliced;
  const layout = detectLayout(source.text);
  const options = printOptions(layout);
  const doc = source.doc;
  const original = doc.contents;
  const before = doc.toString(options);
  doc.contents = (contents ?? null) as typeof doc.contents;
  let after: string;
  try {
    after = doc.toString(options);
  } finally {
    doc.contents = original;
  }
  let text = keepingLines(source.text, before, after);
  // The file's last line has no line break after it: that is layout, kept even where the diff took
  // the printer's last lines (which end in one). A `|` header the diff left as the file had it
  // would otherwise read that line break into the value; the stream's writer adds the final line
  // break with the header made `|-` (`withFinalLineBreak`).
  if (!source.text.endsWith('\n') && text.endsWith('\n')) text = text.slice(0, -1);
  // But where the merged document ends in a block scalar whose value holds one, it is part of the value.
  const last = lastValueOf(contents);
  if (!text.endsWith('\n') && isBlockScalar(last) && String(last.value).endsWith('\n')) return `${text}\n`;
  return text;
}

/**
 * The text of an edited document or file: `text`'s own lines wherever the printer's text of it as
 * read (`before`) and as edited (`after`) agree, the printer's lines where the content changed.
 * Comments the printer would move (`metadata: # kpt-merge: …`), quoting and indentation stay as
 * the file had them on every line the edit left alone.
 */
export function keepingLines(text: string, before: string, after: string): string {
  return patchLines(splitLines(text), splitLines(before), splitLines(after)).join('\n');
}

/** A document that exists on no local side (added upstream), printed in the given layout. */
export function printNewDocument(contents: YamlNode, layout: LayoutStyle, template?: Document): string {
  const doc = new Document(null, yamlDocumentOptions);
  if (template) doc.commentBefore = template.commentBefore;
  doc.contents = contents as typeof doc.contents;
  return doc.toString(printOptions(layout));
}

/**
 * `text` ending with a line break, every value as it was. A block scalar on the last line (`|`,
 * `>`) with no line break after it has none in its value (as Kubernetes reads it): its header
 * strips its final line break (`|` → `|-`) before one is written. kpt writes such files the same.
 */
export function withFinalLineBreak(text: string): string {
  if (text === '' || text.endsWith('\n')) return text;
  // Only the last document can end in the scalar: the text from its `---` on is parsed.
  let from = 0;
  for (let at = text.lastIndexOf('\n---'); at !== -1; at = at === 0 ? -1 : text.lastIndexOf('\n---', at - 1)) {
    if (/^[ \t\r\n]?$/.test(text.charAt(at + 4))) {
      from = at + 1;
      break;
    }
  }
  const last = text.slice(from);
  const scalar = blockScalarAtEnd(parseYamlDocument(last), last);
  const header = scalar?.range ? /^([|>])([1-9]?)[+-]?([1-9]?)/.exec(last.slice(scalar.range[0])) : null;
  if (!scalar?.range || !header) return `${text}\n`;
  const at = from + scalar.range[0];
  return `${text.slice(0, at)}${header[1]}${header[2] || header[3]}-${text.slice(at + header[0].length)}\n`;
}
