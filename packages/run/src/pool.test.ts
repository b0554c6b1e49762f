import { describe, expect, it } from 'vitest';
import { pool } from './pool.js';

describe('pool', () => {
  it('runs each item once, in order of the items, also when workers finish together', async () => {
    const seen: number[] = [];
    const out = await pool([1, 2, 3], 2, undefined, async (x) => {
      seen.push(x);
      return x * 2;
    });
    expect(out).toEqual([2, 4, 6]);
    expect(seen.sort()).toEqual([1, 2, 3]);
  });

  it('starts nothing once the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const seen: number[] = [];
    await expect(pool([1, 2], 2, controller.signal, async (x) => void seen.push(x))).rejects.toMatchObject({ code: 'interrupted' });
    expect(seen).toEqual([]);
  });
});
