import { checkpoint } from './context.js';

/** Run items with at most `limit` at a time; results in the items' order. None starts once `signal` is aborted. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      await checkpoint(signal);
      // another worker may have taken the last item while this one waited
      if (next >= items.length) break;
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  // every worker settles before the pool does: no job still runs in the run's directories after it
  const settled = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return out;
}
