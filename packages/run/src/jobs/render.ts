import { FieldPath } from '@kdelta/merge-core';
import { PackageTree } from '@kdelta/kptfile-model';
import { functionName, renderPackage, resultLine, type FieldStep, type FunctionResult, type RenderOutcome } from '@kdelta/fn-render';
import { inert } from '../markdown.js';

/**
 * A Kptfile pipeline that failed after the update and the mutations (Porch records it on the
 * revision and keeps the package): the proposal carries the package unrendered and says why.
 */
export interface RenderFailureReport {
  /** The failing function as written (image or exec), when one failed. */
  readonly function?: string | undefined;
  /** Its field in the Kptfile, e.g. `pipeline.mutators[0]`. */
  readonly field?: string | undefined;
  /** That Kptfile, relative to the downstream repository. */
  readonly kptfile: string;
  readonly message: string;
  /** The failing function's results, one line each as kpt prints them (at most a few, each short). */
  readonly results: readonly string[];
}

/** The one-line form: what a table row, a commit status and an error column show. */
export function renderFailureLine(f: RenderFailureReport): string {
  const where = f.field ? `${f.kptfile} ${f.field}` : f.kptfile;
  return f.function ? `render failed: function ${f.function} (${where})` : `render failed (${where})`;
}

const MAX_RESULT_LINES = 10;
const MAX_LINE = 300;

function shortText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * What a proposal says of a failed render: the failing function (the last one that ran, when it
 * failed), its Kptfile field, its message and a few of its results, each cut short.
 */
export function renderFailureOf(outcome: Extract<RenderOutcome, { ok: false }>, directory: string): RenderFailureReport {
  const { error } = outcome;
  const last = outcome.results[outcome.results.length - 1];
  const failing = last && last.exitCode !== 0 ? last : undefined;
  const lines = (failing?.results ?? []).map(resultLine);
  if (lines.length === 0 && failing?.stderr) lines.push(...failing.stderr.trim().split('\n').slice(-3));
  const kptfile = [directory, error.package, 'Kptfile'].filter(Boolean).join('/');
  return {
    ...(error.function !== undefined ? { function: error.function } : {}),
    ...(error.field !== undefined ? { field: error.field } : {}),
    kptfile,
    message: shortText(error.message, 1000),
    results: [
      ...lines.slice(0, MAX_RESULT_LINES).map((l) => shortText(l, MAX_LINE)),
      ...(lines.length > MAX_RESULT_LINES ? [`…and ${lines.length - MAX_RESULT_LINES} more`] : []),
    ],
  };
}

/**
 * Porch renders after the clone or update and the mutations: package context and injected values
 * reach the resources only through the pipeline. A package without one comes back as it is; a
 * failing one is reported, and the package is proposed as it stood before the render.
 */
export async function renderFiles(
  options: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly allowExec?: boolean | undefined;
    readonly allowedImages?: readonly string[] | undefined;
    /** Record what each function changed (`functions`). */
    readonly changes?: boolean | undefined;
  },
  files: ReadonlyMap<string, string> | PackageTree,
  directory: string,
  cwd: string,
): Promise<{ ok: true; files: Map<string, string>; functions: readonly FunctionResult[] } | { ok: false; failure: RenderFailureReport }> {
  // A tree the caller already parsed (the variant's) keeps what it parsed: a big file is parsed once.
  const tree = files instanceof PackageTree ? files : PackageTree.fromFiles(files);
  tree.source = directory;
  const rendered = await renderPackage(tree, {
    env: options.env,
    cwd,
    allowExec: options.allowExec === true,
    ...(options.allowedImages !== undefined ? { allowedImages: options.allowedImages } : {}),
    changes: options.changes === true,
  });
  return rendered.ok
    ? { ok: true, files: rendered.tree.allFiles(), functions: rendered.results }
    : { ok: false, failure: renderFailureOf(rendered, directory) };
}

/** A field path as kdelta prints one: `.metadata.labels.team`, `.spec.containers[name="web"].image`. */
function printPath(steps: readonly FieldStep[]): string {
  let path = FieldPath.root;
  for (const s of steps)
    path = typeof s === 'string' ? path.field(s) : typeof s === 'number' ? path.index(s) : path.keyed([['name', s.name]]);
  return path.toString();
}

const MAX_FIELDS = 20;

/**
 * What each function of the pipeline changed, as Markdown list items: the function (its Kptfile
 * field), then each resource it changed, with its file and fields. Functions that changed nothing
 * are left out.
 */
export function renderChangeLines(functions: readonly FunctionResult[], directory: string): string[] {
  const lines: string[] = [];
  for (const f of functions) {
    if (!f.changes || f.changes.length === 0) continue;
    const kptfile = [directory, f.package, 'Kptfile'].filter(Boolean).join('/');
    lines.push(`- ${inert(functionName(f), 'code')} (${inert(kptfile, 'code')} ${inert(f.field, 'code')}):`);
    for (const c of f.changes) {
      const name = c.namespace ? `${c.namespace}/${c.name}` : c.name;
      const file = [directory, c.file].filter(Boolean).join('/');
      const fields = c.whole
        ? c.whole
        : [
            ...c.fields.slice(0, MAX_FIELDS).map((p) => inert(printPath(p), 'code')),
            ...(c.fields.length > MAX_FIELDS ? [`…and ${c.fields.length - MAX_FIELDS} more`] : []),
          ].join(', ') || 'moved';
      lines.push(`  - ${inert(c.kind)} ${inert(name, 'code')} in ${inert(file, 'code')}: ${fields}`);
    }
  }
  return lines;
}
