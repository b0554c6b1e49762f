/**
 * Nested packages and kpt's order. A package and its local packages (no upstream of their own)
 * are updated with the strategy asked for; every remote package inside (one whose Kptfile names
 * an upstream, in local, upstream or origin), at any depth, is added, deleted, kept or updated
 * with its own strategy: depth first, the packages of one level in reverse path order (kpt walks
 * them with a stack).
 */
import type { PackageView } from '@kdelta/kptfile-model';
import { treeUnchanged } from './compare.js';
import { UpdateError } from './errors.js';
import { KPTFILE, type UpdateStrategy, readKptfile, strategyOf } from './kptfile.js';
import { assertUnchangedTree, fastForward } from './strategies/fast-forward.js';
import { forceDeleteReplace, replaceTree } from './strategies/force-delete-replace.js';
import { mergeKptfileOf } from './strategies/replace.js';
import { resourceMerge, upstreamRepointed } from './strategies/resource-merge.js';
import { type UpdateContext, type UpdateInput, type UpdateOutcome, combine, nothing, within } from './strategies/types.js';

const quiet: UpdateContext = { progress: () => undefined };

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

const visit = (path: string, action: UpdateOutcome['packages'][number]['action'], strategy?: UpdateStrategy): UpdateOutcome => ({
  ...nothing,
  packages: [{ path, action, ...(strategy ? { strategy } : {}) }],
});

/** `input` for the package at `rel` below it. */
function below(input: UpdateInput, rel: string): UpdateInput {
  return {
    local: input.local.at(rel),
    updated: input.updated.at(rel),
    origin: input.origin.at(rel),
    relPackagePath: `/${rel}`,
    isRoot: false,
    parsed: input.parsed,
    identified: input.identified,
  };
}

/**
 * kpt's updater for a package and its nested packages, editing `input.local`'s tree. Each remote
 * package found is later also updated from its own upstream by the caller.
 */
export function updateTree(strategy: UpdateStrategy, input: UpdateInput, ctx: UpdateContext = quiet): UpdateOutcome {
  if (strategy === 'force-delete-replace') return replaceTree(input);
  const outcomes = [updateLocalTree(strategy, input, ctx)];
  const stack = remotePackagesBelow(input, '.');
  while (stack.length > 0) {
    const rel = stack.pop()!;
    outcomes.push(updateNestedRemote(rel, input, ctx));
    stack.push(...remotePackagesBelow(input, rel));
  }
  return combine(outcomes);
}

/** Sorted paths (relative to the root of the update) of the remote packages directly below `rel` in any of the three trees. */
function remotePackagesBelow(input: UpdateInput, rel: string): string[] {
  const found = new Set<string>();
  for (const root of [input.local, input.updated, input.origin]) {
    const pkg = rel === '.' ? root : root.at(rel);
    for (const p of pkg.nestedPackages({ includeRemote: true, recurseIntoRemote: false })) {
      if (pkg.at(p).isRemote()) found.add(rel === '.' ? p : `${rel}/${p}`);
    }
  }
  return [...found].sort();
}

/** Whether a Kptfile names an upstream but has no lock: the package was never fetched there. */
function unfetched(pkg: PackageView): boolean {
  const kf = readKptfile(pkg, pkg.describe(KPTFILE))?.kptfile;
  return Boolean(kf?.upstream) && !kf?.upstreamLock;
}

/**
 * One remote package nested in the package being updated (kpt's updatePackage and mergePackage for
 * a package that is not the root): decided by where it has a Kptfile (origin, local, upstream).
 */
function updateNestedRemote(rel: string, input: UpdateInput, ctx: UpdateContext): UpdateOutcome {
  const sub = below(input, rel);
  const [l, u, o] = [sub.local.exists(KPTFILE), sub.updated.exists(KPTFILE), sub.origin.exists(KPTFILE)];
  const name = rel.split('/').pop()!;
  if (!o && l && u) {
    ctx.progress(`Package "${name}" added in both local and upstream.`);
    throw new UpdateError(`subpackage "${rel}" added in both upstream and local`, 'subpackage-clash');
  }
  if (!o && !l && u) {
    ctx.progress(`Adding package "${name}" from upstream.`);
    copyPackageWithoutRemote(sub.updated, sub.local);
    return visit(rel, 'added');
  }
  if (o && !l && u) {
    ctx.progress(`Ignoring package "${name}" in upstream since it is deleted from local.`);
    return visit(rel, 'ignored');
  }
  if (o && l && !u) {
    if (treeUnchanged(sub.origin, sub.local)) {
      ctx.progress(`Deleting package "${name}" from local since it is removed in upstream.`);
      input.local.delete(rel);
      return visit(rel, 'deleted');
    }
    ctx.progress(`Package "${name}" deleted from upstream, but keeping local since it has changes.`);
    return visit(rel, 'kept');
  }
  if (!(o && l && u)) return nothing; // added locally, or gone from both
  // Never fetched upstream: only its Kptfile can have changed.
  if (unfetched(sub.updated)) {
    const kptfile = mergeKptfileOf(sub);
    return combine([within(rel, { ...nothing, ...kptfile }), visit(rel, 'kptfile-merged')]);
  }
  // Fetched upstream but not at origin: local and upstream may hold different versions of it,
  // with nothing to merge them against.
  if (unfetched(sub.origin)) throw new UpdateError(`no origin available for package "${rel}"`, 'no-origin');
  const file = sub.local.describe(KPTFILE);
  const kf = readKptfile(sub.local, file);
  const strategy = strategyOf(kf?.kptfile.upstream?.updateStrategy, file);
  ctx.progress(`Updating package "${name}" with strategy "${strategy}".`);
  if (strategy === 'force-delete-replace') return combine([replaceTree(sub), visit(rel, 'updated', strategy)]);
  return combine([within(rel, updateLocalTree(strategy, sub, ctx)), visit(rel, 'updated', strategy)]);
}

