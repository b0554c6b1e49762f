import { posix } from 'node:path';
import { mergeKptfile, printKptfile, type Kptfile, type PackageView } from '@kdelta/kptfile-model';
import { KPTFILE, kptfileOf } from '../kptfile.js';
import type { UpdateInput } from './types.js';
import type { Conflict, Decision } from '@kdelta/merge-core';

/** Removes the empty directories under `pkg` (nested packages included) that are not in `keep`, deepest first. */
export function removeEmptyDirs(pkg: PackageView, keep: ReadonlySet<string>): void {
  const walk = (rel: string) => {
    if (!pkg.exists(rel)) return;
    for (const name of pkg.list(rel)) {
      const r = rel ? `${rel}/${name}` : name;
      if (pkg.typeOf(r) !== 'dir') continue;
      walk(r);
      if (!keep.has(r) && pkg.list(r).length === 0) pkg.delete(r);
    }
  };
  walk('');
}

/** Replace the package's own files (not its nested packages) with those of `updated`, keeping local Kptfile bookkeeping. */
export function replacePackageFiles(input: UpdateInput): void {
  const local = input.local.ownFiles();
  const updated = input.updated.ownFiles();
  const localKptfile = input.local.text(KPTFILE);
  for (const f of local.files) if (f.path !== KPTFILE) input.local.delete(f.path);
  for (const f of updated.files) if (f.path !== KPTFILE) input.local.copyFrom(input.updated, f.path);
  for (const d of updated.dirs) input.local.mkdir(d);
  const updatedKptfile = input.updated.text(KPTFILE);
  if (updatedKptfile !== undefined && localKptfile !== undefined) {
    // upstream's Kptfile, with the local name, upstream and lock (the caller sets the new lock)
    input.local.write(
      KPTFILE,
      keepBookkeeping(updatedKptfile, localKptfile, joinPath(input.relPackagePath, KPTFILE), input.isRoot, input.updated.describe(KPTFILE)),
    );
  } else if (updatedKptfile !== undefined) {
    input.local.write(KPTFILE, updatedKptfile);
  }
  removeEmptyDirs(input.local, new Set(updated.dirs));
}

/** `path.join` for the `/`-rooted package paths of messages. */
export function joinPath(base: string, rel: string): string {
  return posix.join(base, rel);
}

/**
 * `updated`'s Kptfile with `local`'s metadata.name, upstream and upstreamLock. A nested package
 * replaced with upstream's version takes the upstream and lock upstream gives it (kpt copies
 * the nested Kptfile whole), so it records the version it now holds.
 */
export function keepBookkeeping(updated: string, local: string, file: string, isRoot: boolean, updatedFile: string): string {
  const u = kptfileOf(updated, updatedFile);
  const l = kptfileOf(local, file).kptfile;
  const next: Kptfile = structuredClone(u.kptfile);
  if (l.metadata?.name !== undefined) next.metadata = { ...next.metadata, name: l.metadata.name };
  // upstream's own `upstream` when it has one (kpt), else the local one; the lock stays local,
  // except for a nested package whose upstream version has one
  if (!next.upstream && l.upstream) next.upstream = l.upstream;
  const upstreamLock = !isRoot && next.upstreamLock ? next.upstreamLock : l.upstreamLock;
  if (upstreamLock) next.upstreamLock = upstreamLock;
  else delete next.upstreamLock;
  // upstream's render results say nothing about this copy: they are cleared
  const status = next.status as (Record<string, unknown> & { conditions?: { type?: string }[] }) | undefined;
  if (status) {
    delete status['renderStatus'];
    if (Array.isArray(status.conditions)) {
      status.conditions = status.conditions.filter((c) => c.type !== 'Rendered');
      if (status.conditions.length === 0) delete status.conditions;
    }
    if (Object.keys(status).length === 0) delete next.status;
  }
  return printKptfile(u, next);
}

/** The Kptfile's 3-way merge (pipeline merge); `upstream`/`upstreamLock` from upstream for nested packages. */
/** Merges the Kptfile into local; returns its conflicts and pins, named by the local Kptfile. */
export function mergeKptfileOf(input: UpdateInput): { conflicts: readonly Conflict[]; decisions: readonly Decision[] } {
  const localKptfile = input.local.text(KPTFILE);
  const updatedKptfile = input.updated.text(KPTFILE);
  if (localKptfile !== undefined && updatedKptfile !== undefined) {
    const originKptfile = input.origin.text(KPTFILE);
    const merged = mergeKptfile(
      { ...(originKptfile !== undefined ? { origin: originKptfile } : {}), upstream: updatedKptfile, local: localKptfile },
      {
        updateUpstream: !input.isRoot,
        // the fetched sides by where they were read from: the update names them (upstream, origin)
        files: {
          local: joinPath(input.relPackagePath, KPTFILE),
          origin: input.origin.describe(KPTFILE),
          upstream: input.updated.describe(KPTFILE),
        },
      },
    );
    if (merged.text !== localKptfile) input.local.write(KPTFILE, merged.text);
    return { conflicts: merged.conflicts, decisions: merged.decisions };
  }
  if (localKptfile === undefined && updatedKptfile !== undefined) input.local.write(KPTFILE, updatedKptfile);
  return { conflicts: [], decisions: [] };
}
