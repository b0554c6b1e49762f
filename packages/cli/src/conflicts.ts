/**
 * One format for every conflict line the CLI prints (merge3, pkg update, pkg diff):
 *
 *   apps/Deployment web [deployment.yaml]: local changed .spec.replicas 1→3, upstream 1→2; upstream wins
 *
 * built from the conflict's data (resource, file, path, values, winner), not from a message.
 */

/** What the CLI needs of a conflict from @kdelta/merge-core or the Kptfile merge. */
export interface ConflictData {
  readonly resource?: unknown;
  readonly file?: unknown;
  readonly path?: unknown;
  readonly values?: unknown;
  readonly rule?: unknown;
  readonly winner?: unknown;
  readonly message?: unknown;
}

export interface ConflictLineOptions {
  /** Prefix for the file, e.g. the package's directory; default none. */
  readonly dir?: string | undefined;
  /** False with `--on-conflict fail`: nothing was merged, so no side "wins". */
  readonly verdict: boolean;
}

export function conflictLine(c: ConflictData, options: ConflictLineOptions): string {
  const file = typeof c.file === 'string' && c.file !== '' ? c.file : undefined;
  const shownFile = file && options.dir ? `${options.dir}/${file}` : (file ?? options.dir);
  const resource = typeof c.resource === 'string' && c.resource !== '' ? c.resource : undefined;
  const subject = [resource, shownFile ? `[${shownFile}]` : undefined].filter(Boolean).join(' ');
  return `${subject || '(unknown resource)'}: ${detail(c, options.verdict)}`;
}

function detail(c: ConflictData, verdict: boolean): string {
  const values = (c.values ?? {}) as { origin?: unknown; upstream?: unknown; local?: unknown };
  if (c.rule === 'deleted-upstream-modified-locally') {
    return `upstream deleted it and local changed it${verdict ? "; local's copy is kept" : ''}`;
  }
  if (typeof c.path === 'string' && c.values && typeof c.values === 'object') {
    const o = show(values.origin);
    const change = `local changed ${c.path} ${o}→${show(values.local)}, upstream ${o}→${show(values.upstream)}`;
    if (!verdict) return change;
    return `${change}; ${c.winner === 'local' ? 'local' : 'upstream'} wins`;
  }
  return typeof c.message === 'string' ? c.message : JSON.stringify(c);
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
export function conflictReport<C extends ConflictData>(conflicts: readonly C[], lines: (c: C) => string): string {
  if (conflicts.length === 0) return '';
  const n = conflicts.length;
  const heading = `${n} conflict${n === 1 ? '' : 's'} between local and upstream changes:`;
  return `${[heading, ...conflicts.map((c) => `  ${lines(c)}`)].join('\n')}\n`;
}
