import type { FieldDiff, PkgChange } from '@kdelta/package-update';
import type { UpstreamChanges } from '../jobs/upstream-changes.js';
import { inert, shortName, webLink } from '../markdown.js';
import { changeViews, renderPieces } from './value-diff.js';

/**
 * A proposal's "What upstream changed" section: what upstream changed between the package's lock
 * and the new commit, resource by resource and field by field, and the commits between the two.
 * Everything in it is upstream's text: written through `inert` only.
 */

/** The most lines of resources and fields a body lists (then "…and N more"). */
export const MAX_CHANGE_LINES = 30;

const code = (text: string) => inert(shortName(text), 'code');

/** `path`: `from` → `to`; a long list or map by the edits that make `to` of it. */
function fieldLine(f: FieldDiff): string {
  const v = changeViews(f.before, f.after);
  const size = v.from.length === 1 && v.from[0]!.kind === 'size';
  return `${code(f.path)}: ${size ? renderPieces(v.to, 'code') : `${renderPieces(v.from, 'code')} → ${renderPieces(v.to, 'code')}`}`;
}

function changeLines(changes: readonly PkgChange[]): string[] {
  const lines: string[] = [];
  for (const c of changes) {
    const where = c.subject === c.file ? '' : ` in ${code(c.file)}`;
    lines.push(`- ${c.kind} ${code(c.subject)}${where}`);
    for (const f of c.values) lines.push(`  - ${fieldLine(f)}`);
    // a file that is no resource (or one the diff cannot read field by field): its content changed
    if (c.kind === 'changed' && c.values.length === 0) lines.push('  - its content changed');
  }
  if (lines.length <= MAX_CHANGE_LINES) return lines;
  const shown = lines.slice(0, MAX_CHANGE_LINES);
  // never end on a resource line with none of its fields under it
  while (shown.length > 1 && !shown.at(-1)!.startsWith('  ')) shown.pop();
  return [...shown, `- …and ${lines.length - shown.length} more line(s) of changes`];
}

function commitLines(c: UpstreamChanges): string[] {
  if (c.historyError) return [`Its commits could not be listed: ${inert(c.historyError)}`];
  if (c.commits.length === 0) return ['No commit between the two touches the package (a tag or a branch moved over the same content).'];
  const shown = c.commits.map((k) => {
    const sha = inert(k.sha.slice(0, 12), 'code');
    return `- ${(k.url && webLink(sha, k.url)) ?? sha} by ${inert(shortName(k.name))}: ${code(k.subject)}`;
  });
  const more =
    c.totalCommits === undefined
      ? ['- …the newest ones only: the history between the two commits is longer than kdelta reads']
      : c.totalCommits > c.commits.length
        ? [`- …and ${c.totalCommits - c.commits.length} more`]
        : [];
  return [`Commits that touch the package (${c.totalCommits ?? `${c.commits.length}+`}):`, '', ...shown, ...more];
}

/** The section, whole or (`whole` false, the body is too long) as one line. */
export function upstreamSection(c: UpstreamChanges | undefined, whole: boolean): string[] {
  if (!c) return [];
  const title = '### What upstream changed';
  const from = `From ${inert(c.from.slice(0, 12), 'code')} to ${inert(c.to.slice(0, 12), 'code')}`;
  const counted = `${c.resources.length} resource(s) or file(s) changed upstream`;
  if (!whole) return [title, '', `${from}: ${counted}; the list and the commits are in the run's report.`, ''];
  return [
    title,
    '',
    `${from}: ${counted}.`,
    '',
    ...changeLines(c.resources),
    ...(c.resources.length > 0 ? [''] : []),
    ...commitLines(c),
    '',
  ];
}
