/**
 * Line-level diff and three-way patch. The merged document is printed by `yaml`, whose layout
 * may differ from the file's (comment placement, indentation quirks). Printing the untouched
 * document the same way gives a base; the file's own text differs from it only in layout, the
 * merged print only in content. A diff3 of the three keeps every line the merge did not touch
 * byte for byte and takes the printer's lines only where the content changed.
 */

/**
 * Pairs of matching line indexes (a, b) of a common subsequence, in order: the longest one
 * (Myers) for documents of ordinary size; for long ones, lines that occur once in each side
 * anchor the match first (patience diff) and Myers fills the gaps between anchors, because Myers
 * costs the length times the number of differences, quadratic when a long document changes
 * throughout (a ConfigMap of 40,000 keys, a tenth of them changed).
 */
export function matchLines(a: readonly string[], b: readonly string[]): Array<readonly [number, number]> {
  const pairs: Array<readonly [number, number]> = [];
  matchRange(a, b, 0, a.length, 0, b.length, pairs);
  return pairs;
}

/** Ranges with fewer lines than this (both sides together) go to Myers directly. */
const MYERS_LINES = 2000;

function matchRange(
  a: readonly string[],
  b: readonly string[],
  a0: number,
  a1: number,
  b0: number,
  b1: number,
  out: Array<readonly [number, number]>,
): void {
  let start = 0;
  while (a0 + start < a1 && b0 + start < b1 && a[a0 + start] === b[b0 + start]) start++;
  let end = 0;
  while (a1 - end > a0 + start && b1 - end > b0 + start && a[a1 - end - 1] === b[b1 - end - 1]) end++;
  for (let i = 0; i < start; i++) out.push([a0 + i, b0 + i]);
  const [x0, x1, y0, y1] = [a0 + start, a1 - end, b0 + start, b1 - end];
  const anchors = x1 - x0 + (y1 - y0) < MYERS_LINES ? [] : uniqueAnchors(a, b, x0, x1, y0, y1);
  if (anchors.length === 0) out.push(...myers(a, b, x0, x1, y0, y1));
  else {
    let [pa, pb] = [x0, y0];
    for (const [ia, ib] of anchors) {
      matchRange(a, b, pa, ia, pb, ib, out);
      out.push([ia, ib]);
      [pa, pb] = [ia + 1, ib + 1];
    }
    matchRange(a, b, pa, x1, pb, y1, out);
  }
  for (let i = end; i > 0; i--) out.push([a1 - i, b1 - i]);
}

/** Lines that occur exactly once in each range, the longest run of them in the same order (patience). */
function uniqueAnchors(
  a: readonly string[],
  b: readonly string[],
  a0: number,
  a1: number,
  b0: number,
  b1: number,
): Array<readonly [number, number]> {
  const seen = new Map<string, { inA: number; inB: number; atA: number; atB: number }>();
  for (let i = a0; i < a1; i++) {
    const entry = seen.get(a[i]!);
    if (entry) entry.inA++;
    else seen.set(a[i]!, { inA: 1, inB: 0, atA: i, atB: -1 });
  }
  for (let j = b0; j < b1; j++) {
    const entry = seen.get(b[j]!);
    if (entry) {
      entry.inB++;
      entry.atB = j;
    }
  }
  const candidates: Array<readonly [number, number]> = [];
  for (let i = a0; i < a1; i++) {
    const entry = seen.get(a[i]!)!;
    if (entry.inA === 1 && entry.inB === 1) candidates.push([i, entry.atB]);
  }
  // Longest increasing subsequence of the b indexes (candidates are in a's order).
  const tails: number[] = [];
  const previous = new Int32Array(candidates.length).fill(-1);
  for (let c = 0; c < candidates.length; c++) {
    const y = candidates[c]![1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (candidates[tails[mid]!]![1] < y) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[c] = tails[lo - 1]!;
    tails[lo] = c;
  }
  const anchors: Array<readonly [number, number]> = [];
  for (let c = tails.length > 0 ? tails[tails.length - 1]! : -1; c !== -1; c = previous[c]!) anchors.push(candidates[c]!);
  return anchors.reverse();
}

function myers(a: readonly string[], b: readonly string[], a0: number, a1: number, b0: number, b1: number) {
  const n = a1 - a0;
  const m = b1 - b0;
  const out: Array<readonly [number, number]> = [];
  if (n === 0 || m === 0) return out;
  const max = n + m;
  const offset = max;
  const v = new Int32Array(2 * max + 2);
  const trace: Int32Array[] = [];
  let found = false;
  // Each step keeps only the diagonals it can reach (-d..d): memory grows with the square of the
  // number of differences, not with their product with the length of a long document.
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[a0 + x] === b[b0 + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk the trace back to collect the diagonal (matching) moves.
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0 && (x > 0 || y > 0); d--) {
    const vd = trace[d]!; // vd[d + k] is diagonal k before step d
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[d + k - 1]! < vd[d + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[d + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      out.push([a0 + x, b0 + y]);
    }
    if (d > 0) {
      x = prevX;
      y = prevY;
    }
  }
  out.reverse();
  return out;
}

/**
 * diff3 with `base` as the common ancestor: `ours` changed only layout, `theirs` only content.
 * Where both changed the same stretch, content wins.
 */
export function patchLines(ours: readonly string[], base: readonly string[], theirs: readonly string[]): string[] {
  const toOurs = new Int32Array(base.length).fill(-1);
  const toTheirs = new Int32Array(base.length).fill(-1);
  for (const [b, o] of matchLines(base, ours)) toOurs[b] = o;
  for (const [b, t] of matchLines(base, theirs)) toTheirs[b] = t;
  const out: string[] = [];
  let o = 0;
  let b = 0;
  let t = 0;
  const flush = (bEnd: number, oEnd: number, tEnd: number) => {
    const oursRegion = ours.slice(o, oEnd);
    const baseRegion = base.slice(b, bEnd);
    const theirsRegion = theirs.slice(t, tEnd);
    if (equalLines(oursRegion, baseRegion)) out.push(...theirsRegion);
    else if (equalLines(theirsRegion, baseRegion)) out.push(...oursRegion);
    else out.push(...theirsRegion);
  };
  for (let i = 0; i < base.length; i++) {
    const oi = toOurs[i]!;
    const ti = toTheirs[i]!;
    if (oi === -1 || ti === -1 || oi < o || ti < t) continue;
    flush(i, oi, ti);
    out.push(ours[oi]!);
    o = oi + 1;
    b = i + 1;
    t = ti + 1;
  }
  flush(base.length, ours.length, theirs.length);
  return out;
}

function equalLines(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function splitLines(text: string): string[] {
  return text.split('\n');
}
