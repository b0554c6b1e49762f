import { cpSync, mkdirSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { type Kptfile, mergeKptfile, printKptfile, readKptfileText } from '@kdelta/kptfile-model';
import { changedFiles, readIf, sameFile, treeUnchanged } from './compare.js';
import { type Conflict, KdeltaError, mergeFiles } from '@kdelta/merge-core';
import { type UpdateStrategy, isUpdateStrategy, updateStrategies } from './strategy.js';
import { KPTFILE, type PkgFile, exists, hasUpstream, isKrmPath, packageFiles, subpackagePaths } from './tree.js';
import { copyTree } from './fs-util.js';
import { readKptfile } from './kptfile.js';

/** One package's three versions, as kpt's updaters receive them. */
export interface UpdateInput {
  readonly localPath: string;
  readonly updatedPath: string;
  /** May not exist (a package fetched without a lock). */
  readonly originPath: string;
  /** `/` for the root of the update, else the package's path relative to it. */
  readonly relPackagePath: string;
  readonly isRoot: boolean;
}

export interface UpdateOutcome {
  /** Conflicts, `package` naming the nested package they are in (absent for the package itself). */
  readonly conflicts: readonly (Conflict & { package?: string })[];
}

export type UpdateErrorCode =
  | 'no-upstream' // the package's Kptfile names no upstream to update from
  | 'no-origin' // the version the package was fetched at cannot be had
  | 'not-a-package'
  | 'destination-exists' // `pkg get` into a directory that exists already
  | 'unknown-strategy'
  | 'local-changes' // fast-forward refused: the package was changed locally
  | 'subpackage-clash' // a subpackage added in both upstream and local
  | 'update-failed';

/** Why `pkg get` / `pkg update` refused or failed; nothing was written. */
export class UpdateError extends KdeltaError {
  override readonly name = 'UpdateError';
  declare readonly code: UpdateErrorCode;
  constructor(message: string, code: UpdateErrorCode = 'update-failed', file?: string) {
    super({ code, message, file });
  }
}

function writeFile(root: string, rel: string, text: string): void {
  const full = join(root, rel);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
}

function removeEmptyDirs(root: string, keep: ReadonlySet<string>): void {
  const walk = (abs: string, rel: string) => {
    if (!exists(abs)) return;
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name === '.git') continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      walk(join(abs, e.name), r);
      if (!keep.has(r) && readdirSync(join(abs, e.name)).length === 0) rmdirSync(join(abs, e.name));
    }
  };
  walk(root, '');
}

/** Replace the package's own files (not its subpackages) with those of `from`, keeping local Kptfile bookkeeping. */
function replacePackageFiles(input: UpdateInput): void {
  const local = packageFiles(input.localPath);
  const updated = packageFiles(input.updatedPath);
  const localKptfile = readIf(join(input.localPath, KPTFILE));
  for (const f of local.files) if (f.path !== KPTFILE) rmSync(join(input.localPath, f.path), { force: true });
  for (const f of updated.files) if (f.path !== KPTFILE) writeFile(input.localPath, f.path, f.text);
  for (const d of updated.dirs) mkdirSync(join(input.localPath, d), { recursive: true });
  const updatedKptfile = readIf(join(input.updatedPath, KPTFILE));
  if (updatedKptfile !== undefined && localKptfile !== undefined) {
    // upstream's Kptfile, with the local name, upstream and lock (the caller sets the new lock)
    const merged = keepBookkeeping(updatedKptfile, localKptfile, join(input.relPackagePath, KPTFILE), input.isRoot, join(input.updatedPath, KPTFILE));
    writeFile(input.localPath, KPTFILE, merged);
  } else if (updatedKptfile !== undefined) {
    writeFile(input.localPath, KPTFILE, updatedKptfile);
  }
  removeEmptyDirs(input.localPath, new Set(updated.dirs));
}