/** Copy upstream's version of a package added upstream, without the remote packages inside it (added on their own). */
function copyPackageWithoutRemote(from: PackageView, to: PackageView): void {
  to.copyFrom(from, '');
  for (const rel of to.nestedPackages({ includeRemote: true, recurseIntoRemote: false })) {
    if (to.at(rel).isRemote()) to.delete(rel);
  }
}

/**
 * A package and its local packages (not the remote ones, nor what is inside them) updated with
 * `strategy`: each nested local package is added, deleted, kept or merged with its own strategy.
 */
export function updateLocalTree(strategy: UpdateStrategy, input: UpdateInput, ctx: UpdateContext): UpdateOutcome {
  if (strategy === 'fast-forward' && input.origin.exists()) assertUnchangedTree(input);
  // a nested package the user re-pointed to another upstream is left alone, with its local packages
  if (strategy === 'resource-merge' && !input.isRoot && upstreamRepointed(input)) return visit('.', 'kept');
  const outcomes: UpdateOutcome[] = [];
  const roots = [input.local, input.updated, input.origin];
  const isRemote = (rel: string) => roots.some((root) => root.at(rel).isRemote());
  const rels = new Set<string>(['.']);
  for (const root of roots) {
    for (const p of root.nestedPackages({ includeRemote: false })) if (!isRemote(p)) rels.add(p);
  }
  const settled: string[] = []; // added or deleted whole: their nested packages came or went with them
  for (const rel of [...rels].sort((a, b) => (a === '.' ? -1 : b === '.' ? 1 : a.localeCompare(b)))) {
    if (settled.some((p) => rel.startsWith(`${p}/`))) continue;
    if (rel === '.') {
      outcomes.push(packageUpdater(strategy)(input));
      continue;
    }
    const sub = below(input, rel);
    const [l, u, o] = [sub.local.exists(KPTFILE), sub.updated.exists(KPTFILE), sub.origin.exists(KPTFILE)];
    if (!l && !u) continue;
    if (!o && l && !u) {
      // only in local: kept by resource-merge (fast-forward refused above, force-delete-replace replaced the tree)
      settled.push(rel);
      outcomes.push(visit(rel, 'kept'));
      continue;
    }
    if (o && !u) {
      if (!l) continue;
      if (sub.updated.exists()) {
        // no longer a package upstream, still a directory of its parent: resource-merge keeps the
        // local package and merges its files; the other strategies follow upstream
        if (strategy === 'resource-merge') {
          outcomes.push(within(rel, resourceMerge(sub)), visit(rel, 'updated', strategy));
        } else {
          sub.local.delete(KPTFILE);
          outcomes.push(visit(rel, 'unpackaged'));
        }
        continue;
      }
      if (treeUnchanged(sub.origin, sub.local)) {
        ctx.progress(`Deleting package "${rel}" from local since it is removed in upstream.`);
        input.local.delete(rel);
        settled.push(rel);
        outcomes.push(visit(rel, 'deleted'));
      } else {
        ctx.progress(`Package "${rel}" deleted from upstream, but keeping local since it has changes.`);
        outcomes.push(visit(rel, 'kept'));
      }
      continue;
    }
    if (!o && !l && u) {
      ctx.progress(`Adding package "${rel}" from upstream.`);
      copyPackageWithoutRemote(sub.updated, sub.local);
      settled.push(rel);
      outcomes.push(visit(rel, 'added'));
      continue;
    }
    if (o && !l) continue; // deleted locally: stays deleted
    if (!o && l && u) throw new UpdateError(`subpackage "${rel}" added in both upstream and local`, 'subpackage-clash');
    const kf = readKptfile(sub.local, sub.local.describe(KPTFILE));
    const subStrategy = kf?.kptfile.upstream?.updateStrategy ? strategyOf(kf.kptfile.upstream.updateStrategy, kf.file) : strategy;
    ctx.progress(`Updating package "${rel.split('/').pop()}" with strategy "${subStrategy}".`);
    outcomes.push(within(rel, packageUpdater(subStrategy)(sub)), visit(rel, 'updated', subStrategy));
  }
  return combine(outcomes);
}

/** The updater of a strategy, for a package and its nested packages (the three-way entry point). */
export function updater(strategy: UpdateStrategy): (input: UpdateInput, ctx?: UpdateContext) => UpdateOutcome {
  return (input, ctx) => updateTree(strategy, input, ctx);
}
