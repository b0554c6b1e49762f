import { KPTFILE, readKptfile } from '../kptfile.js';
import { joinPath, keepBookkeeping, replacePackageFiles } from './replace.js';
import { type UpdateInput, type UpdateOutcome, nothing } from './types.js';

/** force-delete-replace for one package: the local package becomes upstream's version. */
export function forceDeleteReplace(input: UpdateInput): UpdateOutcome {
  replacePackageFiles(input);
  return nothing;
}

/**
 * force-delete-replace for a whole tree: the local package and its nested local packages become
 * upstream's; remote packages added locally stay (they update themselves), and the root Kptfile
 * keeps its name, upstream and lock.
 */
export function replaceTree(input: UpdateInput): UpdateOutcome {
  const { local, updated } = input;
  const keep = new Set(
    local
      .nestedPackages({ includeRemote: true, recurseIntoRemote: false })
      .filter(
        (rel) =>
          local.at(rel).isRemote() &&
          (!updated.exists(rel) || !readKptfile(local.at(rel), local.describe(`${rel}/${KPTFILE}`))?.kptfile.upstreamLock),
      ),
  );
  const kept = (rel: string) => [...keep].some((k) => rel === k || rel.startsWith(`${k}/`));
  const localKptfile = local.text(KPTFILE);
  const clear = (rel: string) => {
    for (const name of local.list(rel)) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === KPTFILE || keep.has(r)) continue;
      if (local.typeOf(r) === 'dir' && [...keep].some((k) => k.startsWith(`${r}/`))) clear(r);
      else local.delete(r);
    }
  };
  if (local.exists()) clear('');
  if (updated.exists()) {
    for (const name of updated.list()) {
      if (name === KPTFILE || kept(name)) continue;
      // kept remote packages stay as they are locally
      local.copyFrom(updated, name, (rel) => !kept(`${name}/${rel}`));
    }
  }
  const updatedKptfile = updated.text(KPTFILE);
  if (updatedKptfile !== undefined && localKptfile !== undefined) {
    local.write(
      KPTFILE,
      keepBookkeeping(updatedKptfile, localKptfile, joinPath(input.relPackagePath, KPTFILE), input.isRoot, updated.describe(KPTFILE)),
    );
  } else if (updatedKptfile !== undefined) local.write(KPTFILE, updatedKptfile);
  return nothing;
}
