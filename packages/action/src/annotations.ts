import { parseYamlStream } from '@kdelta/merge-core';
import type { ControlIssue } from '@kdelta/run';

/** Annotations for control errors: each issue at its file and line in the workflow's checkout. */

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
