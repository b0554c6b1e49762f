import { KdeltaError } from '@kdelta/errors';

/** What went wrong in a Kptfile or package, as data: the file, the field path and why. */
export interface KptfileIssue {
  /** Stable machine-readable reason, e.g. `unknown-field`, `invalid-image`. */
  readonly code: KptfileIssueCode;
  /** The file the issue is in (as given by the caller, usually relative to the package). */
  readonly file: string;
  /** Field path like `pipeline.mutators[2].image`; empty for the whole document. */
  readonly field: string;
  /** Why, in words, with what was expected. */
  readonly message: string;
}

export type KptfileIssueCode =
  | 'yaml-syntax'
  | 'not-utf8'
  | 'not-a-map'
  | 'wrong-type'
  | 'unknown-field'
  | 'invalid-value'
  | 'wrong-kind'
  | 'missing-function'
  | 'invalid-image'
  | 'invalid-config-path'
  | 'conflicting-config'
  | 'invalid-function-config'
  | 'invalid-inventory'
  | 'package-layout';

export function formatIssue(issue: KptfileIssue): string {
  const where = issue.field ? `${issue.file}: ${issue.field}` : issue.file;
  return `${where}: ${issue.message}`;
}

/**
 * Thrown by the throwing entry points (`parseKptfile`, `readPackage`, `writePackage`). Its code,
 * file and path are the first issue's; `issues` has them all.
 */
export class KptfileError extends KdeltaError {
  override readonly name = 'KptfileError';
  declare readonly code: KptfileIssueCode | 'invalid-kptfile';
  declare readonly file: string;
  readonly issues: readonly KptfileIssue[];
  constructor(issues: readonly KptfileIssue[]) {
    const first = issues[0];
    super({
      code: first?.code ?? 'invalid-kptfile',
      file: first?.file ?? '',
      path: first?.field ? fieldPath(first.field) : undefined,
      message: issues.length > 0 ? issues.map(formatIssue).join('\n') : 'invalid Kptfile',
    });
    this.issues = issues;
  }
  /** The first issue's field, as kpt writes it: `pipeline.mutators[2].image`. */
  get field(): string {
    return this.issues[0]?.field ?? '';
  }
}

/** `pipeline.mutators[2]` → `.pipeline.mutators[2]`, the way merge-core prints field paths. */
export function fieldPath(field: string): string {
  return field === '' || field.startsWith('.') || field.startsWith('[') ? field : `.${field}`;
}

/** `a.b[2].c`, with keys that are not identifiers quoted: `labels["app.kubernetes.io/name"]`. */
export function joinField(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}
