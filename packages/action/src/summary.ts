import { countResults, type Counted, groupFailures, inert, type RunReport, shortName, type VariantResult } from '@kdelta/run';

/** The job summary: the run's report as Markdown for the workflow run's page. */

/** The one line a render failure gets in the summary's notes. */
function renderFailureNote(f: NonNullable<VariantResult['renderFailure']>): string {
  const where = f.field ? `${f.kptfile} ${f.field}` : f.kptfile;
  return `render failed${f.function ? `: function ${f.function}` : ''} (${where}): ${f.message}; proposed unrendered`;
}

/** Strangers' text in a line or a table cell: no element, link, image or mention; long names shortened. */
function cell(text: string): string {
  return inert(shortName(text));
}

/** Text inside a raw HTML line (a `<summary>`), where Markdown is not read. */
function html(text: string): string {
  return inert(text, 'html');
}

function link(r: VariantResult): string {
  if (!r.proposal) return '';
  const label = /^\d+$/.test(r.proposal.id) ? `#${r.proposal.id}` : cell(r.proposal.id);
  return /^https?:\/\//.test(r.proposal.url)
    ? `[${label}](${r.proposal.url.replace(/[()\s]/g, encodeURIComponent)})`
    : cell(r.proposal.url);
}

function conflictText(value: unknown): string {
  if (value === undefined) return '(absent)';
  return JSON.stringify(value);
}

/** Shown in bold in the summary: nothing was proposed and someone may want to look. */
const NEEDS_ATTENTION: ReadonlySet<string> = new Set(['failed', 'blocked', 'deferred']);

export interface SummaryOptions {
  /** The heading's subject, e.g. the config directory. */
  readonly title?: string | undefined;
}

/** The job summary: totals, one row per result, then each conflict report in a `<details>`. */
export function renderSummary(report: RunReport, options: SummaryOptions = {}): string {
  const counts = countResults(report.results);
  const lines: string[] = [];
  lines.push(`## kdelta${options.title ? `: ${cell(options.title)}` : ''}${report.dryRun ? ' (dry run: nothing written)' : ''}`, '');
  const totals = (Object.entries(counts) as [Counted, number][]).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`);
  const unrendered = report.results.filter((r) => r.renderFailure !== undefined).length;
  if (unrendered > 0) totals.push(`${unrendered} proposed unrendered (render failed)`);
  lines.push(report.results.length === 0 ? 'No variant to run.' : `${report.results.length} result(s): ${totals.join(', ')}.`, '');
  if (report.budget) {
    lines.push(
      `API budget: ${report.budget.used} of ${report.budget.limit} used${report.budget.exhausted ? ' — exhausted: the deferred variants run next time' : ''}.`,
      '',
    );
  }
  // a web address only (the local forge's is a path in the workspace)
  const dashboard = report.dashboard?.url;
  if (dashboard && /^https?:\/\/[^\s()<>[\]]+$/.test(dashboard)) lines.push(`Fleet dashboard: [${dashboard}](${dashboard}).`, ''); // the forge's own URL, of the shape checked
  if (report.results.length > 0) {
    lines.push('| Variant | Downstream | Action | Pull request | Conflicts |', '| --- | --- | --- | --- | --- |');
    for (const r of report.results) {
      const action = r.renderFailure ? `**${r.action}, render failed**` : NEEDS_ATTENTION.has(r.action) ? `**${r.action}**` : r.action;
      lines.push(`| ${cell(r.variant)} | ${cell(r.downstream)} | ${action} | ${link(r)} | ${r.conflictCount > 0 ? r.conflictCount : ''} |`);
    }
    lines.push('');
  }
  const explained = report.results.filter(
    (r) => r.error !== undefined || r.renderFailure !== undefined || (r.message !== undefined && r.action !== 'up-to-date'),
  );
  if (explained.length > 0) {
    lines.push('### Notes', '');
    const noted = explained.map((r) => {
      const notes = [r.error, r.renderFailure ? renderFailureNote(r.renderFailure) : undefined, r.error ? undefined : r.message];
      return { r, text: notes.filter((n) => n !== undefined).join('; ') };
    });
    // a note several results share (one refusal, one failing function) is written once, the results under it
    const { groups, groupOf } = groupFailures(noted.map(({ r, text }) => ({ message: text, member: `${r.variant} ${r.downstream}` })));
    for (const g of groups) {
      lines.push(`- ${g.members.length} variant(s): ${inert(g.message)}`);
      for (const { r, text } of noted) if (groupOf(text) === g) lines.push(`  - **${cell(r.variant)}** → ${cell(r.downstream)}`);
    }
    for (const { r, text } of noted) if (!groupOf(text)) lines.push(`- **${cell(r.variant)}** → ${cell(r.downstream)}: ${inert(text)}`);
    lines.push('');
  }
  for (const r of report.results.filter((x) => x.conflicts.length > 0)) {
    lines.push(
      '<details>',
      `<summary>${html(r.variant)} → ${html(r.downstream)}: ${r.conflicts.length} conflict(s)</summary>`,
      '',
      '| Resource | File | Field | Original | Upstream | Local | Kept |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...r.conflicts.map(
        (c) =>
          `| ${cell(c.resource)} | ${cell(c.file)} | ${cell(c.path)} | ${cell(conflictText(c.values.origin))} | ${cell(conflictText(c.values.upstream))} | ${cell(conflictText(c.values.local))} | ${c.winner} |`,
      ),
      '',
      '</details>',
      '',
    );
  }
  if (report.warnings.length > 0) {
    lines.push('### Warnings', '', ...report.warnings.map((w) => `- ${inert(w)}`), '');
  }
  return `${lines.join('\n')}\n`;
}
