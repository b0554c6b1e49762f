import { isNode, type YamlNode } from './yaml/nodes.js';
import { parseStream, type SourceDocument } from './yaml/parse.js';
import { createEngine, type MergeOptions } from './options.js';
import { detectLayout, printMergedDocument, printNewDocument } from './emit/print.js';
import { formatConflict, formatDecision, type Conflict, type Decision, MergeInputError, type Side } from './errors.js';

export interface ValueInput {
  readonly origin?: string | undefined;
  readonly upstream?: string | undefined;
  readonly local?: string | undefined;
}

export interface ValueMergeResult {
  /** The merged YAML text; local's own lines wherever the merge did not change them. */
  readonly text: string;
  readonly conflicts: readonly Conflict[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`). */
  readonly decisions: readonly Decision[];
  /** False when the result is exactly the local text. */
  readonly changed: boolean;
}

/**
 * A 3-way merge of one YAML value per side (kyaml's `MergeStrings`): the building block for
 * the Kptfile merge and for `kdelta merge3 --single`.
 */
export function merge3Text(
  input: ValueInput,
  options: MergeOptions & { readonly file?: string; readonly files?: Partial<Record<Side, string>> } = {},
): ValueMergeResult {
  const file = options.file ?? '<value>';
  const fileOf = (side: Side) => options.files?.[side] ?? `${file} (${side})`;
  const docs: Partial<Record<Side, SourceDocument>> = {};
  for (const side of ['origin', 'upstream', 'local'] as const) {
    const text = input[side];
    if (text === undefined) continue;
    const stream = parseStream(text, fileOf(side), side);
    const nonEmpty = stream.documents.filter((d) => !d.empty);
    if (nonEmpty.length > 1) {
      throw new MergeInputError(
        'invalid-yaml',
        fileOf(side),
        nonEmpty[1]!.index,
        'expected a single YAML value, found several documents',
        side,
      );
    }
    if (nonEmpty[0]) docs[side] = nonEmpty[0];
  }
  const engine = createEngine(options);
  const node = (side: Side) => {
    const contents = docs[side]?.doc.contents;
    return isNode(contents) ? (contents as YamlNode) : undefined;
  };
  const result = engine.merge(
    { origin: node('origin'), upstream: node('upstream'), local: node('local') },
    {
      file,
      document: 0,
      files: {
        origin: { file: fileOf('origin'), document: 0 },
        upstream: { file: fileOf('upstream'), document: 0 },
        local: { file: fileOf('local'), document: 0 },
      },
    },
  );
  const conflicts = result.conflicts.map((c) =>
    formatConflict(c, file, file, engine.strategy === 'local-wins' ? 'local' : c.winner, engine.strategy),
  );
  const decisions = result.decisions.map((d) => formatDecision(d, file, file));
  const local = docs.local;
  if (local && result.node === node('local')) return { text: input.local!, conflicts, decisions, changed: false };
  if (result.node === undefined) return { text: '', conflicts, decisions, changed: input.local !== '' };
  const text = local
    ? printMergedDocument(local, result.node)
    : printNewDocument(result.node, detectLayout(input.upstream ?? input.origin ?? ''));
  return { text, conflicts, decisions, changed: text !== input.local };
}
