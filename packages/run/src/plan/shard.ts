import { createHash } from 'node:crypto';
import { RunError } from '../errors.js';

/** One slice of a fan-out: shard `index` (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** Why `text` is not `k/n` with 1 ≤ k ≤ n; undefined when it is. */
export function shardProblem(text: string): string | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || count < 1 || index < 1 || index > count) return `must be k/n with 1 ≤ k ≤ n, e.g. 2/5 (got "${text}")`;
  return undefined;
}

/** `k/n` with 1 ≤ k ≤ n; anything else is an error that says what was expected. */
export function parseShard(text: string): Shard {
  const problem = shardProblem(text);
  if (problem !== undefined) throw new RunError('invalid-option', `--shard ${problem}`);
  const [index, count] = text.trim().split('/').map(Number) as [number, number];
  return { index, count };
}

/**
 * The shard (1-based) a variant belongs to: a hash of its name, so the slice depends on nothing
 * but the name and the count — the same on every machine, whatever order the variants are read in.
 */
export function shardOf(name: string, count: number): number {
  const digest = createHash('sha256').update(name).digest();
  return (digest.readUInt32BE(0) % count) + 1;
}

export function inShard(name: string, shard: Shard | undefined): boolean {
  return shard === undefined || shardOf(name, shard.count) === shard.index;
}
