import { fieldPath, issueLine, type ControlIssue } from '@kdelta/run';

/** Annotations for control errors: each issue at its file and line in the workflow's checkout. */

export interface Annotation {
  readonly message: string;
  readonly title?: string | undefined;
  readonly file?: string | undefined;
  readonly startLine?: number | undefined;
}

// The line of an issue is the run's to find (the CLI prints it too): one place.
export { fieldPath, issueLine };

/** A ControlError's issues as annotations on the config files (`readText` gives a file's content, or undefined). */
export function controlAnnotations(issues: readonly ControlIssue[], readText: (file: string) => string | undefined): Annotation[] {
  return issues.map((issue) => {
    const text = issue.source.document >= 1 ? readText(issue.source.file) : undefined;
    const startLine = issue.line ?? (text === undefined ? undefined : issueLine(text, issue));
    const what = issue.source.kind ? `${issue.source.kind}${issue.source.name ? ` "${issue.source.name}"` : ''}` : undefined;
    return {
      title: `kdelta: invalid control configuration${what ? ` (${what})` : ''}`,
      message: `${issue.source.document >= 1 ? `document ${issue.source.document}: ` : ''}${issue.field ? `${issue.field}: ` : ''}${issue.message}`,
      file: issue.source.file,
      ...(startLine === undefined ? {} : { startLine }),
    };
  });
}
