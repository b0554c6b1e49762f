import { describe, expect, it } from 'vitest';
import { inShard, parseShard, shardOf } from './shard.js';

describe('shards', () => {
  it('n shards cover every variant exactly once, for any n', () => {
    const names = Array.from({ length: 500 }, (_, i) => `variant-${i}`);
    for (const count of [1, 2, 3, 7, 16]) {
      const hits = new Map<string, number>();
      for (let index = 1; index <= count; index++) {
        for (const name of names) if (inShard(name, { index, count })) hits.set(name, (hits.get(name) ?? 0) + 1);
      }
      expect(names.every((n) => hits.get(n) === 1)).toBe(true);
    }
  });

  it('depends only on the name and the count, and spreads the names', () => {
    expect(shardOf('web', 5)).toBe(shardOf('web', 5));
    const sizes = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) sizes[shardOf(`v${i}`, 4) - 1]!++;
    expect(Math.min(...sizes)).toBeGreaterThan(60);
  });

  it('parses k/n and refuses anything else', () => {
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
    for (const bad of ['0/3', '4/3', '1/0', 'a/b', '2', '1/2/3']) {
      expect(() => parseShard(bad)).toThrow(/--shard must be k\/n/);
      expect(() => parseShard(bad)).toThrow(expect.objectContaining({ name: 'RunError', code: 'invalid-option' }));
    }
  });
});