/**
 * `updated`'s Kptfile with `local`'s metadata.name, upstream and upstreamLock. A nested package
 * replaced with upstream's version takes the upstream and lock upstream gives it (kpt copies
 * the nested Kptfile whole), so it records the version it now holds.
 */
function keepBookkeeping(updated: string, local: string, file: string, isRoot: boolean, updatedFile: string): string {
  const u = readKptfileText(updated, updatedFile);
  const l = readKptfileText(local, file).kptfile;
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

/** force-delete-replace: the local package becomes upstream's version. */
export function forceDeleteReplace(input: UpdateInput): UpdateOutcome {
  replacePackageFiles(input);
  return { conflicts: [] };
}

/** fast-forward: upstream's version, but only when the local package is unchanged since it was fetched. */
export function fastForward(input: UpdateInput): UpdateOutcome {
  if (exists(input.originPath)) {
    const changed = changedFiles(input.originPath, input.localPath);
    if (changed.length > 0) {
      throw new UpdateError(
        `local package files have been modified: [${changed.join(' ')}].\n  use a different update --strategy.`,
        'local-changes',
      );
    }
  }
  replacePackageFiles(input);
  return { conflicts: [] };
}

/**
 * Non-KRM files, file by file (kpt's ReplaceNonKRMFiles): added upstream → added; changed
 * upstream and unchanged locally → upstream's; deleted upstream and unchanged locally → deleted;
 * changed locally → kept.
 */
export function replaceNonKrmFiles(input: { localPath: string; updatedPath: string; originPath: string }): void {
  const isNonKrm = (f: PkgFile) => !isKrmPath(f.path) && f.path !== KPTFILE;
  const origin = new Map(packageFiles(input.originPath).files.filter(isNonKrm).map((f) => [f.path, f.text]));
  const updated = new Map(packageFiles(input.updatedPath).files.filter(isNonKrm).map((f) => [f.path, f.text]));
  const local = new Map(packageFiles(input.localPath).files.filter(isNonKrm).map((f) => [f.path, f.text]));
  for (const [path, text] of updated) {
    const o = origin.get(path);
    const l = local.get(path);
    if (l === undefined) {
      if (o === undefined) writeFile(input.localPath, path, text); // added upstream
      continue; // deleted locally: stays deleted
    }
    if (o !== undefined && l === o) writeFile(input.localPath, path, text); // unchanged locally
    else if (o === undefined && l === text) continue;
  }
  for (const [path, o] of origin) {
    if (updated.has(path)) continue;
    const l = local.get(path);
    if (l !== undefined && l === o) rmSync(join(input.localPath, path), { force: true });
  }
  // directories gone upstream that are empty locally go too
  const updatedDirs = new Set(packageFiles(input.updatedPath).dirs);
  for (const d of packageFiles(input.originPath).dirs.sort().reverse()) {
    const full = join(input.localPath, d);
    if (!updatedDirs.has(d) && exists(full) && readdirSync(full).length === 0) rmdirSync(full);
  }
  for (const d of packageFiles(input.updatedPath).dirs) {
    if (!exists(join(input.localPath, d)) && !packageFiles(input.originPath).dirs.includes(d)) {
      mkdirSync(join(input.localPath, d), { recursive: true });
    }
  }
}

/**
 * A nested package whose local Kptfile points somewhere else than it did at origin was re-pointed
 * by the user: kpt leaves it alone.
 */
function upstreamRepointed(input: UpdateInput): boolean {
  const local = readIf(join(input.localPath, KPTFILE));
  const origin = readIf(join(input.originPath, KPTFILE));
  if (local === undefined || origin === undefined) return false;
  const l = readKptfileText(local, KPTFILE).kptfile.upstream;
  const o = readKptfileText(origin, join(input.originPath, KPTFILE)).kptfile.upstream;
  if (!o?.git || !l?.git) return false;
  return JSON.stringify(l.git) !== JSON.stringify(o.git);
}

/**
 * The merge names a bad file by its path in the package; one of a fetched side (upstream, origin)
 * gets that side's directory in front, which the caller turns into the side's name.
 */
function atSidePath<T>(input: UpdateInput, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    const e = error as Error & { side?: unknown; file?: unknown };
    const dir = e.side === 'upstream' ? input.updatedPath : e.side === 'origin' ? input.originPath : undefined;
    if (dir !== undefined && typeof e.file === 'string' && e.message.startsWith(e.file)) {
      e.message = `${join(dir, e.file)}${e.message.slice(e.file.length)}`;
    }
    throw error;
  }
}

