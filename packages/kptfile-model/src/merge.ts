/**
 * The Kptfile 3-way merge. The Kptfile goes through merge-core's walker like every resource, with
 * a schema (kptfile-schema.ts) that gives the pipeline's functions their identity (seed 000): the
 * same field rules, the same strategies (`upstream-wins`, `local-wins`, `fail`), pins and conflict
 * reports, and local's comments and layout kept. What is not merged:
 * - `upstream` / `upstreamLock` are local's, or (with `updateUpstream`) upstream's where upstream
 *   has them; `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` stay local's.
 */
import {
  merge3Text,
  formatIdentity,
  groupOf,
  parseYamlDocument,
  type Conflict,
  type ConflictStrategy,
  type Decision,
} from '@kdelta/merge-core';
import { isMap, type Document } from 'yaml';
import { KptfileError, type KptfileIssue } from './errors.js';
import { kptfileSchema } from './kptfile-schema.js';
import { readKptfileText, type ParsedKptfile } from './parse.js';
import { pipelineKeyMode, type PipelineKeyMode } from './pipeline-key.js';
import type { Kptfile } from './types.js';

export interface KptfileMergeInput {
  /** The Kptfile as last fetched (upstreamLock's version); absent when the package is new. */
  origin?: string;
  /** Upstream's Kptfile at the version being updated to. */
  upstream?: string;
  /** The local Kptfile. */
  local: string;
}

export interface KptfileMergeOptions {
  /** Take `upstream` and `upstreamLock` from upstream (where upstream has them). */
  updateUpstream?: boolean;
  /** What to do where local and upstream both changed a field; default `upstream-wins`. */
  strategy?: ConflictStrategy;
  /** File names used in errors; default `origin/Kptfile`, `upstream/Kptfile`, `Kptfile`. */
  files?: { origin?: string; upstream?: string; local?: string };
}

