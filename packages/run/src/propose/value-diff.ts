import { inert } from '../markdown.js';

/**
 * How a value reads beside another in a proposal: whole when it is short, else only where it
 * differs. A long list shows the items each side added, removed or changed; a long string the part
 * that differs, with a little context; a long map the keys. Pure: the text is data until
 * {@link renderPieces} writes it, every value through `inert`.
 */

/** A value's text longer than this is shown by its differences (a box is matched by its id, never by this text). */
export const MAX_VALUE = 80;
/** Characters of context kept on each side of the part of a long string that differs. */
const CONTEXT = 16;
/** The most characters of a long string's differing part, or of one item, shown. */
const MAX_PART = 60;
/** The most edits shown for one side (then "…and N more"). */
const MAX_EDITS = 5;
/** Past this many item comparisons, lists are compared position by position. */
const MAX_LCS = 250_000;

/** One piece of a value's view: strangers' text is in `text`, `from`, `to` and a map's `key`. */
export type Piece =
  | { readonly kind: 'absent' }
  | { readonly kind: 'whole'; readonly text: string }
  /** A part of a long string; `cut`: text left out before and after it. */
  | { readonly kind: 'excerpt'; readonly text: string; readonly cut: { readonly before: boolean; readonly after: boolean } }
  | { readonly kind: 'size'; readonly count: number; readonly of: 'list' | 'map' }
  | { readonly kind: 'added'; readonly text: string; readonly key?: string | undefined }
  | { readonly kind: 'removed'; readonly text: string; readonly key?: string | undefined }
  | {
      readonly kind: 'changed';
      readonly from: string;
      readonly to: string;
      readonly index?: number | undefined;
      readonly key?: string | undefined;
    }
  | { readonly kind: 'more'; readonly count: number }
  /** The same as the value it is read against. */
  | { readonly kind: 'unchanged' };

type SideName = 'origin' | 'upstream' | 'local';
export type Views = Readonly<Record<SideName, readonly Piece[]>>;

const textOf = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const itemText = (v: unknown): string => JSON.stringify(v) ?? 'null';
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The three sides of a conflict as people read them: undefined when every value is short enough
 * to show whole (or the sides are of different kinds): then each is shown whole, cut at the end.
 */
export function conflictViews(values: {
  readonly origin?: unknown;
  readonly upstream?: unknown;
  readonly local?: unknown;
}): Views | undefined {
  const sides = (['origin', 'upstream', 'local'] as const).filter((s) => values[s] !== undefined);
  if (sides.length < 2 || sides.every((s) => textOf(values[s]).length <= MAX_VALUE)) return undefined;
  const all = sides.map((s) => values[s]);
  // what each side changed is read against origin; without one, the two sides against each other
  const baseOf = (s: SideName): unknown =>
    s === 'origin' ? undefined : values.origin !== undefined ? values.origin : values[s === 'upstream' ? 'local' : 'upstream'];
  const view = (one: (s: SideName) => readonly Piece[]): Views => ({
    origin: values.origin === undefined ? [{ kind: 'absent' }] : one('origin'),
    upstream: values.upstream === undefined ? [{ kind: 'absent' }] : one('upstream'),
    local: values.local === undefined ? [{ kind: 'absent' }] : one('local'),
  });
  if (all.every((v) => typeof v === 'string')) return stringViews(values as Partial<Record<SideName, string>>, sides);
  if (all.every(Array.isArray)) {
    return view((s) =>
      s === 'origin'
        ? [{ kind: 'size', count: (values.origin as unknown[]).length, of: 'list' }]
        : bounded(listEdits(baseOf(s) as unknown[], values[s] as unknown[])),
    );
  }
  if (all.every(isMap)) {
    return view((s) =>
      s === 'origin'
        ? [{ kind: 'size', count: Object.keys(values.origin as object).length, of: 'map' }]
        : bounded(mapEdits(baseOf(s) as Record<string, unknown>, values[s] as Record<string, unknown>)),
    );
  }
  return undefined;
}

/** What changed from `from` to `to`, one value: whole when short, else its differences. */
export function changeViews(from: unknown, to: unknown): { readonly from: readonly Piece[]; readonly to: readonly Piece[] } {
  const views = conflictViews({ origin: from, upstream: to });
  if (!views) {
    return {
      from: from === undefined ? [{ kind: 'absent' }] : [{ kind: 'whole', text: cut(textOf(from), MAX_VALUE) }],
      to: to === undefined ? [{ kind: 'absent' }] : [{ kind: 'whole', text: cut(textOf(to), MAX_VALUE) }],
    };
  }
  return { from: views.origin, to: views.upstream };
}