/** resource-merge: a 3-way merge of the resources, the Kptfile, and the non-KRM files. */
export function resourceMerge(input: UpdateInput): UpdateOutcome {
  if (!input.isRoot && upstreamRepointed(input)) return { conflicts: [] };
  const krm = (dir: string) => packageFiles(dir).files.filter((f) => isKrmPath(f.path));
  const local = krm(input.localPath);
  const result = atSidePath(input, () => mergeFiles({ origin: krm(input.originPath), upstream: krm(input.updatedPath), local }));
  const kept = new Set(result.files.map((f) => f.path));
  for (const f of local) if (!kept.has(f.path)) rmSync(join(input.localPath, f.path), { force: true });
  const before = new Map(local.map((f) => [f.path, f.text]));
  for (const f of result.files) if (before.get(f.path) !== f.text) writeFile(input.localPath, f.path, f.text);

  mergeKptfileOf(input);
  replaceNonKrmFiles(input);
  return { conflicts: result.conflicts };
}

/** The Kptfile's 3-way merge (pipeline merge); `upstream`/`upstreamLock` from upstream for nested packages. */
function mergeKptfileOf(input: UpdateInput): void {
  const localKptfile = readIf(join(input.localPath, KPTFILE));
  const updatedKptfile = readIf(join(input.updatedPath, KPTFILE));
  if (localKptfile !== undefined && updatedKptfile !== undefined) {
    const originKptfile = readIf(join(input.originPath, KPTFILE));
    const merged = mergeKptfile(
      { ...(originKptfile !== undefined ? { origin: originKptfile } : {}), upstream: updatedKptfile, local: localKptfile },
      {
        updateUpstream: !input.isRoot,
        // the fetched sides by their scratch paths: the caller names them (upstream, origin)
        files: { local: join(input.relPackagePath, KPTFILE), origin: join(input.originPath, KPTFILE), upstream: join(input.updatedPath, KPTFILE) },
      },
    );
    if (merged.text !== localKptfile) writeFile(input.localPath, KPTFILE, merged.text);
  } else if (localKptfile === undefined && updatedKptfile !== undefined) {
    writeFile(input.localPath, KPTFILE, updatedKptfile);
  }
}

function packageUpdater(strategy: UpdateStrategy): (input: UpdateInput) => UpdateOutcome {
  switch (strategy) {
    case 'resource-merge':
      return resourceMerge;
    case 'fast-forward':
      return fastForward;
    case 'force-delete-replace':
      return forceDeleteReplace;
  }
}

export { sameFile };

export function strategyOf(value: unknown, file: string): UpdateStrategy {
  if (value === undefined || value === '') return 'resource-merge';
  if (isUpdateStrategy(value)) return value;
  throw new UpdateError(`${file}: unrecognized update strategy ${JSON.stringify(value)} (expected one of ${updateStrategies.join(', ')})`, 'unknown-strategy', file);
}

/** Paths of the local (not remote) packages under `root`, `.` first. */
function localPackages(root: string): string[] {
  if (!exists(root)) return [];
  return ['.', ...subpackagePaths(root, { includeRemote: false })];
}

