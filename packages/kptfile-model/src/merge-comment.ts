/**
 * kpt's merge comments: `metadata: # kpt-merge: <namespace>/<name>` records a resource's
 * upstream identity so a local rename still matches it, and the annotation
 * `internal.kpt.dev/upstream-identifier: '<group>|<kind>|<namespace or default>|<name>'`
 * carries the same identity. Edits are made in the text, so everything else in the file stays
 * byte for byte.
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

function str(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  return node.value === null || node.value === undefined ? undefined : String(node.value);
}

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => str(p.key) === key) as Pair | undefined;
}

function column(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** Offset just after the line holding the end of `node` (its trailing comment included). */
function endOfLine(text: string, node: Node): number {
  const end = node.range?.[2] ?? text.length;
  if (end > 0 && text[end - 1] === '\n') return end;
  const nl = text.indexOf('\n', end);
  return nl < 0 ? text.length : nl + 1;
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

interface Edit {
  at: number;
  end: number;
  text: string;
}

function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion || !apiVersion.includes('/')) return '';
  return apiVersion.slice(0, apiVersion.indexOf('/'));
}

function editsFor(doc: Document, text: string): Edit[] {
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
    const anchor = ((last.value as Node | null) ?? (last.key as Node));
    const at = endOfLine(text, anchor);
    const indent = ' '.repeat(column(text, (ann.items[0]?.key as Node).range?.[0] ?? 0));
    edits.push({ at, end: at, text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${indent}${UPSTREAM_IDENTIFIER_ANNOTATION}: ${quote(id)}\n` });
    return edits;
  }
  if (annPair) return []; // empty, null or flow-style annotations: left for a Document rewrite
  const last = meta.items[meta.items.length - 1] as Pair;
  const anchor = (last.value as Node | null) ?? (last.key as Node);
  const at = endOfLine(text, anchor);
  const indent = ' '.repeat(column(text, (meta.items[0]?.key as Node).range?.[0] ?? 0));
  edits.push({
    at,
    end: at,
    text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${indent}annotations:\n${indent}  ${UPSTREAM_IDENTIFIER_ANNOTATION}: ${quote(id)}\n`,
  });
  return edits;
}

/**
 * Adds the merge comment and the upstream-identifier annotation to every KRM object in a YAML
 * file's text. Objects without metadata (or without name, namespace and labels), non-KRM
 * documents and files that do not parse are returned unchanged, as kpt does.
 */
export function addMergeComments(text: string): string {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return text;
  const edits = docs.flatMap((d) => editsFor(d as Document, text)).sort((a, b) => b.at - a.at);
  let out = text;
  for (const e of edits) out = out.slice(0, e.at) + e.text + out.slice(e.end);
  return out;
}
