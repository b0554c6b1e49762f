/**
 * Function results (the KRM Functions Specification's `results`) and kpt's `FunctionResultList`,
 * the file `kpt fn render --results-dir` writes.
 */
import { stringifyYaml } from '@kdelta/kptfile-model';

import type { ResourceChange } from './changes.js';
export type Severity = 'error' | 'warning' | 'info';

/** One entry of a ResourceList's `results`. */
export interface KrmResult {
  readonly message: string;
  readonly severity?: Severity;
  readonly resourceRef?: { readonly apiVersion?: string; readonly kind?: string; readonly name?: string; readonly namespace?: string };
  readonly field?: { readonly path?: string; readonly currentValue?: unknown; readonly proposedValue?: unknown };
  readonly file?: { readonly path?: string; readonly index?: number };
  readonly tags?: Readonly<Record<string, string>>;
}

/** What one function of the pipeline did. */
export interface FunctionResult {
  /** The package whose Kptfile lists the function (a directory of the tree; `''` is its root). */
  readonly package: string;
  /** Where it is in the Kptfile, e.g. `pipeline.mutators[0]`. */
  readonly field: string;
  readonly image?: string;
  readonly exec?: string;
  /** How it ran: `builtin` (kdelta's own implementation), `container` or `exec`. */
  readonly runtime: 'builtin' | 'container' | 'exec';
  readonly exitCode: number;
  readonly results: readonly KrmResult[];
  /** What the function wrote on stderr (failed functions only, as kpt keeps it). */
  readonly stderr?: string;
  /** What a mutator changed, when the render was asked to record it (`RenderOptions.changes`). */
  readonly changes?: readonly ResourceChange[];
  readonly durationMs: number;
}

/** The function as the user wrote it: its image or its exec path. */
export function functionName(r: { readonly image?: string; readonly exec?: string }): string {
  return r.image ?? r.exec ?? '(unnamed function)';
}

/** kpt's `results.yaml`: a `kpt.dev/v1` `FunctionResultList`. */
export function resultsYaml(results: readonly FunctionResult[]): string {
  const exitCode = results.some((r) => r.exitCode !== 0) ? 1 : 0;
  const items = results.map((r) => ({
    ...(r.image !== undefined ? { image: r.image } : { exec: r.exec }),
    ...(r.stderr ? { stderr: r.stderr } : {}),
    exitCode: r.exitCode,
    ...(r.results.length > 0 ? { results: r.results } : {}),
  }));
  return stringifyYaml(
    { apiVersion: 'kpt.dev/v1', kind: 'FunctionResultList', metadata: { name: 'fnresults' }, exitCode, items },
    { lineWidth: 0 },
  );
}

/** One line for a result, as kpt prints it: `[error] apps/v1/Deployment/web .spec.replicas: message`. */
export function resultLine(r: KrmResult): string {
  const ref = r.resourceRef;
  const what = ref
    ? [ref.apiVersion, ref.kind, ref.namespace ? `${ref.namespace}/${ref.name ?? ''}` : ref.name].filter(Boolean).join('/')
    : '';
  const where = [what, r.field?.path].filter(Boolean).join(' ');
  const file = r.file?.path ? ` (${r.file.path}${r.file.index !== undefined && r.file.index > 0 ? ` #${r.file.index}` : ''})` : '';
  return `[${r.severity ?? 'info'}] ${where ? `${where}: ` : ''}${r.message}${file}`;
}
