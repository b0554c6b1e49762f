import { parseYamlStream } from '@kdelta/merge-core';
import type { ControlIssue, RunReport, VariantResult } from '@kdelta/run';

/**
 * What the Action shows of a run: its outputs, the job summary, the annotations. Pure renderers
 * of the run's report, unit-tested; main.ts hands their results to the runner.
 */

export type Counted = 'created' | 'updated' | 'closed' | 'unchanged' | 'deferred' | 'failed';

export type Counts = Record<Counted, number>;

/** Which count a result's action adds to (the Action's outputs of the same names). */
export function countedAs(action: string): Counted {
  switch (action) {
    case 'proposed':
    case 'removal-proposed':
    case 'orphan-proposed':
      return 'created';
    case 'updated':
      return 'updated';
    case 'closed':
      return 'closed';
    case 'deferred':
      return 'deferred';
    case 'failed':
      return 'failed';
    default:
      // unchanged, up-to-date, blocked, not-adopted: nothing was written
      return 'unchanged';
  }
}

export function countResults(results: readonly Pick<VariantResult, 'action'>[]): Counts {
  const counts: Counts = { created: 0, updated: 0, closed: 0, unchanged: 0, deferred: 0, failed: 0 };
  for (const r of results) counts[countedAs(r.action)]++;
  return counts;
}

/** One entry of the `pull-requests` output. */
export interface PullRequestEntry {
  readonly variant: string;
  readonly downstream: string;
  readonly action: string;
  readonly url: string | null;
  /** The pull request's number on GitHub; null for the local forge (or a dry run that would open one). */
  readonly number: number | null;
  readonly state: string | null;
  readonly conflicts: number;
  /** The package's render failed: the pull request holds it unrendered and says why. */
  readonly renderFailed: boolean;
}

/**
 * The proposals of a run: every result that has a proposal or, in a dry run, would write one.
 * Results with nothing to propose (up to date, not adopted, failed before proposing) are left out.
 */
export function pullRequests(results: readonly VariantResult[]): PullRequestEntry[] {
  return results
    .filter((r) => r.proposal !== undefined || (r.writes && r.action !== 'failed'))
    .map((r) => ({
      variant: r.variant,
      downstream: r.downstream,
      action: r.action,
      url: r.proposal?.url ?? null,
      number: r.proposal && /^\d+$/.test(r.proposal.id) ? Number(r.proposal.id) : null,
      state: r.proposal?.state ?? null,
      conflicts: r.conflictCount,
      renderFailed: r.renderFailure !== undefined,
    }));
}

/** The one line a render failure gets in the summary's notes. */
function renderFailureNote(f: NonNullable<VariantResult['renderFailure']>): string {
  const where = f.field ? `${f.kptfile} ${f.field}` : f.kptfile;
  return `render failed${f.function ? `: function ${f.function}` : ''} (${where}): ${f.message}; proposed unrendered`;
}

/**
 * GitHub keeps at most 1 MB of a step's outputs: the inline `pull-requests` list stays well under
 * it (the full report is in the file of `report-path`).
 */
export const PULL_REQUESTS_OUTPUT_BYTES = 512 * 1024;

/** The `pull-requests` JSON: every entry, or as many as fit in `maxBytes` (the file has them all). */
export function pullRequestsOutput(entries: readonly PullRequestEntry[], maxBytes = PULL_REQUESTS_OUTPUT_BYTES): string {
  const all = JSON.stringify(entries);
  if (Buffer.byteLength(all) <= maxBytes) return all;
  const kept: string[] = [];
  let bytes = 2; // []
  for (const entry of entries) {
    const text = JSON.stringify(entry);
    const more = Buffer.byteLength(text) + (kept.length > 0 ? 1 : 0);
    if (bytes + more > maxBytes) break;
    kept.push(text);
    bytes += more;
  }
  return `[${kept.join(',')}]`;
}

/** Every output of the Action, as the strings written to GITHUB_OUTPUT (`reportPath`: where the full report was written). */
export function actionOutputs(report: RunReport, reportPath?: string, maxBytes = PULL_REQUESTS_OUTPUT_BYTES): Record<string, string> {
  const counts = countResults(report.results);
  const entries = pullRequests(report.results);
  const inline = pullRequestsOutput(entries, maxBytes);
  return {
    'pull-requests': inline,
    'pull-requests-truncated': String(inline.length < JSON.stringify(entries).length),
    ...(reportPath ? { 'report-path': reportPath } : {}),
    ...Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, String(v)])),
    'render-failed': String(report.results.filter((r) => r.renderFailure !== undefined).length),
  };
}

