/**
 * Line-level diff and three-way patch. The merged document is printed by `yaml`, whose layout
 * may differ from the file's (comment placement, indentation quirks). Printing the untouched
 * document the same way gives a base; the file's own text differs from it only in layout, the
 * merged print only in content. A diff3 of the three keeps every line the merge did not touch
 * byte for byte and takes the printer's lines only where the content changed.
 */

/** Pairs of matching line indexes (a, b) of a longest common subsequence, in order (Myers). */
export function matchLines(a: readonly string[], b: readonly string[]): Array<readonly [number, number]> {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const pairs: Array<readonly [number, number]> = [];
  for (let i = 0; i < start; i++) pairs.push([i, i]);
  pairs.push(...myers(a, b, start, endA, start, endB));
  for (let i = 0; endA + i < a.length; i++) pairs.push([endA + i, endB + i]);
  return pairs;
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
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
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
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[offset + prevK]!;
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
