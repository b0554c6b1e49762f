import type { RunReport, VariantResult } from './result.js';
import { renderFailureLine } from '../jobs/render.js';

/** What a run says at its end, computed from its result values: the final table and the JSON report. */

const COLUMNS = ['variant', 'downstream', 'action', 'proposal', 'conflicts'] as const;

function row(r: VariantResult): string[] {
  const proposal = r.proposal ? `${r.proposal.url}${r.proposal.state === 'open' ? '' : ` (${r.proposal.state})`}` : '-';
  const done = r.dryRun && r.writes ? `${r.action} (dry run)` : r.action;
  const action = r.error
    ? `failed: ${r.error.split('\n')[0]}`
    : r.renderFailure
      ? `${done}, ${renderFailureLine(r.renderFailure)}`
      : r.heldBy !== undefined
        ? `${done} (${r.heldBy}: ${r.message?.split('\n')[0] ?? 'held'})`
        : done;
  return [r.variant, r.downstream, action, proposal, String(r.conflictCount)];
}

/** The final table: one line per variant, in name order. */
export function renderTable(report: RunReport): string {
  const rows = [COLUMNS.map((c) => c.toUpperCase()), ...report.results.map(row)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (i === 2 ? Math.min(r[i]!.length, 60) : r[i]!.length))));
  const lines = rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  const failed = report.results.filter((r) => r.error).length;
  const deferred = report.results.filter((r) => r.action === 'deferred').length;
  const budget = report.budget
    ? `, ${deferred} deferred (${report.budget.used} of ${report.budget.limit} API write requests used${report.budget.exhausted ? ': the budget is spent, the next run continues' : ''})`
    : deferred > 0
      ? `, ${deferred} deferred`
      : '';
  const renderFailed = report.results.filter((r) => r.renderFailure).length;
  const unrendered = renderFailed > 0 ? `, ${renderFailed} proposed unrendered (render failed)` : '';
  const summary = `${report.results.length} variant(s), ${failed} failed${unrendered}${budget}${report.dryRun ? ' (dry run: nothing written)' : ''}`;
  return `${lines.join('\n')}\n\n${summary}\n`;
}

/** The JSON report (`--report`): everything as data. */
export function reportJson(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
