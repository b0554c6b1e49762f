// The Markdown summary of a run: counts by class and mode, timing medians, and every disagreement
// grouped by cause.
import { describeDifference } from './compare.mjs';

export const classes = ['agree', 'differ', 'kdelta-failed', 'kpt-failed', 'both-failed', 'harness-error'];

export function median(xs) {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const seconds = (ms) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`);

/** A failure's message without the paths and ids that make each case's text unique. */
export function failureSignature(text = '') {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /error|refus|fail|invalid|twice|cannot/i.test(l))
      .pop() ?? text.split('\n').pop();
  return (line ?? '')
    .replace(/(^|[\s'"(])\/[^\s:'")]+/g, '$1<path>')
    .replace(/\b[0-9a-f]{12,40}\b/g, '<sha>')
    .slice(0, 160);
}

/** The cause a disagreement is grouped under. */
export function groupOf(r) {
  switch (r.class) {
    case 'differ':
      return `differ: ${r.causes.join(' + ')}`;
    case 'kdelta-failed':
      return `kdelta-failed at ${r.kdelta.stage}: ${failureSignature(r.kdelta.error)}`;
    case 'kpt-failed':
      return `kpt-failed at ${r.kpt.stage}: ${failureSignature(r.kpt.error)}`;
    case 'both-failed':
      return `both-failed: kpt at ${r.kpt.stage} (${failureSignature(r.kpt.error)}); kdelta at ${r.kdelta.stage} (${failureSignature(r.kdelta.error)})`;
    case 'harness-error':
      return `harness-error: ${failureSignature(r.error)}`;
    default:
      return r.class;
  }
}

export function markdownReport(s) {
  const rs = s.results;
  const lines = [];
  lines.push('# Release histories: kdelta beside kpt', '');
  lines.push(`${s.started} → ${s.finished}; kpt ${s.kpt}; kdelta ${s.kdelta}.`, '');
  const planned = s.pairs * s.modes.length;
  lines.push(
    `${s.packages} packages, ${s.pairs} ${s.commits ? `commit pairs (the last ${s.commits} change(s) of each package)` : 'release pairs'}, ${rs.length} cases (modes: ${s.modes.join(', ')})` +
      `${rs.length < planned ? ` of ${planned} planned: the run was cut short` : ''}.`,
    '',
  );
  lines.push('| class | ' + s.modes.join(' | ') + ' | all |', '| --- |' + ' ---: |'.repeat(s.modes.length + 1));
  for (const c of classes) {
    const n = (m) => rs.filter((r) => r.class === c && (m === undefined || r.mode === m)).length;
    if (n() === 0 && c === 'harness-error') continue;
    lines.push(`| ${c} | ${s.modes.map((m) => n(m)).join(' | ')} | ${n()} |`);
  }
  lines.push('');
  const ok = (t) => rs.filter((r) => r[t]?.ok);
  const both = rs.filter((r) => r.kpt?.ok && r.kdelta?.ok);
  const total = (r, t) => r[t].getMs + r[t].updateMs;
  lines.push('Median times (each tool a process of its own, cold cache, same case):', '');
  lines.push('| tool | get | update | get + update | get + update, cases both completed |', '| --- | ---: | ---: | ---: | ---: |');
  for (const t of ['kpt', 'kdelta'])
    lines.push(
      `| ${t} | ${seconds(median(ok(t).map((r) => r[t].getMs)))} | ${seconds(median(ok(t).map((r) => r[t].updateMs)))} | ${seconds(
        median(ok(t).map((r) => total(r, t))),
      )} | ${seconds(median(both.map((r) => total(r, t))))} |`,
    );
  lines.push('');

  const groups = new Map();
  for (const r of rs.filter((x) => x.class !== 'agree')) {
    const g = groupOf(r);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(r);
  }
  lines.push(`## Disagreements by cause (${groups.size} groups)`, '');
  for (const [g, members] of [...groups].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))) {
    lines.push(`### ${g} (${members.length})`, '');
    for (const r of members) {
      lines.push(
        `- \`${r.id}\` ${r.repo} ${r.package} ${r.old} → ${r.new} (${r.mode})${r.edits?.length ? `; edits: ${r.edits.join('; ')}` : ''}`,
      );
      for (const d of (r.differences ?? []).slice(0, 4)) lines.push(`  - ${describeDifference(d)}`);
      if ((r.differenceCount ?? 0) > 4) lines.push(`  - … ${r.differenceCount - 4} more`);
      if (r.getDiffers?.length) lines.push(`  - after get already: ${r.getDiffers.slice(0, 2).join(' | ')}`);
    }
    lines.push('');
  }
  const layout = rs.filter((r) => r.layout?.length);
  if (layout.length > 0) {
    lines.push(`## Same data, other files (${layout.length} cases)`, '');
    for (const r of layout)
      lines.push(`- \`${r.id}\` ${r.package}: ${r.layout.map((l) => `${l.where} kpt ${l.kpt}, kdelta ${l.kdelta}`).join('; ')}`);
    lines.push('');
  }
  for (const r of rs) if (r.comments) r.comments = r.comments.filter((c) => !c.where.startsWith('Kptfile.kpt.dev '));
  const commented = rs.filter((r) => r.comments?.length);
  if (commented.length > 0) {
    lines.push(`## Comments that differ (${commented.length} cases; not data, not counted)`, '');
    for (const r of commented) {
      lines.push(`- \`${r.id}\` ${r.repo} ${r.package} ${r.old} → ${r.new} (${r.mode})`);
      for (const c of r.comments.slice(0, 3))
        lines.push(`  - ${c.where}: only kpt [${c.kpt.slice(0, 3).join(' | ')}]; only kdelta [${c.kdelta.slice(0, 3).join(' | ')}]`);
    }
    lines.push('');
  }
  const nulls = rs.filter((r) => r.nullVsAbsent?.length);
  if (nulls.length > 0) {
    lines.push(`## Same data once a null field counts as absent (${nulls.length} cases, counted as agreeing)`, '');
    for (const r of nulls) lines.push(`- \`${r.id}\` ${r.package}: ${r.nullVsAbsent.slice(0, 2).join('; ')}`);
    lines.push('');
  }
  if (s.skipped.length > 0) {
    lines.push(`## Tags left out (${s.skipped.length})`, '');
    const counted = new Map();
    for (const k of s.skipped) {
      const line = `${k.repo} ${k.tag}: ${k.reason}`;
      counted.set(line, (counted.get(line) ?? 0) + 1);
    }
    for (const [line, n] of counted) lines.push(`- ${line}${n > 1 ? ` (${n} packages)` : ''}`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
}
