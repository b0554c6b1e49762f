/**
 * One format for every conflict line the CLI prints (merge3, pkg update, pkg diff):
 *
 *   apps/Deployment web [deployment.yaml]: local changed .spec.replicas 1→3, upstream 1→2; upstream wins
 *
 * built from the conflict's data (resource, file, path, values, winner), not from a message.
 */
import type { Conflict } from '@kdelta/merge-core';

export interface ConflictLineOptions {
  /** Prefix for the file, e.g. the package's directory; default none. */
  readonly dir?: string | undefined;
  /** False with `--on-conflict fail`: nothing was merged, so no side "wins". */
  readonly verdict: boolean;
}

export function conflictLine(c: Conflict, options: ConflictLineOptions): string {
  const file = c.file !== '' ? c.file : undefined;
  const shownFile = file && options.dir ? `${options.dir}/${file}` : (file ?? options.dir);
  const resource = c.resource !== '' ? c.resource : undefined;
  const subject = [resource, shownFile ? `[${shownFile}]` : undefined].filter(Boolean).join(' ');
  return `${subject || '(unknown resource)'}: ${detail(c, options.verdict)}`;
}

function detail(c: Conflict, verdict: boolean): string {
  // `.`: the resource itself; any other path names an item inside it (a container, a function)
  const whole = c.path === '.';
  if (c.rule === 'deleted-upstream-modified-locally') {
    return `upstream deleted ${whole ? 'it' : c.path} and local changed it${verdict ? "; local's copy is kept" : ''}`;
  }
  if (c.rule === 'modified-upstream-deleted-locally') {
    const deleted = whole ? 'it and local deleted it (or renamed it without a merge comment)' : `${c.path} and local deleted it`;
    return `upstream changed ${deleted}${verdict ? '; it stays deleted' : ''}`;
  }
  const o = show(c.values.origin);
  const change = `local changed ${c.path} ${o}→${show(c.values.local)}, upstream ${o}→${show(c.values.upstream)}`;
  return verdict ? `${change}; ${c.winner} wins` : change;
}

/** A value, short and on one line. */
function show(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (value === null) return 'null';
  const plain = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  const text = typeof plain === 'string' ? plain : JSON.stringify(plain);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The heading and indented lines `pkg update` and `merge3` print on stderr; '' without conflicts. */
export function conflictReport<C extends Conflict>(conflicts: readonly C[], lines: (c: C) => string): string {
  if (conflicts.length === 0) return '';
  const n = conflicts.length;
  const heading = `${n} conflict${n === 1 ? '' : 's'} between local and upstream changes:`;
  return `${[heading, ...conflicts.map((c) => `  ${lines(c)}`)].join('\n')}\n`;
}
