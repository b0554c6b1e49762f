import type { RunReport, VariantResult } from './result.js';
import { renderFailureLine } from '../jobs/render.js';
import { failureGroupLines, groupFailures, type FailureGroup } from './failure-groups.js';
import { rolloutLine } from './rollouts.js';

/** What a run says at its end, computed from its result values: the final table and the JSON report. */

const COLUMNS = ['variant', 'downstream', 'action', 'proposal', 'conflicts'] as const;

/** What a row says went wrong: its error's first line, or its render failure; undefined when nothing did. */
function failureOf(r: VariantResult): string | undefined {
  if (r.error) return r.error.split('\n')[0]!;
  return r.renderFailure ? renderFailureLine(r.renderFailure) : undefined;
}

function row(r: VariantResult, groupOf: (message: string) => FailureGroup | undefined): string[] {
  const proposal = r.proposal ? `${r.proposal.url}${r.proposal.state === 'open' ? '' : ` (${r.proposal.state})`}` : '-';
  const done = r.dryRun && r.writes ? `${r.action} (dry run)` : r.action;
  const failure = failureOf(r);
  // a message several rows share is printed once under the table: the row names it by number
  const group = failure === undefined ? undefined : groupOf(failure);
  const said = group ? (r.error ? `failed [${group.number}]` : `${done}, render failed [${group.number}]`) : undefined;
  // a gate's reason is printed once under the table, for every variant it holds alike
  const held = r.heldBy !== undefined ? `${done} (${r.heldBy})` : done;
  const action = said ?? (r.error ? `failed: ${failure}` : failure ? `${done}, ${failure}` : held);
  return [r.variant, r.downstream, action, proposal, String(r.conflictCount)];
}

/** The final table: one line per variant, in name order, then each failure several variants share, once. */
export function renderTable(report: RunReport): string {
  const { groups, groupOf } = groupFailures(
    report.results.flatMap((r) => {
      const message = failureOf(r);
      return message === undefined ? [] : [{ message, member: `${r.variant} → ${r.downstream}` }];
    }),
  );
  const rows = [COLUMNS.map((c) => c.toUpperCase()), ...report.results.map((r) => row(r, groupOf))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (i === 2 ? Math.min(r[i]!.length, 60) : r[i]!.length))));
  const lines = rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  const shared = groups.length > 0 ? `\nShared by several variants:\n${failureGroupLines(groups).join('\n')}\n` : '';
  const heldLines = heldByGates(report.results);
  const heldSection = heldLines.length > 0 ? `\nHeld by a gate (a later run proposes them):\n${heldLines.join('\n')}\n` : '';
  const failed = report.results.filter((r) => r.error).length;
  const held = report.results.filter((r) => r.heldBy !== undefined).length;
  // deferred by the write budget: a gate's hold is counted on its own
  const deferred = report.results.filter((r) => r.action === 'deferred' && r.heldBy === undefined).length;
  const budget = report.budget
    ? `, ${deferred} deferred (${report.budget.used} of ${report.budget.limit} API write requests used${report.budget.exhausted ? ': the budget is spent, the next run continues' : ''})`
    : deferred > 0
      ? `, ${deferred} deferred`
      : '';
  const renderFailed = report.results.filter((r) => r.renderFailure).length;
  const unrendered = renderFailed > 0 ? `, ${renderFailed} proposed unrendered (render failed)` : '';
  const heldCount = held > 0 ? `, ${held} held by a gate` : '';
  const summary = `${report.results.length} variant(s), ${failed} failed${unrendered}${budget}${heldCount}${report.dryRun ? ' (dry run: nothing written)' : ''}`;
  // the rollouts of the fleet's update policies, one line each, after the table
  const rollouts = (report.rollouts ?? []).map((r) => `${rolloutLine(r)}\n`).join('');
  return `${lines.join('\n')}\n${shared}${heldSection}${rollouts ? `\n${rollouts}` : ''}\n${summary}\n`;
}

/** Each gate's reason once, with the variants it holds for it: `  rollout-wave: <reason>` then `    <variant> → <downstream>`. */
function heldByGates(results: readonly VariantResult[]): string[] {
  const byReason = new Map<string, string[]>();
  for (const r of results) {
    if (r.heldBy === undefined) continue;
    const reason = `${r.heldBy}: ${r.message?.split('\n')[0] ?? 'held'}`;
    const members = byReason.get(reason) ?? [];
    members.push(`${r.variant} → ${r.downstream}`);
    byReason.set(reason, members);
  }
  return [...byReason].flatMap(([reason, members]) => [`  ${reason}`, ...members.map((m) => `    ${m}`)]);
}

/** The JSON report (`--report`): everything as data. */
export function reportJson(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