/** fast-forward refuses when any local package of the tree changed since it was fetched. */
function assertUnchangedTree(input: UpdateInput): void {
  const l = localPackages(input.localPath);
  const o = new Set(localPackages(input.originPath));
  const changed: string[] = [];
  for (const rel of l) {
    if (!o.has(rel)) {
      if (rel !== '.') changed.push(rel);
      continue;
    }
    const files = changedFiles(join(input.originPath, rel), join(input.localPath, rel));
    changed.push(...files.map((f) => (rel === '.' ? f : `${rel}/${f}`)));
  }
  if (changed.length > 0) {
    throw new UpdateError(`local package files have been modified: [${changed.join(' ')}].\n  use a different update --strategy.`, 'local-changes');
  }
}

/**
 * kpt's updater for a package and its nested packages. The package and its local packages are
 * updated with `strategy` (see {@link updateLocalTree}); then every remote package inside it
 * (one whose Kptfile names an upstream, in local, upstream or origin), at any depth, is added,
 * deleted, kept or updated with its own strategy, in kpt's order: depth first, the packages of
 * one level in reverse path order (kpt walks them with a stack). Each remote package is later
 * also updated from its own upstream by the caller.
 */
export function updateTree(strategy: UpdateStrategy, input: UpdateInput & { progress?: (line: string) => void }): UpdateOutcome {
  const progress = input.progress ?? (() => undefined);
  if (strategy === 'force-delete-replace') return replaceTree(input);
  const conflicts = [...updateLocalTree(strategy, input, progress).conflicts];
  const stack = remotePackagesBelow(input, '.');
  while (stack.length > 0) {
    const rel = stack.pop()!;
    conflicts.push(...updateNestedRemote(rel, input, progress).conflicts);
    stack.push(...remotePackagesBelow(input, rel));
  }
  return { conflicts };
}

/** Sorted paths (relative to the root of the update) of the remote packages directly below `rel` in any of the three trees. */
function remotePackagesBelow(input: UpdateInput, rel: string): string[] {
  const found = new Set<string>();
  for (const root of [input.localPath, input.updatedPath, input.originPath]) {
    const dir = rel === '.' ? root : join(root, rel);
    for (const p of subpackagePaths(dir, { includeRemote: true, recurseIntoRemote: false })) {
      if (hasUpstream(join(dir, p, KPTFILE))) found.add(rel === '.' ? p : `${rel}/${p}`);
    }
  }
  return [...found].sort();
}

/** Whether a Kptfile names an upstream but has no lock: the package was never fetched there. */
function unfetched(dir: string): boolean {
  const kf = readKptfile(dir)?.kptfile;
  return Boolean(kf?.upstream) && !kf?.upstreamLock;
}

/**
 * One remote package nested in the package being updated (kpt's updatePackage and mergePackage for
 * a package that is not the root): decided by where it has a Kptfile (origin, local, upstream).
 */
function updateNestedRemote(rel: string, input: UpdateInput, progress: (line: string) => void): UpdateOutcome {
  const local = join(input.localPath, rel);
  const upd = join(input.updatedPath, rel);
  const org = join(input.originPath, rel);
  const [l, u, o] = [exists(join(local, KPTFILE)), exists(join(upd, KPTFILE)), exists(join(org, KPTFILE))];
  const name = rel.split('/').pop()!;
  if (!o && l && u) {
    progress(`Package "${name}" added in both local and upstream.`);
    throw new UpdateError(`subpackage "${rel}" added in both upstream and local`, 'subpackage-clash');
  }
  if (!o && !l && u) {
    progress(`Adding package "${name}" from upstream.`);
    copyPackageWithoutRemote(upd, local);
    return { conflicts: [] };
  }
  if (o && !l && u) {
    progress(`Ignoring package "${name}" in upstream since it is deleted from local.`);
    return { conflicts: [] };
  }
  if (o && l && !u) {
    if (treeUnchanged(org, local)) {
      progress(`Deleting package "${name}" from local since it is removed in upstream.`);
      rmSync(local, { recursive: true, force: true });
    } else {
      progress(`Package "${name}" deleted from upstream, but keeping local since it has changes.`);
    }
    return { conflicts: [] };
  }
  if (!(o && l && u)) return { conflicts: [] }; // added locally, or gone from both
  const sub: UpdateInput = { localPath: local, updatedPath: upd, originPath: org, relPackagePath: `/${rel}`, isRoot: false };
  // Never fetched upstream: only its Kptfile can have changed.
  if (unfetched(upd)) {
    mergeKptfileOf(sub);
    return { conflicts: [] };
  }
  // Fetched upstream but not at origin: local and upstream may hold different versions of it,
  // with nothing to merge them against.
  if (unfetched(org)) throw new UpdateError(`no origin available for package "${rel}"`, 'no-origin');
  const kf = readKptfile(local);
  const strategy = strategyOf(kf?.kptfile.upstream?.updateStrategy, kf?.file ?? join(local, KPTFILE));
  progress(`Updating package "${name}" with strategy "${strategy}".`);
  if (strategy === 'force-delete-replace') return replaceTree(sub);
  const out = updateLocalTree(strategy, sub, progress);
  return { conflicts: out.conflicts.map((c) => ({ ...c, package: c.package ? `${rel}/${c.package}` : rel })) };
}