function bounded(edits: Piece[]): Piece[] {
  if (edits.length === 0) return [{ kind: 'unchanged' }];
  return edits.length > MAX_EDITS ? [...edits.slice(0, MAX_EDITS), { kind: 'more', count: edits.length - MAX_EDITS }] : edits;
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 1) / 2);
  return `${text.slice(0, half)}…${text.slice(text.length - half)}`;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function commonSuffix(a: string, b: string, prefix: number): number {
  let i = 0;
  while (i < a.length - prefix && i < b.length - prefix && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}

/**
 * Long strings: the same window of each, around where any of them differs from the reference
 * (origin, else upstream), so the three columns line up on the part that changed.
 */
function stringViews(values: Partial<Record<SideName, string>>, sides: readonly SideName[]): Views {
  const ref = values.origin ?? values.upstream ?? values.local ?? '';
  let prefix = Number.POSITIVE_INFINITY;
  let suffix = Number.POSITIVE_INFINITY;
  for (const s of sides) {
    const v = values[s]!;
    if (v === ref) continue;
    const p = commonPrefix(ref, v);
    prefix = Math.min(prefix, p);
    suffix = Math.min(suffix, commonSuffix(ref, v, p));
  }
  if (!Number.isFinite(prefix)) prefix = suffix = 0;
  const piece = (v: string | undefined): readonly Piece[] => {
    if (v === undefined) return [{ kind: 'absent' }];
    const start = Math.max(0, prefix - CONTEXT);
    const end = Math.max(start, v.length - Math.max(0, suffix - CONTEXT));
    const text = v.slice(start, end);
    const before = start > 0;
    const after = end < v.length;
    return before || after || text.length > MAX_VALUE
      ? [{ kind: 'excerpt', text: cut(text, MAX_PART + 2 * CONTEXT), cut: { before, after } }]
      : [{ kind: 'whole', text }];
  };
  return { origin: piece(values.origin), upstream: piece(values.upstream), local: piece(values.local) };
}

/** Two items as people read them: long strings cut to where they differ. */
function itemPair(from: unknown, to: unknown): { from: string; to: string } {
  const a = itemText(from);
  const b = itemText(to);
  if (a.length <= MAX_PART && b.length <= MAX_PART) return { from: a, to: b };
  const p = commonPrefix(a, b);
  const s = commonSuffix(a, b, p);
  const window = (t: string) => {
    const start = Math.max(0, p - CONTEXT);
    const end = Math.max(start, t.length - Math.max(0, s - CONTEXT));
    return `${start > 0 ? '…' : ''}${cut(t.slice(start, end), MAX_PART)}${end < t.length ? '…' : ''}`;
  };
  return { from: window(a), to: window(b) };
}

/**
 * The edits that turn list `a` into list `b`, item by item (a longest common subsequence of
 * equal items): an item removed and another added in its place read as one changed.
 */
export function listEdits(a: readonly unknown[], b: readonly unknown[]): Piece[] {
  const x = a.map(itemText);
  const y = b.map(itemText);
  type Op = { op: 'same' } | { op: 'remove'; i: number } | { op: 'add'; j: number };
  const ops: Op[] = [];
  if (x.length * y.length > MAX_LCS) {
    // too long to align: position by position
    for (let k = 0; k < Math.max(x.length, y.length); k++) {
      if (k < x.length && k < y.length && x[k] === y[k]) ops.push({ op: 'same' });
      else {
        if (k < x.length) ops.push({ op: 'remove', i: k });
        if (k < y.length) ops.push({ op: 'add', j: k });
      }
    }
  } else {
    const n = x.length;
    const m = y.length;
    const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) {
        ops.push({ op: 'same' });
        i++;
        j++;
      } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) ops.push({ op: 'add', j: j++ });
      else ops.push({ op: 'remove', i: i++ });
    }
  }
  // a run of removals and additions between two equal items: paired up as changes
  const out: Piece[] = [];
  for (let k = 0; k < ops.length; ) {
    if (ops[k]!.op === 'same') {
      k++;
      continue;
    }
    const removed: number[] = [];
    const added: number[] = [];
    for (; k < ops.length && ops[k]!.op !== 'same'; k++) {
      const o = ops[k]!;
      if (o.op === 'remove') removed.push(o.i);
      else if (o.op === 'add') added.push(o.j);
    }
    const paired = Math.min(removed.length, added.length);
    for (let p = 0; p < paired; p++) out.push({ kind: 'changed', index: added[p]!, ...itemPair(a[removed[p]!], b[added[p]!]) });
    for (const r of removed.slice(paired)) out.push({ kind: 'removed', text: cut(x[r]!, MAX_PART) });
    for (const q of added.slice(paired)) out.push({ kind: 'added', text: cut(y[q]!, MAX_PART) });
  }
  return out;
}

/** The keys `b` added, removed or changed against `a`. */
function mapEdits(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): Piece[] {
  const out: Piece[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!(key in b)) out.push({ kind: 'removed', key, text: cut(itemText(a[key]), MAX_PART) });
    else if (!(key in a)) out.push({ kind: 'added', key, text: cut(itemText(b[key]), MAX_PART) });
    else if (itemText(a[key]) !== itemText(b[key])) out.push({ kind: 'changed', key, ...itemPair(a[key], b[key]) });
  }
  return out;
}

/** Pieces as Markdown for `context` (a table cell or inline code elsewhere): strangers' text through `inert` only. */
export function renderPieces(pieces: readonly Piece[], context: 'code' | 'cell'): string {
  const code = (t: string) => inert(t, context);
  const keyed = (key: string | undefined) => (key === undefined ? '' : `${code(key)}: `);
  return pieces
    .map((p): string => {
      switch (p.kind) {
        case 'absent':
          return '(absent)';
        case 'whole':
          return code(p.text);
        case 'excerpt':
          return `${p.cut.before ? '…' : ''}${code(p.text)}${p.cut.after ? '…' : ''}`;
        case 'size':
          return p.of === 'list' ? `a list of ${p.count}` : `a map of ${p.count} key(s)`;
        case 'added':
          return `+ ${keyed(p.key)}${code(p.text)}`;
        case 'removed':
          return `− ${p.key === undefined ? code(p.text) : code(p.key)}`;
        case 'changed':
          return `${p.index === undefined ? '' : `[${p.index}] `}${keyed(p.key)}${code(p.from)} → ${code(p.to)}`;
        case 'more':
          return `…and ${p.count} more`;
        case 'unchanged':
          return '(unchanged)';
        default:
          return p satisfies never;
      }
    })
    .join(', ');
}
