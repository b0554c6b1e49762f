/**
 * Multi-document YAML files split into their documents with every byte accounted for, so a
 * file can be rebuilt exactly, or with some documents replaced, removed or added.
 * A line break written after a document that has none keeps its values (`withFinalLineBreak`).
 */
import { withFinalLineBreak } from '@kdelta/merge-core';

export interface YamlChunk {
  /** The `---` line that opens this document (with its newline), or '' for the first. */
  readonly marker: string;
  /** The document's text after the marker. */
  readonly body: string;
}

const MARKER = /^---(?:[ \t].*)?(?:\r?\n|$)/;

/** Splits at `---` lines in column 0. `chunks.map(c => c.marker + c.body).join('')` is the text. */
export function splitYamlDocuments(text: string): YamlChunk[] {
  const chunks: YamlChunk[] = [];
  let marker = '';
  let body = '';
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, end);
    const m = MARKER.exec(line);
    if (m && m[0] === line && !/^---[ \t]*[|>]/.test(line)) {
      if (marker !== '' || body !== '') chunks.push({ marker, body });
      marker = line;
      body = '';
    } else body += line;
    pos = end;
  }
  if (marker !== '' || body !== '' || chunks.length === 0) chunks.push({ marker, body });
  return chunks;
}

/** Whether a chunk's body holds a YAML value (not only comments, blank lines or `...`). */
export function chunkHasContent(body: string): boolean {
  return body.split('\n').some((l) => {
    const t = l.trim();
    return t !== '' && !t.startsWith('#') && t !== '...';
  });
}

/**
 * Rebuilds a YAML file. `bodies[k]` is the new text of the k-th document that has content
 * (`null` removes it, `undefined` keeps it); `added` documents are appended with `---`.
 * Comment-only chunks and the markers of kept documents are kept byte for byte.
 */
export function rebuildYamlFile(original: string, bodies: ReadonlyMap<number, string | null>, added: readonly string[] = []): string {
  const chunks = splitYamlDocuments(original);
  let out = '';
  let k = 0;
  // whether `out` holds a document with content yet, kept as it grows (splitting `out` again at
  // every document made a file of many documents quadratic)
  let contentSoFar = false;
  // set while the documents before are all removed: the next one kept becomes the file's first,
  // which has no `---` (as kpt writes files)
  let leadingRemoved = false;
  for (const c of chunks) {
    if (!chunkHasContent(c.body)) {
      out += c.marker + c.body;
      continue;
    }
    const replacement = bodies.get(k++);
    if (replacement === null) {
      if (!contentSoFar) leadingRemoved = true;
      continue;
    }
    const body = replacement === undefined ? c.body : replacement;
    const first = leadingRemoved && !contentSoFar;
    const marker = first ? '' : c.marker !== '' || (!contentSoFar && out.trim() === '') ? c.marker : '---\n';
    if (out !== '' && !out.endsWith('\n')) out = withFinalLineBreak(out);
    out += marker + body;
    contentSoFar ||= chunkHasContent(body);
  }
  for (const a of added) {
    out = withFinalLineBreak(out) + (contentSoFar ? '---\n' : '') + withFinalLineBreak(a);
    contentSoFar ||= chunkHasContent(a);
  }
  return out;
}

/** Whether every line of `text` ends with CRLF (and there is at least one line end). */
export function isCrlf(text: string): boolean {
  const lf = text.indexOf('\n');
  if (lf <= 0 || text[lf - 1] !== '\r') return false;
  for (let i = text.indexOf('\n', lf + 1); i !== -1; i = text.indexOf('\n', i + 1)) if (text[i - 1] !== '\r') return false;
  return true;
}

/** `text` with the line ends of `reference`: CRLF throughout when `reference` is all CRLF, else as it is. */
export function withLineEndsOf(reference: string, text: string): string {
  return isCrlf(reference) && !isCrlf(text) ? text.replace(/\r?\n/g, '\r\n') : text;
}