/** Copy upstream's version of a package added upstream, without the remote packages inside it (added on their own). */
function copyPackageWithoutRemote(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  copyTree(from, to);
  for (const rel of subpackagePaths(to, { includeRemote: true, recurseIntoRemote: false })) {
    if (hasUpstream(join(to, rel, KPTFILE))) rmSync(join(to, rel), { recursive: true, force: true });
  }
}

/**
 * A package and its local packages (not the remote ones, nor what is inside them) updated with
 * `strategy`: each nested local package is added, deleted, kept or merged with its own strategy.
 */
function updateLocalTree(strategy: UpdateStrategy, input: UpdateInput, progress: (line: string) => void): UpdateOutcome {
  if (strategy === 'fast-forward' && exists(input.originPath)) assertUnchangedTree(input);
  // a nested package the user re-pointed to another upstream is left alone, with its local packages
  if (strategy === 'resource-merge' && !input.isRoot && upstreamRepointed(input)) return { conflicts: [] };
  const conflicts: (Conflict & { package?: string })[] = [];
  const isRemote = (rel: string) =>
    [input.localPath, input.updatedPath, input.originPath].some((root) => hasUpstream(join(root, rel, KPTFILE)));
  const rels = new Set<string>(['.']);
  for (const root of [input.localPath, input.updatedPath, input.originPath]) {
    for (const p of subpackagePaths(root, { includeRemote: false })) if (!isRemote(p)) rels.add(p);
  }
  const settled: string[] = []; // added or deleted whole: their nested packages came or went with them
  for (const rel of [...rels].sort((a, b) => (a === '.' ? -1 : b === '.' ? 1 : a.localeCompare(b)))) {
    if (settled.some((p) => rel.startsWith(`${p}/`))) continue;
    if (rel === '.') {
      conflicts.push(...packageUpdater(strategy)(input).conflicts);
      continue;
    }
    const local = join(input.localPath, rel);
    const upd = join(input.updatedPath, rel);
    const org = join(input.originPath, rel);
    const [l, u, o] = [exists(join(local, KPTFILE)), exists(join(upd, KPTFILE)), exists(join(org, KPTFILE))];
    if (!l && !u) continue;
    if (!o && l && !u) {
      // only in local: kept by resource-merge (fast-forward refused above, force-delete-replace replaced the tree)
      settled.push(rel);
      continue;
    }
    if (o && !u) {
      if (!l) continue;
      if (exists(upd)) {
        // no longer a package upstream, still a directory of its parent: resource-merge keeps the
        // local package and merges its files; the other strategies follow upstream
        if (strategy === 'resource-merge') {
          const out = resourceMerge({ localPath: local, updatedPath: upd, originPath: org, relPackagePath: `/${rel}`, isRoot: false });
          conflicts.push(...out.conflicts.map((c) => ({ ...c, package: rel })));
        } else rmSync(join(local, KPTFILE), { force: true });
        continue;
      }
      if (treeUnchanged(org, local)) {
        progress(`Deleting package "${rel}" from local since it is removed in upstream.`);
        rmSync(local, { recursive: true, force: true });
        settled.push(rel);
      } else {
        progress(`Package "${rel}" deleted from upstream, but keeping local since it has changes.`);
      }
      continue;
    }
    if (!o && !l && u) {
      progress(`Adding package "${rel}" from upstream.`);
      copyPackageWithoutRemote(upd, local);
      settled.push(rel);
      continue;
    }
    if (o && !l) continue; // deleted locally: stays deleted
    if (!o && l && u) throw new UpdateError(`subpackage "${rel}" added in both upstream and local`, 'subpackage-clash');
    const sub = readKptfile(local);
    const subStrategy = sub?.kptfile.upstream?.updateStrategy ? strategyOf(sub.kptfile.upstream.updateStrategy, sub.file) : strategy;
    progress(`Updating package "${rel.split('/').pop()}" with strategy "${subStrategy}".`);
    const out = packageUpdater(subStrategy)({ localPath: local, updatedPath: upd, originPath: org, relPackagePath: `/${rel}`, isRoot: false });
    conflicts.push(...out.conflicts.map((c) => ({ ...c, package: rel })));
  }
  return { conflicts };
}