export interface KptfileMergeResult {
  /** The merged Kptfile. */
  readonly kptfile: Kptfile;
  /** The merged Kptfile printed over the local document: local comments and order kept. */
  readonly text: string;
  /** How the pipeline's functions were matched. */
  readonly pipelineKey: PipelineKeyMode;
  /** Where local and upstream both changed a field; `resource` and `file` name the local Kptfile. */
  readonly conflicts: readonly Conflict[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`). */
  readonly decisions: readonly Decision[];
}

/** Fields that are local's whatever upstream does (paths from the document root). */
const LOCAL_FIELDS: readonly (readonly string[])[] = [['apiVersion'], ['kind'], ['metadata', 'name'], ['metadata', 'namespace']];
/** Where the package comes from: local's, unless asked to take upstream's. */
const SOURCE_FIELDS: readonly (readonly string[])[] = [['upstream'], ['upstreamLock']];

/** Merges three Kptfiles (texts). Throws `KptfileError` naming the file and field of bad input. */
export function mergeKptfile(input: KptfileMergeInput, options: KptfileMergeOptions = {}): KptfileMergeResult {
  const files = {
    origin: options.files?.origin ?? 'origin/Kptfile',
    upstream: options.files?.upstream ?? 'upstream/Kptfile',
    local: options.files?.local ?? 'Kptfile',
  };
  const issues: KptfileIssue[] = [];
  const parse = (text: string | undefined, file: string): ParsedKptfile | undefined => {
    if (text === undefined) return undefined;
    try {
      return readKptfileText(text, file);
    } catch (e) {
      if (e instanceof KptfileError) issues.push(...e.issues);
      else throw e;
      return undefined;
    }
  };
  const origin = parse(input.origin, files.origin);
  const upstream = parse(input.upstream, files.upstream);
  const local = parse(input.local, files.local);
  if (issues.length > 0 || !local) throw new KptfileError(issues);

  const mode = pipelineKeyMode([origin?.kptfile, upstream?.kptfile, local.kptfile]);
  // The fields the merge must leave as local has them are made local's on the other sides too;
  // with `updateUpstream`, origin's source is local's, so upstream's counts as upstream's change.
  const side = (parsed: ParsedKptfile | undefined, isUpstream: boolean): string | undefined => {
    if (!parsed) return undefined;
    const doc = parsed.document.clone();
    for (const path of LOCAL_FIELDS) copyFrom(local.document, doc, path);
    for (const path of SOURCE_FIELDS) {
      if (!options.updateUpstream || !isUpstream || !doc.hasIn(path)) copyFrom(local.document, doc, path);
    }
    return doc.toString();
  };
  const merged = merge3Text(
    { origin: side(origin, false), upstream: side(upstream, true), local: input.local },
    {
      strategy: options.strategy ?? 'upstream-wins',
      schema: kptfileSchema(mode),
      file: files.local,
      files: { origin: files.origin, upstream: files.upstream, local: files.local },
    },
  );
  const text = keepEmptiedSections(merged.text, origin?.document, upstream?.document, local.document);
  const result = readKptfileText(text, files.local);
  const resource = kptfileIdentity(local.kptfile);
  return {
    kptfile: result.kptfile,
    text,
    pipelineKey: mode,
    conflicts: merged.conflicts.map((c) => ({ ...c, resource, file: files.local })),
    decisions: merged.decisions.map((d) => ({ ...d, resource, file: files.local })),
  };
}

/** The Kptfile's sections that kpt reads into Go struct pointers. */
const SECTIONS = ['info', 'pipeline', 'inventory', 'status'] as const;

/**
 * kpt keeps a section local has and upstream deleted as `{}` once the merge removed everything in
 * it (`info: {}`, `status: {}` after upstream dropped its last readiness gate): kyaml merges a map
 * deleted upstream field by field and leaves it empty, and kpt's struct pointer stays. The merge of
 * resources drops such a map (seed 001); the Kptfile keeps kpt's shape, written where local had it.
 */
function keepEmptiedSections(text: string, origin: Document | undefined, upstream: Document | undefined, local: Document): string {
  if (!origin || !upstream) return text;
  const emptied = SECTIONS.filter((s) => origin.has(s) && !upstream.has(s) && isMap(local.get(s, true)));
  if (emptied.length === 0) return text;
  const merged = parseYamlDocument(text);
  const root = merged.contents;
  if (!isMap(root)) return text;
  const localKeys = isMap(local.contents) ? local.contents.items.map((p) => String((p.key as { value?: unknown })?.value)) : [];
  const edits: { at: number; line: string }[] = [];
  for (const section of emptied) {
    if (merged.has(section)) continue;
    // after the nearest key local has before it that the merge kept; else first
    const before = localKeys.slice(0, localKeys.indexOf(section)).reverse();
    const previous = before.map((k) => root.items.find((p) => (p.key as { value?: unknown })?.value === k)).find(Boolean);
    const end = (previous?.value as { range?: [number, number, number] } | null)?.range?.[2];
    const at = previous && end !== undefined ? lineEndAt(text, end) : 0;
    edits.push({ at, line: `${section}: {}\n` });
  }
  let out = text;
  // sections sharing an insertion point keep local's order
  for (const e of edits.map((e, i) => ({ ...e, i })).sort((a, b) => b.at - a.at || b.i - a.i)) {
    const head = out.slice(0, e.at);
    out = `${head}${head.length > 0 && !head.endsWith('\n') ? '\n' : ''}${e.line}${out.slice(e.at)}`;
  }
  return out;
}

/** `offset` when it starts a line, else the start of the next line (or the end of the text). */
function lineEndAt(text: string, offset: number): number {
  if (offset === 0 || text[offset - 1] === '\n') return offset;
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl + 1;
}

/** Sets `path` in `to` to `from`'s node there (a copy), or removes it where `from` has none. */
function copyFrom(from: Document, to: Document, path: readonly string[]): void {
  const node = from.getIn(path, true);
  if (node === undefined) {
    if (to.hasIn(path)) to.deleteIn(path);
    const parent = to.getIn(path.slice(0, -1), true);
    // A map left empty by the removal goes too, so that it does not count as a change.
    if (path.length > 1 && isMap(parent) && parent.items.length === 0 && !from.hasIn(path.slice(0, -1))) to.deleteIn(path.slice(0, -1));
    return;
  }
  to.setIn(path, (node as { clone?: () => unknown }).clone?.() ?? node);
}

function kptfileIdentity(kf: Kptfile): string {
  return formatIdentity({
    group: groupOf(kf.apiVersion ?? 'kpt.dev/v1'),
    kind: kf.kind ?? 'Kptfile',
    namespace: kf.metadata?.namespace ?? '',
    name: kf.metadata?.name ?? '',
  });
}
