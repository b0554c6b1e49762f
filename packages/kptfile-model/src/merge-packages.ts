/**
 * The 3-way merge of whole packages (what `kdelta merge3` does): each side read as a package
 * tree (or one file), the resources merged by merge-core, each Kptfile by the Kptfile rules.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import {
  merge3Text,
  MergeInputError,
  mergeFiles,
  type Conflict,
  type ConflictStrategy,
  type Decision,
  type MergeOptions,
  type ResourceReport,
  type SourceFile,
} from '@kdelta/merge-core';
import { mergeKptfile } from './merge.js';
import { PackageTree } from './package-tree.js';
import { KPTFILE_NAME } from './types.js';

/** One side of a 3-way merge: the package files of a directory, or a single file. */
export interface MergeSide {
  /** Paths relative to the directory (`/`-separated, sorted); a single file by its base name. */
  readonly files: readonly SourceFile[];
  readonly directory: boolean;
}

export interface MergeSides {
  readonly origin: MergeSide;
  readonly upstream: MergeSide;
  readonly local: MergeSide;
}

const isMergedFile = (name: string) => name.endsWith('.yaml') || name.endsWith('.yml') || name === KPTFILE_NAME;
const byPath = (a: SourceFile, b: SourceFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * Reads one side: a directory gives every `*.yaml`, `*.yml` and Kptfile below it (`.git` and
 * `node_modules` skipped, symlinks not followed); a file gives itself. A path that cannot be
 * read throws the file system's error (with its `code`).
 */
export function readMergeSide(path: string): MergeSide {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    // not there: reading it as a file says so
  }
  const tree = isDir ? PackageTree.read(realpathSync(path)) : undefined;
  if (!tree) return { files: [{ path: basename(path), text: readFileSync(path, 'utf8') }], directory: false };
  const files: SourceFile[] = [];
  for (const [p, text] of tree.allFiles()) {
    if (isMergedFile(basename(p)) && !p.split('/').includes('node_modules')) files.push({ path: p, text });
  }
  return { files: files.sort(byPath), directory: true };
}

export interface PackageMergeOptions extends MergeOptions {
  /** Each side is one file holding one YAML value (not resources): merge them as one value. */
  readonly single?: boolean;
}

export type PackageMergeReport =
  | {
      /** What happened to each resource. */
      readonly resources: readonly ResourceReport[];
      /** The Kptfiles merged by the Kptfile rules (or added from upstream). */
      readonly kptfiles: readonly string[];
      /** Local files removed because every resource in them was deleted. */
      readonly deletedFiles: readonly string[];
    }
  | { readonly changed: boolean };

export interface PackageMergeResult {
  /** The merged files, in local's layout; a local path missing here and in `deleted` is unchanged. */
  readonly files: readonly SourceFile[];
  readonly deleted: readonly string[];
  readonly conflicts: readonly Conflict[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`) where upstream changed them. */
  readonly decisions: readonly Decision[];
  readonly report: PackageMergeReport;
}

/**
 * Merges local with the change from origin to upstream. Files given alone (not in a directory)
 * are one package file each, matched by local's name. Kptfiles are merged by the Kptfile rules
 * (the pipeline merge of seed 000), the rest as resources. Throws merge-core's and
 * kptfile-model's errors for input that does not parse.
 */
export function mergePackages(sides: MergeSides, options: PackageMergeOptions = {}): PackageMergeResult {
  const { origin, upstream, local } = sides;
  if (options.single) {
    const name = local.files[0]!.path;
    const result = merge3Text(
      { origin: origin.files[0]!.text, upstream: upstream.files[0]!.text, local: local.files[0]!.text },
      {
        ...options,
        file: name,
        files: { origin: `${origin.files[0]!.path} (origin)`, upstream: `${upstream.files[0]!.path} (upstream)`, local: `${name} (local)` },
      },
    );
    return {
      files: [{ path: name, text: result.text }],
      deleted: [],
      conflicts: result.conflicts,
      decisions: result.decisions,
      report: { changed: result.changed },
    };
  }
  const same = (side: MergeSide) =>
    side.directory ? side.files : side.files.map((f) => ({ ...f, path: local.directory ? f.path : local.files[0]!.path }));
  const all = { origin: same(origin), upstream: same(upstream), local: local.files };
  const isKptfile = (f: SourceFile) => basename(f.path) === KPTFILE_NAME;
  const resources = withSideNames(sides, () =>
    mergeFiles(
      {
        origin: all.origin.filter((f) => !isKptfile(f)),
        upstream: all.upstream.filter((f) => !isKptfile(f)),
        local: all.local.filter((f) => !isKptfile(f)),
      },
      options,
    ),
  );
  const kptfiles = mergeKptfiles(all, options.strategy);
  return {
    files: [...resources.files, ...kptfiles.files],
    deleted: resources.deleted,
    conflicts: [...resources.conflicts, ...kptfiles.conflicts],
    decisions: [...resources.decisions, ...kptfiles.decisions],
    report: { resources: resources.report, kptfiles: kptfiles.files.map((f) => f.path), deletedFiles: resources.deleted },
  };
}

/**
 * A file given alone is merged under local's name, so that its resources match; an error in it
 * names the file the user gave for that side.
 */
function withSideNames<T>(sides: MergeSides, merge: () => T): T {
  try {
    return merge();
  } catch (error) {
    if (!(error instanceof MergeInputError) || !error.side || sides[error.side].directory) throw error;
    const real = sides[error.side].files[0]?.path ?? error.file;
    throw new MergeInputError(error.code, `${real} (${error.side})`, error.document, error.reason, error.side, error.path);
  }
}

/** Each Kptfile of local merged with its origin and upstream versions; one only upstream has is added. */
function mergeKptfiles(
  sides: Record<'origin' | 'upstream' | 'local', readonly SourceFile[]>,
  strategy: ConflictStrategy | undefined,
): {
  files: SourceFile[];
  conflicts: Conflict[];
  decisions: Decision[];
} {
  const find = (list: readonly SourceFile[], path: string) => list.find((f) => f.path === path)?.text;
  const files: SourceFile[] = [];
  const conflicts: Conflict[] = [];
  const decisions: Decision[] = [];
  for (const local of sides.local.filter((f) => basename(f.path) === KPTFILE_NAME)) {
    const result = mergeKptfile(
      { origin: find(sides.origin, local.path), upstream: find(sides.upstream, local.path), local: local.text },
      {
        ...(strategy ? { strategy } : {}),
        files: { origin: `${local.path} (original)`, upstream: `${local.path} (updated)`, local: local.path },
      },
    );
    files.push({ path: local.path, text: result.text });
    conflicts.push(...result.conflicts);
    decisions.push(...result.decisions);
  }
  for (const upstream of sides.upstream.filter((f) => basename(f.path) === KPTFILE_NAME)) {
    if (!find(sides.local, upstream.path) && !find(sides.origin, upstream.path)) files.push(upstream);
  }
  return { files, conflicts, decisions };
}