/** The updater of a strategy, for a package and its nested packages. */
export function updater(strategy: UpdateStrategy): (input: UpdateInput) => UpdateOutcome {
  return (input) => updateTree(strategy, input);
}

/**
 * force-delete-replace for a whole tree: the local package and its nested local packages become
 * upstream's; remote packages added locally stay (they update themselves), and the root Kptfile
 * keeps its name, upstream and lock.
 */
function replaceTree(input: UpdateInput): UpdateOutcome {
  const keep = new Set(
    subpackagePaths(input.localPath, { includeRemote: true, recurseIntoRemote: false }).filter(
      (rel) =>
        hasUpstream(join(input.localPath, rel, KPTFILE)) &&
        (!exists(join(input.updatedPath, rel)) || !readKptfile(join(input.localPath, rel))?.kptfile.upstreamLock),
    ),
  );
  const localKptfile = readIf(join(input.localPath, KPTFILE));
  const clear = (rel: string) => {
    for (const e of readdirSync(join(input.localPath, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === '.git' || r === KPTFILE || keep.has(r)) continue;
      if (e.isDirectory() && [...keep].some((k) => k.startsWith(`${r}/`))) clear(r);
      else rmSync(join(input.localPath, r), { recursive: true, force: true });
    }
  };
  if (exists(input.localPath)) clear('');
  if (exists(input.updatedPath)) {
    for (const e of readdirSync(input.updatedPath)) {
      if (e === KPTFILE || e === '.git') continue;
      cpSync(join(input.updatedPath, e), join(input.localPath, e), {
        recursive: true,
        verbatimSymlinks: true,
        force: true,
        // kept remote packages stay as they are locally
        filter: (src) => {
          const rel = src.slice(input.updatedPath.length + 1).split(sep).join('/');
          return ![...keep].some((k) => rel === k || rel.startsWith(`${k}/`));
        },
      });
    }
  }
  const updatedKptfile = readIf(join(input.updatedPath, KPTFILE));
  if (updatedKptfile !== undefined && localKptfile !== undefined) {
    writeFile(input.localPath, KPTFILE, keepBookkeeping(updatedKptfile, localKptfile, join(input.relPackagePath, KPTFILE), input.isRoot, join(input.updatedPath, KPTFILE)));
  } else if (updatedKptfile !== undefined) writeFile(input.localPath, KPTFILE, updatedKptfile);
  return { conflicts: [] };
}
