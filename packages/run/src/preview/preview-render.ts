import { inert, shortName } from '../markdown.js';
import { conflictTable, MAX_BODY } from '../propose/proposal-body.js';
import { renderFailureLine } from '../jobs/render.js';
import type { PreviewImpact, PreviewReport, PreviewSummary, PreviewVariant, PreviewWave } from './preview.js';

/**
 * A preview as text, pure: aggregates first, details after. Markdown (a pull request comment, a
 * job summary: one collapsed section per affected variant, the proposals' conflict table), a
 * terminal table, or JSON.
 */

export type PreviewFormat = 'markdown' | 'text' | 'json';

export interface RenderPreviewOptions {
  readonly format?: PreviewFormat | undefined;
  /** Markdown: the most characters (default: a pull request body's); sections past it are counted, not shown. */
  readonly limit?: number | undefined;
}

const MOST_COMMON = 5;

/** The order details are shown in: what a reviewer must look at first. */
const ORDER: readonly PreviewImpact[] = ['failed', 'changed', 'created', 'removed', 'orphaned', 'left-alone', 'unchanged'];

/** Untrusted text as inline code, long names shortened. */
function code(text: string): string {
  return inert(shortName(text), 'code');
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The aggregate sentence: "conflicts in 17 of 240 downstreams; the most common fields: …". */
function summarySentence(s: PreviewSummary, mark: (text: string) => string, prose: (text: string) => string = (t) => t): string {
  const parts: string[] = [];
  if (s.conflicted > 0) {
    const fields = s.fields
      .slice(0, MOST_COMMON)
      .map((f) => `${mark(f.path)} (${f.count})`)
      .join(', ');
    const more = s.fields.length > MOST_COMMON ? `, …and ${plural(s.fields.length - MOST_COMMON, 'more field')}` : '';
    parts.push(`conflicts in ${s.conflicted} of ${plural(s.total, 'downstream')}; the most common fields: ${fields}${more}`);
  } else {
    parts.push(`no conflicts in ${plural(s.total, 'downstream')}`);
  }
  if (s.renderFailed > 0) {
    const why = s.renderFailures
      .slice(0, 3)
      .map(
        (f) =>
          `${f.function ? `function ${mark(f.function)}: ` : ''}${prose(firstLine(f.reason))}${s.renderFailures.length > 1 ? ` (${f.count})` : ''}`,
      )
      .join('; ');
    parts.push(`render fails in ${s.renderFailed} (${why}${s.renderFailures.length > 3 ? '; …' : ''})`);
  }
  if (s.created > 0) parts.push(plural(s.created, 'new variant'));
  if (s.removed > 0) parts.push(plural(s.removed, 'removal'));
  if (s.changed > 0) parts.push(`${s.changed} changed`);
  if (s.failed > 0) parts.push(`${s.failed} failed`);
  if (s.leftAlone > 0) parts.push(`${s.leftAlone} left alone`);
  parts.push(`${s.unchanged} unchanged`);
  return parts.join('; ');
}

/** A wave's part of the preview: "wave canary: 2 variants change (1 new), conflicts in 1, 1 unchanged". */
function waveSentence(w: PreviewWave, mark: (text: string) => string): string {
  const s = w.summary;
  const change = s.created + s.changed + s.removed;
  const parts = change > 0 ? [`${plural(change, 'variant')} change${s.created > 0 ? ` (${s.created} new)` : ''}`] : [];
  if (s.conflicted > 0) parts.push(`conflicts in ${s.conflicted}`);
  if (s.renderFailed > 0) parts.push(`render fails in ${s.renderFailed}`);
  if (s.failed > 0) parts.push(`${s.failed} failed`);
  if (s.leftAlone > 0) parts.push(`${s.leftAlone} left alone`);
  if (s.unchanged > 0) parts.push(`${s.unchanged} unchanged`);
  return `wave ${mark(w.name)}: ${parts.length > 0 ? parts.join(', ') : 'nothing'}`;
}

function candidateLine(report: PreviewReport, mark: (text: string) => string): string {
  const c = report.candidate;
  switch (c.kind) {
    case 'upstream-ref':
      return `upstream ${mark(c.repository)} at ${mark(c.ref)} (${mark(c.commit.slice(0, 12))})`;
    case 'control':
      return `the control resources in ${mark(c.config)} as they are in the work tree`;
    default:
      return c satisfies never;
  }
}

/** One variant's line: what happens, how many files, conflicts, the render; `prose` makes strangers' text safe where it goes. */
function variantLine(v: PreviewVariant, prose: (text: string) => string = (t) => t): string {
  const parts: string[] = [v.impact];
  if (v.changes.length > 0) parts.push(plural(v.changes.length, 'file'));
  if (v.conflicts.length > 0) parts.push(plural(v.conflicts.length, 'conflict'));
  if (v.renderFailure) parts.push(prose(renderFailureLine(v.renderFailure)));
  if (v.message && (v.impact === 'failed' || v.impact === 'left-alone')) parts.push(prose(firstLine(v.message)));
  return parts.join(', ');
}

function affected(report: PreviewReport): PreviewVariant[] {
  return report.variants
    .filter((v) => v.impact !== 'unchanged')
    .sort((a, b) => ORDER.indexOf(a.impact) - ORDER.indexOf(b.impact) || b.conflicts.length - a.conflicts.length);
}

function detailsSection(v: PreviewVariant): string {
  // a raw HTML line: Markdown is not read there, so its text is escaped as HTML
  const html = (t: string) => inert(t, 'html');
  const wave = v.wave ? ` (wave ${html(v.wave.name)})` : '';
  const lines = [`<details><summary><b>${html(v.variant)}</b> → ${html(v.downstream)}${wave}: ${variantLine(v, html)}</summary>`, ''];
  if (v.message && (v.impact === 'failed' || v.impact === 'left-alone')) lines.push(inert(v.message), '');
  if (v.renderFailure) {
    const f = v.renderFailure;
    lines.push(`**Render fails** (the proposal would hold the package unrendered): ${code(f.message)}`);
    lines.push(`- in: ${code(f.kptfile)}${f.field ? ` ${code(f.field)}` : ''}`);
    for (const r of f.results) lines.push(`- ${code(r)}`);
    lines.push('');
  }
  if (v.changes.length > 0) {
    for (const c of v.changes) lines.push(`- ${c.status} ${code(c.path)}`);
    lines.push('');
  }
  if (v.resources.length > 0) {
    lines.push('| resource | file | what happened |', '| --- | --- | --- |');
    for (const r of v.resources)
      lines.push(`| ${inert(shortName(r.resource))} | ${inert(shortName(r.file))} | ${r.action}${r.changed ? '' : ' (unchanged)'} |`);
    lines.push('');
  }
  if (v.conflicts.length > 0) lines.push(`**Conflicts (${v.conflicts.length})**`, '', ...conflictTable(v.conflicts), '');
  lines.push('</details>', '');
  return lines.join('\n');
}

function renderMarkdown(report: PreviewReport, limit: number): string {
  const head = [
    `## kdelta preview: ${candidateLine(report, code)}`,
    '',
    `**${summarySentence(report.summary, code, inert)}.**`,
    '',
    // the variants of rollout waves, wave by wave: what each wave would get, in the order they get it
    ...(report.waves && report.waves.length > 0
      ? ['By rollout wave:', '', ...report.waves.map((w) => `- ${waveSentence(w, code)}`), '']
      : []),
    ...report.warnings.map((w) => `> warning: ${inert(w)}`),
    ...(report.warnings.length > 0 ? [''] : []),
  ].join('\n');
  const unchanged = report.variants.filter((v) => v.impact === 'unchanged');
  const footer = `_Computed by kdelta ${report.version} from each downstream's base branch; nothing was written._\n`;
  // the names of the unchanged ones only when there is room left for them
  const unchangedShort = unchanged.length > 0 ? `${plural(unchanged.length, 'variant')} unchanged.\n\n` : '';
  const unchangedFull =
    unchanged.length > 0
      ? `<details><summary>${plural(unchanged.length, 'variant')} unchanged</summary>\n\n${unchanged.map((v) => `${inert(v.variant)} → ${inert(v.downstream)}`).join(', ')}\n\n</details>\n\n`
      : '';
  const sections = affected(report).map(detailsSection);
  const room = limit - head.length - unchangedShort.length - footer.length - 200; // 200: the note on what was left out
  let body = '';
  let shown = 0;
  for (const s of sections) {
    if (body.length + s.length > room) break;
    body += s;
    shown++;
  }
  const left =
    shown < sections.length
      ? `…and ${plural(sections.length - shown, 'more variant')}: \`kdelta preview --json\` (or the job summary) has them all.\n\n`
      : '';
  const fits = head.length + body.length + left.length + unchangedFull.length + footer.length + 1 <= limit;
  const text = `${head}\n${body}${left}${fits ? unchangedFull : unchangedShort}${footer}`;
  // only warnings past all measure get here
  return text.length <= limit ? text : `${text.slice(0, limit - 2)}…\n`;
}

function renderText(report: PreviewReport): string {
  const mark = (t: string) => t;
  // a WAVE column only when update policies put variants in waves: other fleets read as before
  const waved = report.variants.some((v) => v.wave);
  const columns = ['VARIANT', 'DOWNSTREAM', ...(waved ? ['WAVE'] : []), 'IMPACT', 'FILES', 'CONFLICTS', 'RENDER'];
  const rows = affected(report).map((v) => [
    v.variant,
    v.downstream,
    ...(waved ? [v.wave?.name ?? '-'] : []),
    v.impact === 'failed' || v.impact === 'left-alone' ? `${v.impact}: ${firstLine(v.message ?? '')}` : v.impact,
    String(v.changes.length),
    String(v.conflicts.length),
    v.renderFailure ? renderFailureLine(v.renderFailure).replace(/^render /, '') : '-',
  ]);
  const lines = [`Preview of ${candidateLine(report, mark)}`, `${summarySentence(report.summary, mark)}`];
  if (report.waves && report.waves.length > 0) lines.push(`By rollout wave: ${report.waves.map((w) => waveSentence(w, mark)).join('; ')}`);
  lines.push('');
  for (const w of report.warnings) lines.push(`warning: ${w}`);
  if (rows.length > 0) {
    const all = [columns, ...rows];
    const widths = columns.map((_, i) => Math.max(...all.map((r) => Math.min(r[i]!.length, 60))));
    for (const r of all)
      lines.push(
        r
          .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      );
    const conflicted = affected(report).filter((v) => v.conflicts.length > 0);
    if (conflicted.length > 0) {
      lines.push('', 'Conflicts:');
      for (const v of conflicted) {
        for (const c of v.conflicts) {
          const show = (x: unknown) => (x === undefined ? '(absent)' : typeof x === 'string' ? x : JSON.stringify(x));
          lines.push(
            `  ${v.variant}  ${c.resource} ${c.path}: origin ${show(c.values.origin)}, upstream ${show(c.values.upstream)}, local ${show(c.values.local)} (${c.rule}, ${c.winner} kept)`,
          );
        }
      }
    }
  } else {
    lines.push('Nothing to propose: every downstream is unchanged.');
  }
  return `${lines.join('\n')}\n`;
}

/** A preview as Markdown, a terminal table (text) or JSON. */
export function renderPreview(report: PreviewReport, options: RenderPreviewOptions = {}): string {
  const format = options.format ?? 'markdown';
  switch (format) {
    case 'markdown':
      return renderMarkdown(report, options.limit ?? MAX_BODY);
    case 'text':
      return renderText(report);
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    default:
      return format satisfies never;
  }
}
