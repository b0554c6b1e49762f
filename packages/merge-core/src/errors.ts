import { KdeltaError } from '@kdelta/errors';
import type { FieldPath } from './path.js';

/** Which of the three inputs a value or a problem comes from (seed 001's words). */
export type Side = 'origin' | 'upstream' | 'local';

export type MergeInputErrorCode =
  | 'invalid-yaml'
  | 'not-a-mapping'
  | 'duplicate-resource'
  | 'missing-list-key'
  | 'conflicting-kinds'
  | 'unreadable';

/**
 * Bad input: names the file, the document index (0-based, as in the stream) and the reason.
 * Thrown before anything is written, so a failed merge leaves every file as it was.
 */
export class MergeInputError extends KdeltaError {
  override readonly name = 'MergeInputError';
  declare readonly code: MergeInputErrorCode;
  declare readonly file: string;
  declare readonly document: number | undefined;
  /** Why, without the location. */
  readonly reason: string;
  readonly side: Side | undefined;

  constructor(code: MergeInputErrorCode, file: string, document: number | undefined, reason: string, side?: Side, path?: string) {
    // The side is named unless the file name or the reason already says it: the three versions
    // of a file often share their name.
    const named = side === undefined || file.endsWith(`(${side})`) || reason.startsWith(side) || new RegExp(`\\b${side}\\b`).test(reason);
    const where = named ? file : `${file} (${side})`;
    super({ code, file, document, path, message: `${where}${document === undefined ? '' : `: document ${document}`}: ${reason}` });
    this.reason = reason;
    this.side = side;
  }
}

/** The rule that decided a field, named after seed 001's rule list. */
export type RuleName =
  | 'upstream-changed'
  | 'upstream-added'
  | 'upstream-removed'
  | 'explicit-null'
  | 'both-changed-upstream-wins'
  | 'both-changed-local-wins'
  | 'local-only'
  | 'unchanged-upstream'
  | 'deleted-upstream-modified-locally'
  | 'modified-upstream-deleted-locally'
  | 'pinned-local';

export interface ConflictValues {
  readonly origin: unknown;
  readonly upstream: unknown;
  readonly local: unknown;
}

/**
 * A place where local and upstream both changed the same thing. Returned as data, never thrown:
 * a pull request shows reviewers what local change was replaced, and why.
 */
export interface Conflict {
  /** `apps/Deployment default/web`, as printed by `formatIdentity`. */
  readonly resource: string;
  readonly file: string;
  readonly path: string;
  readonly values: ConflictValues;
  readonly rule: RuleName;
  /** Which side's value is in the output. */
  readonly winner: 'upstream' | 'local';
  readonly message: string;
}

/**
 * A field the merge left as local has it because local asked (`# kdelta:local`), though upstream
 * changed it. A decision, not a conflict: nobody has to review it.
 */
export interface Decision {
  readonly resource: string;
  readonly file: string;
  readonly path: string;
  readonly rule: 'pinned-local';
  readonly values: ConflictValues;
  readonly message: string;
}

/** A decision made while walking one value: the resource is filled in by the caller. */
export interface FieldDecision {
  readonly path: FieldPath;
  readonly rule: 'pinned-local';
  readonly values: ConflictValues;
}

/** A FieldDecision with its resource and a message that says what was kept. */
export function formatDecision(d: FieldDecision, resource: string, file: string): Decision {
  const path = d.path.toString();
  return {
    resource,
    file,
    path,
    rule: d.rule,
    values: { origin: toPlainValue(d.values.origin), upstream: toPlainValue(d.values.upstream), local: toPlainValue(d.values.local) },
    message: `${path} is pinned (# kdelta:local): local's ${describeValue(d.values.local)} kept, upstream ${describeValue(d.values.origin)}→${describeValue(d.values.upstream)}`,
  };
}

/** A conflict found while walking one value: the resource is filled in by the caller. */
export interface FieldConflict {
  readonly path: FieldPath;
  readonly values: ConflictValues;
  readonly rule: RuleName;
  readonly winner: 'upstream' | 'local';
}

/** Renders a value for a conflict message: short, one line. */
export function describeValue(value: unknown): string {
  if (value === undefined) return '(absent)';
  const plain = toPlainValue(value);
  if (plain === null) return 'null';
  const text = typeof plain === 'string' ? plain : JSON.stringify(plain);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function toPlainValue(value: unknown): unknown {
  const maybe = value as { toJSON?: () => unknown };
  return typeof maybe?.toJSON === 'function' ? maybe.toJSON() : value;
}

/** A FieldConflict with its resource and a message that says why. */
export function formatConflict(
  c: FieldConflict,
  resource: string,
  file: string,
  winner: 'upstream' | 'local',
  strategy?: string,
): Conflict {
  const o = describeValue(c.values.origin);
  const u = describeValue(c.values.upstream);
  const l = describeValue(c.values.local);
  // With the `fail` strategy nothing is merged, so no side wins.
  const verdict = strategy !== 'fail';
  const message =
    c.rule === 'modified-upstream-deleted-locally'
      ? `upstream changed ${c.path.toString()} and local deleted it${verdict ? '; it stays deleted' : ''}`
      : c.rule === 'deleted-upstream-modified-locally'
        ? `upstream deleted ${c.path.toString()} and local changed it${verdict ? "; local's copy is kept" : ''}`
        : `local changed ${c.path.toString()} ${o}→${l}, upstream ${o}→${u}${verdict ? `; ${winner} wins` : ''}`;
  return {
    resource,
    file,
    path: c.path.toString(),
    values: { origin: toPlainValue(c.values.origin), upstream: toPlainValue(c.values.upstream), local: toPlainValue(c.values.local) },
    rule: c.rule,
    winner,
    message,
  };
}
