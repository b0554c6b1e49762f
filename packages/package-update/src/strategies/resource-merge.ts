import type { PackageView, TreeFile } from '@kdelta/kptfile-model';
import { mergeFiles } from '@kdelta/merge-core';
import { KPTFILE, kptfileOf, krmFileTest } from '../kptfile.js';
import { mergeKptfileOf } from './replace.js';
import { type UpdateInput, type UpdateOutcome, nothing } from './types.js';

/**
 * Non-KRM files, file by file (kpt's ReplaceNonKRMFiles): added upstream → added; changed
 * upstream and unchanged locally → upstream's; deleted upstream and unchanged locally → deleted;
 * changed locally → kept. YAML files a `.krmignore` names are among them.
 */
export function replaceNonKrmFiles(input: { local: PackageView; updated: PackageView; origin: PackageView }): void {
  const { local: localPkg, updated: updatedPkg, origin: originPkg } = input;
  const isKrm = krmFileTest(localPkg, originPkg, updatedPkg);
  const isNonKrm = (f: TreeFile) => !isKrm(f.path) && f.path !== KPTFILE;
  const origin = new Map(
    originPkg
      .ownFiles()
      .files.filter(isNonKrm)
      .map((f) => [f.path, f.text]),
  );
  const updated = new Map(
    updatedPkg
      .ownFiles()
      .files.filter(isNonKrm)
      .map((f) => [f.path, f.text]),
  );
  const local = new Map(
    localPkg
      .ownFiles()
      .files.filter(isNonKrm)
      .map((f) => [f.path, f.text]),
  );
  for (const path of updated.keys()) {
    const o = origin.get(path);
    const l = local.get(path);
    if (l === undefined) {
      if (o === undefined) localPkg.copyFrom(updatedPkg, path); // added upstream (copied: bytes, not text)
      continue; // deleted locally: stays deleted
    }
    if (o !== undefined && l === o) localPkg.copyFrom(updatedPkg, path); // unchanged locally
  }
  for (const [path, o] of origin) {
    if (updated.has(path)) continue;
    const l = local.get(path);
    if (l !== undefined && l === o) localPkg.delete(path);
  }
  // directories gone upstream that are empty locally go too
  const updatedDirs = new Set(updatedPkg.ownFiles().dirs);
  const originDirs = originPkg.ownFiles().dirs;
  for (const d of [...originDirs].sort().reverse()) {
    if (!updatedDirs.has(d) && localPkg.exists(d) && localPkg.list(d).length === 0 && localPkg.typeOf(d) === 'dir') localPkg.delete(d);
  }
  for (const d of updatedDirs) {
    if (!localPkg.exists(d) && !originDirs.includes(d)) localPkg.mkdir(d);
  }
}

/**
 * A nested package whose local Kptfile points somewhere else than it did at origin was re-pointed
 * by the user: kpt leaves it alone.
 */
export function upstreamRepointed(input: UpdateInput): boolean {
  const local = input.local.text(KPTFILE);
  const origin = input.origin.text(KPTFILE);
  if (local === undefined || origin === undefined) return false;
  const l = kptfileOf(local, input.local.describe(KPTFILE)).kptfile.upstream;
  const o = kptfileOf(origin, input.origin.describe(KPTFILE)).kptfile.upstream;
  if (!o?.git || !l?.git) return false;
  return JSON.stringify(l.git) !== JSON.stringify(o.git);
}

/**
 * The merge names a bad file by its path in the package; one of a fetched side (upstream, origin)
 * gets where that side was read from in front (`describe`), which the update turns into the
 * side's name (`upstream (<repo>/<dir>@<ref>): cm.yaml: ...`).
 */
function atSidePath<T>(input: UpdateInput, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    const e = error as Error & { side?: unknown; file?: unknown };
    const side = e.side === 'upstream' ? input.updated : e.side === 'origin' ? input.origin : undefined;
    if (side !== undefined && typeof e.file === 'string' && e.message.startsWith(e.file)) {
      e.message = `${side.describe(e.file)}${e.message.slice(e.file.length)}`;
    }
    throw error;
  }
}

/** resource-merge: a 3-way merge of the resources, the Kptfile, and the non-KRM files. */
export function resourceMerge(input: UpdateInput): UpdateOutcome {
  if (!input.isRoot && upstreamRepointed(input)) return nothing;
  const isKrm = krmFileTest(input.local, input.origin, input.updated);
  const krm = (pkg: PackageView) =>
    pkg
      .ownFiles()
      .files.filter((f) => isKrm(f.path))
      .map((f) => ({ path: f.path, text: pkg.yamlText(f.path)! }));
  const local = krm(input.local);
  // Every file of every side goes to the merge, those upstream left as they were too: leaving
  // them out would hide a resource's other copy (one resource in two files is matched file by
  // file). The merge reads each distinct file once.
  const origin = krm(input.origin);
  const upstream = krm(input.updated);
  const result = atSidePath(input, () =>
    mergeFiles(
      { origin, upstream, local, parsed: input.parsed, identified: input.identified },
      { strategy: 'upstream-wins', inferKeys: true },
    ),
  );
  const kept = new Set(result.files.map((f) => f.path));
  for (const f of local) if (!kept.has(f.path)) input.local.delete(f.path);
  const before = new Map(local.map((f) => [f.path, f.text]));
  for (const f of result.files) if (before.get(f.path) !== f.text) input.local.write(f.path, f.text);

  const kptfile = mergeKptfileOf(input);
  replaceNonKrmFiles(input);
  return {
    conflicts: [...result.conflicts, ...kptfile.conflicts],
    resources: result.report,
    packages: [],
    decisions: [...result.decisions, ...kptfile.decisions],
  };
}
