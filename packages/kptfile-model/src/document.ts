/**
 * Helpers over eemeli/yaml Documents shared by the Kptfile printer and the package writer:
 * keeping `key: # comment` on the key's line, detecting the sequence indentation of a file,
 * and bringing a Document to a new value while keeping the comments, order and quoting of
 * everything that did not change.
 */
import { isMap, isScalar, isSeq, visit, type Document, type Node, type Pair } from 'yaml';

/**
 * yaml reads `metadata: # c` (a comment after a key whose value is a block collection) as a
 * comment before the value and would print it on a line of its own; put it back on the key.
 */
export function hoistKeyComments(doc: Document, source: string): void {
  visit(doc, {
    Pair(_, pair) {
      const value = pair.value as Node | null;
      const key = pair.key as Node | null;
      if (!value || !key || !(isMap(value) || isSeq(value)) || !value.commentBefore || !key.range || !value.range) return;
      const between = source.slice(key.range[1], value.range[0]);
      const hash = between.indexOf('#');
      const nl = between.indexOf('\n');
      if (hash >= 0 && (nl < 0 || hash < nl) && !value.commentBefore.includes('\n')) {
        if (!isScalar(key) && !isMap(key) && !isSeq(key)) return;
        key.comment = value.commentBefore;
        value.commentBefore = undefined;
      }
    },
  });
}

/** `wide` when block sequences are indented under their key (`key:\n  - a`), else `compact`. */
export function detectSequenceIndent(source: string): 'wide' | 'compact' | undefined {
  const lines = source.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    const m = /^( *)[^\s#-][^#]*:[ \t]*(?:#.*)?$/.exec(lines[i] ?? '');
    if (!m) continue;
    const next = /^( *)- /.exec(lines[i + 1] ?? '') ?? /^( *)-$/.exec(lines[i + 1] ?? '');
    if (!next) continue;
    return (next[1] ?? '').length > (m[1] ?? '').length ? 'wide' : 'compact';
  }
  return undefined;
}

function scalarText(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  const v = node.value;
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return undefined;
  const src = (node as { source?: unknown }).source;
  return typeof src === 'string' ? src : String(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function identity(v: unknown): string | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  for (const k of ['name', 'conditionType', 'type', 'image', 'exec']) {
    if (typeof o[k] === 'string') return `${k}=${o[k] as string}`;
  }
  return undefined;
}

function plain(node: unknown): unknown {
  if (isScalar(node)) return scalarText(node) ?? node.value;
  if (isMap(node)) {
    const o: Record<string, unknown> = {};
    for (const p of node.items) o[String(scalarText(p.key) ?? p.key)] = plain(p.value);
    return o;
  }
  if (isSeq(node)) return node.items.map(plain);
  return node ?? null;
}

/**
 * Returns a node equal to `value`, reusing `node` (and its comments) where it can. `value` is
 * plain data: objects, arrays, strings (numbers and booleans allowed).
 */
export function syncNode(doc: Document, node: unknown, value: unknown): unknown {
  if (value === undefined || value === null) return doc.createNode(null);
  if (Array.isArray(value)) {
    if (!isSeq(node)) return doc.createNode(value);
    const old = [...node.items];
    const used = new Set<number>();
    const pick = (item: unknown, i: number): number => {
      let j = old.findIndex((n, k) => !used.has(k) && deepEqual(plain(n), item));
      if (j < 0) {
        const id = identity(item);
        if (id !== undefined) j = old.findIndex((n, k) => !used.has(k) && identity(plain(n)) === id);
      }
      if (j < 0 && i < old.length && !used.has(i) && identity(plain(old[i])) === undefined) j = i;
      return j;
    };
    const picks = value.map((item, i) => {
      const j = pick(item, i);
      if (j >= 0) used.add(j);
      return j;
    });
    // A comment above the first item belongs to that item: it moves with it.
    const first = old[0] as { commentBefore?: string | null } | undefined;
    if (node.commentBefore && first && picks[0] !== 0 && picks.includes(0)) {
      first.commentBefore = first.commentBefore ? `${node.commentBefore}\n${first.commentBefore}` : node.commentBefore;
      node.commentBefore = undefined;
    }
    node.items = value.map((item, i) => {
      const j = picks[i] as number;
      return j < 0 ? doc.createNode(item) : syncNode(doc, old[j], item);
    });
    return node;
  }
  if (typeof value === 'object') {
    if (!isMap(node)) return doc.createNode(value);
    const o = value as Record<string, unknown>;
    const seen = new Set<string>();
    node.items = node.items.filter((pair: Pair) => {
      const k = scalarText(pair.key);
      if (k === undefined || !(k in o) || o[k] === undefined || seen.has(k)) return false;
      seen.add(k);
      pair.value = syncNode(doc, pair.value, o[k]);
      return true;
    });
    // A new key goes after the nearest key that precedes it in `value` (so a Kptfile given
    // upstream and upstreamLock gets them after metadata, where kpt writes them); else at the end.
    const names = Object.keys(o).filter((k) => o[k] !== undefined);
    names.forEach((k, i) => {
      if (seen.has(k)) return;
      let at = node.items.length;
      for (let j = i - 1; j >= 0; j--) {
        const found = node.items.findIndex((pair: Pair) => scalarText(pair.key) === names[j]);
        if (found >= 0) {
          at = found + 1;
          break;
        }
      }
      node.items.splice(at, 0, doc.createPair(k, o[k]) as Pair);
      seen.add(k);
    });
    return node;
  }
  if (isScalar(node)) {
    if (scalarText(node) === String(value) && typeof node.value === typeof value) return node;
    if (scalarText(node) === String(value) && typeof value === 'string') return node;
    node.value = value;
    return node;
  }
  return doc.createNode(value);
}

/** Brings `doc` to `value` in place (see `syncNode`). */
export function syncDocument(doc: Document, value: unknown): void {
  doc.contents = syncNode(doc, doc.contents, value) as Document['contents'];
}
