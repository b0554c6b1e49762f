/**
 * The one positional rule of the merge, for every collection whose elements have an identity: a
 * map's fields, an associative list's items (keyed or set), a Kptfile pipeline's functions. Order
 * is part of a collection's content and merges three ways like any value:
 * - Where local kept origin's relative order, upstream's order is taken: upstream's elements keep
 *   upstream's relative order, and an element only local has stays right after the element it
 *   follows in local. Where both sides inserted after the same element, local's comes first (seed
 *   000, "Newly added upstream function"). So with no local edit the result has upstream's order,
 *   and with nothing new upstream it has local's.
 * - Where local reordered, local's order stays, and each element new to local goes right after
 *   the last of the elements before it upstream and the elements only local has that follow it
 *   there (local's first, as above; else right before the first of those after it).
 * - Where origin had no element (the collection added on both sides), every element was inserted
 *   at the same place: local's come first, in local's order, then upstream's others.
 * kpt appends what upstream added after local's elements instead; README "Differences from kpt".
 */

/** Where an element of the merged collection stands on each side (undefined: not there). */
export interface Placement {
  readonly origin: number | undefined;
  readonly upstream: number | undefined;
  readonly local: number | undefined;
}

/**
 * The merged order of `elements`, given local's elements in local's order followed by the
 * elements new to local: indexes into `elements`, or undefined when that order is already right.
 * `originEmpty`: origin has no element (no collection, or an empty one).
 */
export function mergedOrder(elements: readonly Placement[], originEmpty = false): number[] | undefined {
  const order = originEmpty ? insertedTogether(elements) : keptOriginOrder(elements) ? upstreamOrder(elements) : localOrder(elements);
  return order.every((index, at) => index === at) ? undefined : order;
}

/** Local's elements as local has them, then the others in upstream's order. */
function insertedTogether(elements: readonly Placement[]): number[] {
  const upstreamAt = (i: number) => elements[i]!.upstream ?? Infinity;
  const local = elements.flatMap((e, i) => (e.local === undefined ? [] : [i]));
  const others = elements.flatMap((e, i) => (e.local === undefined ? [i] : []));
  return [...local, ...others.sort((a, b) => upstreamAt(a) - upstreamAt(b) || a - b)];
}

/** Local's elements that origin has are in origin's relative order. */
function keptOriginOrder(elements: readonly Placement[]): boolean {
  let last = -1;
  for (const { origin, local } of elements) {
    if (origin === undefined || local === undefined) continue;
    if (origin < last) return false;
    last = origin;
  }
  return true;
}

/** Upstream's elements by upstream's position; every other element right after the one before it. */
function upstreamOrder(elements: readonly Placement[]): number[] {
  const major = new Float64Array(elements.length);
  const minor = new Float64Array(elements.length);
  let previous = -1;
  let step = 0;
  elements.forEach((element, i) => {
    if (element.upstream !== undefined) {
      previous = element.upstream;
      step = 0;
    } else {
      step++;
    }
    major[i] = previous;
    minor[i] = step;
  });
  return elements.map((_, i) => i).sort((a, b) => major[a]! - major[b]! || minor[a]! - minor[b]! || a - b);
}

/**
 * Local's elements as local has them. Each element new to local goes right after the last, in
 * the merged order, of the elements before it upstream, so that it follows all of them as it
 * does upstream (an element upstream appended is appended), and after the elements local
 * inserted there (local's first on a tie); with none before it, right before the first of those
 * after it; with neither, last.
 */
function localOrder(elements: readonly Placement[]): number[] {
  // Sort keys: local's elements by local's position; a new element just after its anchor's.
  const major = new Float64Array(elements.length);
  const minor = new Float64Array(elements.length);
  const kept: number[] = [];
  const added: number[] = [];
  elements.forEach((element, i) => {
    if (element.local === undefined) {
      added.push(i);
      return;
    }
    major[i] = element.local;
    kept.push(i);
  });
  const upstreamAt = (i: number) => elements[i]!.upstream ?? Infinity;
  const later = (a: number, b: number) => major[a]! > major[b]! || (major[a] === major[b] && minor[a]! > minor[b]!);
  // Local's elements that upstream has, by upstream's position; `last[n]` is the one of the first
  // n+1 that comes last in local, `first[n]` the one of the elements from n on that comes first.
  const byUpstream = kept.filter((i) => elements[i]!.upstream !== undefined).sort((a, b) => upstreamAt(a) - upstreamAt(b));
  const last: number[] = [];
  byUpstream.forEach((i, n) => last.push(n > 0 && later(last[n - 1]!, i) ? last[n - 1]! : i));
  const first: number[] = new Array<number>(byUpstream.length);
  for (let n = byUpstream.length - 1; n >= 0; n--) {
    const i = byUpstream[n]!;
    first[n] = n + 1 < byUpstream.length && later(i, first[n + 1]!) ? first[n + 1]! : i;
  }
  // Where both inserted after the same element, local's comes first: an element new to local
  // goes after the elements only local has that follow its anchor in local (local's `audit`
  // after `auth`, then upstream's `metrics`).
  const inLocalOrder = [...kept].sort((a, b) => major[a]! - major[b]!);
  const afterLocalInsertions = new Map<number, number>();
  for (let k = inLocalOrder.length - 1; k >= 0; k--) {
    const next = inLocalOrder[k + 1];
    const i = inLocalOrder[k]!;
    afterLocalInsertions.set(i, next !== undefined && elements[next]!.upstream === undefined ? afterLocalInsertions.get(next)! : i);
  }
  // New elements in upstream's order: each one placed is before every later one upstream.
  added.sort((a, b) => upstreamAt(a) - upstreamAt(b) || a - b);
  let previous: number | undefined;
  let n = 0;
  for (const i of added) {
    while (n < byUpstream.length && upstreamAt(byUpstream[n]!) < upstreamAt(i)) n++;
    let anchor = n > 0 ? afterLocalInsertions.get(last[n - 1]!) : undefined;
    if (previous !== undefined && (anchor === undefined || later(previous, anchor))) anchor = previous;
    if (anchor !== undefined) {
      major[i] = major[anchor]!;
      minor[i] = minor[anchor]! + 1;
    } else if (n < byUpstream.length && upstreamAt(i) !== Infinity) {
      major[i] = major[first[n]!]!;
      minor[i] = -1;
    } else {
      major[i] = Infinity;
      minor[i] = i;
    }
    previous = i;
  }
  return elements.map((_, i) => i).sort((a, b) => major[a]! - major[b]! || minor[a]! - minor[b]! || a - b);
}
