import { KdeltaError } from '@kdelta/errors';
import { parseYamlStream } from '@kdelta/merge-core';
import type { KubeObject } from '@kdelta/variant-engine';

/**
 * What a problem with the control resources is made of: where a document came from, an issue with
 * one of its fields, the one error that carries them all, and the Repository as the run reads it.
 * A leaf of the run: the control loader and the policy checks both use it, and neither is imported here.
 */

/** Where a control document came from: printed in front of every problem with it. */
export interface Source {
  /** Path relative to the directory the run was started in. */
  readonly file: string;
  /** 1-based document number in the file. */
  readonly document: number;
  readonly kind?: string | undefined;
  readonly name?: string | undefined;
}

export function describeSource(s: Source): string {
  const what = s.kind ? ` (${s.kind}${s.name ? ` "${s.name}"` : ''})` : '';
  return `${s.file}: document ${s.document}${what}`;
}

export interface ControlIssue {
  readonly source: Source;
  /** Field path inside the document (`spec.git.repo`), when the problem is one field. */
  readonly field?: string | undefined;
  readonly message: string;
  /** The 1-based line of the field (else of the document) in the file, when the file was read. */
  readonly line?: number | undefined;
}

export function formatIssue(issue: ControlIssue): string {
  return `${describeSource(issue.source)}: ${issue.field ? `${issue.field}: ` : ''}${issue.message}${issue.line === undefined ? '' : ` (line ${issue.line})`}`;
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
      const rest = path.slice(n);
      // a key with dots in it (the label `kdelta.dev/wave` of `metadata.labels.kdelta.dev/wave`)
      const dotted = rest.length > 1 && rest.every((p) => typeof p === 'string') ? [...path.slice(0, n), rest.join('.')] : undefined;
      for (const at of dotted ? [dotted, path.slice(0, n)] : [path.slice(0, n)]) {
        const node = doc.getIn(at, true) as { range?: [number, number, number] } | undefined;
        if (node && typeof node === 'object' && node.range) return lineOf(text, node.range[0]);
      }
    }
  }
  const start = doc.contents?.range?.[0] ?? doc.range[0];
  return lineOf(text, start);
}

/** The issues with their lines, from the control files' texts (display path → content). */
export function withLines(issues: readonly ControlIssue[], texts: ReadonlyMap<string, string> | undefined): ControlIssue[] {
  return issues.map((issue) => {
    const text = issue.line === undefined ? texts?.get(issue.source.file) : undefined;
    const line = text === undefined ? undefined : issueLine(text, issue);
    return line === undefined ? issue : { ...issue, line };
  });
}

/** The same problem said once: a template that fails alike for many targets is one issue. */
function distinct(issues: readonly ControlIssue[]): ControlIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = formatIssue(i);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The control configuration is wrong: every problem found, each naming file, document and field.
 * `file`, `document` and `path` are the first problem's.
 */
export class ControlError extends KdeltaError {
  override readonly name = 'ControlError';
  declare readonly code: 'invalid-control-config';
  readonly issues: readonly ControlIssue[];
  /** `texts`: the control files' contents by display path, so that each issue names its line. */
  constructor(found: readonly ControlIssue[], texts?: ReadonlyMap<string, string>) {
    const issues = distinct(withLines(found, texts));
    const first = issues[0];
    super({
      code: 'invalid-control-config',
      message:
        issues.length === 1
          ? `invalid control configuration: ${formatIssue(issues[0]!)}`
          : `invalid control configuration (${issues.length} problems):\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`,
      file: first?.source.file,
      document: first?.source.document,
      path: first?.field ? `.${first.field}` : undefined,
    });
    this.issues = issues;
  }
}

export interface RepositorySpec {
  readonly name: string;
  readonly namespace: string;
  /** `spec.git.repo`: URL or local path (relative paths resolved against the control directory's parent). */
  readonly repo: string;
  /** `spec.git.branch` (Porch's default: `main`). */
  readonly branch: string;
  /** `spec.git.directory`, without leading or trailing `/` ('' for the root). */
  readonly directory: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly object: KubeObject;
  readonly source: Source;
}

export interface Sourced<T> {
  readonly value: T;
  readonly source: Source;
}

export function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
