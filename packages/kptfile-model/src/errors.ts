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

/** Thrown by the throwing entry points (`parseKptfile`, `readPackage`, `writePackage`). */
export class KptfileError extends Error {
  readonly issues: readonly KptfileIssue[];
  constructor(issues: readonly KptfileIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'KptfileError';
    this.issues = issues;
  }
  /** The first issue's file, for callers that report one location. */
  get file(): string {
    return this.issues[0]?.file ?? '';
  }
  get field(): string {
    return this.issues[0]?.field ?? '';
  }
}

/** `a.b[2].c`, with keys that are not identifiers quoted: `labels["app.kubernetes.io/name"]`. */
export function joinField(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}
