/**
 * Fields pinned to their local value: `# kdelta:local` on a field's line in the local package
 * keeps that field, and everything under it, as local has it, whatever upstream does.
 */
import { isCollection, isMap, isScalar, isSeq, type Pair } from 'yaml';
import { pairsOf } from '../yaml/nodes.js';

export const PIN_COMMENT = 'kdelta:local';

interface Commented {
  comment?: string | null;
  commentBefore?: string | null;
}

const isPin = (line: string | undefined): boolean => line !== undefined && /^\s*kdelta:local(\s|$)/.test(line);

/**
 * Whether a local pair carries the pin. `key: value # kdelta:local` puts it on the value;
 * `key: # kdelta:local` above a block map or list puts it first in the value's head comment,
 * where the parser also files a comment on the first line inside the block: both pin.
 */
export function isPinnedPair(pair: Pair<unknown, unknown>): boolean {
  const key = pair.key as Commented | null;
  const value = pair.value as Commented | null;
  return isPin(value?.comment ?? undefined) || isPin(key?.comment ?? undefined) || isPin(value?.commentBefore?.split('\n')[0]);
}

/**
 * Pin a pair, as a person writes the pin (the one writer of it; {@link isPinnedPair} reads it):
 * `key: value # kdelta:local` after a scalar or a flow collection, `# kdelta:local` on the first line
 * of a block map or list.
 * A comment already there stays, after the pin.
 */
export function pinPair(pair: Pair<unknown, unknown>): void {
  if (isPinnedPair(pair)) return;
  const value = pair.value;
  const after = (text: string | null | undefined) => (text?.trim() ? `${PIN_COMMENT} ${text.trim()}` : PIN_COMMENT);
  if (isCollection(value) && value.items.length > 0 && !value.flow) {
    // printed on the block's first line, where the parser files it too
    value.commentBefore = value.commentBefore ? ` ${PIN_COMMENT}\n${value.commentBefore}` : ` ${PIN_COMMENT}`;
  } else if (isScalar(value) || isCollection(value)) {
    value.comment = ` ${after(value.comment)}`;
  } else {
    const key = pair.key as Commented | null;
    if (key && typeof key === 'object') key.comment = ` ${after(key.comment)}`;
  }
}

/** Whether a pin is anywhere in a local subtree (for values merged whole). */
export function holdsPinnedPair(node: unknown): boolean {
  if (isMap(node)) return pairsOf(node).some((p) => isPinnedPair(p) || holdsPinnedPair(p.value));
  if (isSeq(node)) return node.items.some(holdsPinnedPair);
  return false;
}

/** A quick test on a document's text before looking at its nodes. */
export function mayHoldPin(text: string): boolean {
  return text.includes(PIN_COMMENT);
}
