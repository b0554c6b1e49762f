import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import type { RunReport, VariantResult } from './job.js';

/**
 * Everything a run says, computed from its result values: the proposal body (one text for every
 * forge), the hidden metadata block that makes re-runs cheap, the final table and the JSON report.
 */

/** What a proposal records about itself, hidden in its body so any forge can carry it. */
export interface ProposalMetadata {
  readonly version: string;
  readonly variant: string;
  readonly fingerprint: string;
  /** The commit the proposal's branch points at, and the base commit it was built on. */
  readonly headCommit: string;
  readonly baseCommit: string;
  readonly upstream?:
    | { readonly repo: string; readonly ref: string; readonly commit: string; readonly oldCommit?: string | undefined }
    | undefined;
  readonly conflicts: number;
  readonly kind: 'variant' | 'removal' | 'orphan' | 'update';
}

const METADATA = /<!-- kdelta: (\{.*\}) -->/;

export function renderMetadataBlock(meta: ProposalMetadata): string {
  // `--` may not appear inside an HTML comment: JSON never needs it unescaped.
  return `<!-- kdelta: ${JSON.stringify(meta).replace(/--/g, '-\\u002d')} -->`;
}

export function parseMetadataBlock(body: string): ProposalMetadata | undefined {
  const m = METADATA.exec(body);
  if (!m) return undefined;
  try {
    const v = JSON.parse(m[1]!) as ProposalMetadata;
    return typeof v === 'object' && v !== null && typeof v.fingerprint === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface FileChange {
  readonly status: 'added' | 'modified' | 'deleted';
  /** Path relative to the downstream repository. */
  readonly path: string;
}

export interface ProposalBodyInput {
  readonly title: string;
  readonly summary: string;
  readonly downstream: { readonly repo: string; readonly branch: string; readonly directory: string };
  readonly changes: readonly FileChange[];
  readonly resources: readonly ResourceReport[];
  readonly conflicts: readonly Conflict[];
  readonly metadata: ProposalMetadata;
}

/** GitHub refuses bodies over 65536 characters; the body degrades to stay under it. */
export const MAX_BODY = 60_000;

function code(text: string): string {
  const t = text.replace(/\n/g, ' ');
  return t.includes('`') ? `\`\` ${t} \`\`` : `\`${t}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function value(v: unknown): string {
  if (v === undefined) return '(absent)';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return code(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}

export function renderProposalBody(input: ProposalBodyInput): string {
  const { metadata: meta } = input;
  const head: string[] = [`## ${input.title}`, '', input.summary, ''];
  const provenance: string[] = ['### Provenance', ''];
  if (meta.upstream) {
    provenance.push(
      `- upstream: ${code(meta.upstream.repo)} at ${code(meta.upstream.ref)}`,
      `- commit: ${meta.upstream.oldCommit && meta.upstream.oldCommit !== meta.upstream.commit ? `${code(meta.upstream.oldCommit.slice(0, 12))} → ` : ''}${code(meta.upstream.commit.slice(0, 12))}`,
    );
  }
  provenance.push(
    `- downstream: ${code(input.downstream.repo)} ${code(input.downstream.directory || '/')} into ${code(input.downstream.branch)}`,
    `- variant: ${code(meta.variant)}, kdelta ${meta.version}`,
    '',
  );
  const footer = [
    '---',
    '_Written by kdelta; edit the control resources, not this text: a re-run replaces it._',
    renderMetadataBlock(meta),
    '',
  ];

  const changes: string[] = ['### What changed', ''];
  if (input.changes.length === 0) changes.push('Nothing in the package files.');
  for (const c of input.changes) changes.push(`- ${c.status} ${code(c.path)}`);
  const touched = input.resources.filter((r) => r.changed || r.action !== 'merged');
  if (touched.length > 0) {
    changes.push('', '| resource | file | what happened |', '| --- | --- | --- |');
    for (const r of touched) changes.push(`| ${cell(r.resource)} | ${cell(r.file)} | ${r.action}${r.changed ? '' : ' (unchanged)'} |`);
  }
  changes.push('');

  const conflictLines = (limit: number): string[] => {
    if (input.conflicts.length === 0) return [];
    const out = [
      `### Conflicts (${input.conflicts.length})`,
      '',
      'Upstream and the downstream both changed these fields; the rule says which value is in this proposal.',
      '',
      '| resource | field | origin | upstream | local | rule | kept |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    ];
    for (const c of input.conflicts.slice(0, limit)) {
      out.push(
        `| ${cell(c.resource)} | ${code(c.path)} | ${value(c.values.origin)} | ${value(c.values.upstream)} | ${value(c.values.local)} | ${c.rule} | ${c.winner} |`,
      );
    }
    if (input.conflicts.length > limit) out.push('', `…and ${input.conflicts.length - limit} more (see the run's JSON report).`);
    out.push('');
    return out;
  };

  let limit = input.conflicts.length;
  for (;;) {
    const text = [...head, ...changes, ...conflictLines(limit), ...provenance, ...footer].join('\n');
    if (text.length <= MAX_BODY || limit === 0) return text.length <= MAX_BODY ? text : [...head, ...provenance, ...footer].join('\n');
    limit = Math.floor(limit / 2);
  }
}

const COLUMNS = ['variant', 'downstream', 'action', 'proposal', 'conflicts'] as const;

function row(r: VariantResult): string[] {
  const proposal = r.proposal ? `${r.proposal.url}${r.proposal.state === 'open' ? '' : ` (${r.proposal.state})`}` : '-';
  const action = r.error ? `failed: ${r.error.split('\n')[0]}` : r.dryRun && r.writes ? `${r.action} (dry run)` : r.action;
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
  const summary = `${report.results.length} variant(s), ${failed} failed${report.dryRun ? ' (dry run: nothing written)' : ''}`;
  return `${lines.join('\n')}\n\n${summary}\n`;
}

/** The JSON report (`--report`): everything as data. */
export function reportJson(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