/**
 * What to do about an error that says the token may not do something (GitHub answers 403 with
 * "Resource not accessible by integration", or names the permission it wanted): the usual cause
 * is the workflow's own token, which reaches only the workflow's repository.
 */
export function permissionHint(error: string): string | undefined {
  // The GitHub forge's own refusals already say what to give the token: nothing to add.
  if (/the token lacks/.test(error)) return undefined;
  const wanted = /(?:X-Accepted-GitHub-Permissions|accepted permissions?)[:=]?\s*"?([a-z_]+=[a-z]+(?:[,; ]+[a-z_]+=[a-z]+)*)/i.exec(
    error,
  )?.[1];
  if (!wanted && !/Resource not accessible by integration|\bpermission|\b403\b|must have (?:push|admin) access/i.test(error))
    return undefined;
  return `the token lacks a permission${wanted ? ` (GitHub wants ${wanted})` : ''}: it needs contents: write and pull-requests: write on every downstream repository. The workflow's own GITHUB_TOKEN reaches only the workflow's repository and only with the job's \`permissions:\`; for other repositories pass a GitHub App installation token or a fine-grained token in the \`token\` input.`;
}

// ---------------------------------------------------------------------------------------------
// The job summary
// ---------------------------------------------------------------------------------------------

/** Text in a Markdown table cell: no line breaks, pipes escaped, HTML inert. */
function cell(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function link(r: VariantResult): string {
  if (!r.proposal) return '';
  const label = /^\d+$/.test(r.proposal.id) ? `#${r.proposal.id}` : r.proposal.id;
  return /^https?:\/\//.test(r.proposal.url)
    ? `[${cell(label)}](${r.proposal.url.replace(/[()\s]/g, encodeURIComponent)})`
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
    for (const r of explained) {
      const notes = [r.error, r.renderFailure ? renderFailureNote(r.renderFailure) : undefined, r.error ? undefined : r.message];
      const text = notes.filter((n) => n !== undefined).join('; ');
      lines.push(`- **${cell(r.variant)}** → ${cell(r.downstream)}: ${cell(text)}`);
    }
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
    lines.push('### Warnings', '', ...report.warnings.map((w) => `- ${cell(w)}`), '');
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Annotations for control errors
// ---------------------------------------------------------------------------------------------

export interface Annotation {
  readonly message: string;
  readonly title?: string | undefined;
  readonly file?: string | undefined;
  readonly startLine?: number | undefined;
}

/** `spec.targets[0].repositorySelector` → ['spec', 'targets', 0, 'repositorySelector']. */
export function fieldPath(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of field.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return out;
    if (m[1]) out.push(m[1]);
    for (const i of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]));
  }
  return out;
}

/**
 * The line an issue points at in `text` (the file's content): the field's line when the field is
 * found, else the document's first line; undefined when the file has no such document.
 */
export function issueLine(text: string, issue: Pick<ControlIssue, 'source' | 'field'>): number | undefined {
  if (issue.source.document < 1) return undefined;
  const doc = parseYamlStream(text)[issue.source.document - 1];
  if (!doc) return undefined;
  if (issue.field) {
    const path = fieldPath(issue.field);
    // the deepest part of the path that exists: a missing field points at its parent
    for (let n = path.length; n > 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) return lineAt(text, node.range[0]);
    }
  }
  const start = doc.contents?.range?.[0] ?? doc.range[0];
  return lineAt(text, start);
}

/** The 1-based line of an offset of `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** A ControlError's issues as annotations on the config files (`readText` gives a file's content, or undefined). */
export function controlAnnotations(issues: readonly ControlIssue[], readText: (file: string) => string | undefined): Annotation[] {
  return issues.map((issue) => {
    const text = issue.source.document >= 1 ? readText(issue.source.file) : undefined;
    const startLine = text === undefined ? undefined : issueLine(text, issue);
    const what = issue.source.kind ? `${issue.source.kind}${issue.source.name ? ` "${issue.source.name}"` : ''}` : undefined;
    return {
      title: `kdelta: invalid control configuration${what ? ` (${what})` : ''}`,
      message: `${issue.source.document >= 1 ? `document ${issue.source.document}: ` : ''}${issue.field ? `${issue.field}: ` : ''}${issue.message}`,
      file: issue.source.file,
      ...(startLine === undefined ? {} : { startLine }),
    };
  });
}
