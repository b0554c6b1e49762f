import type { PackageView } from '@kdelta/kptfile-model';
import { changedFiles } from '../compare.js';
import { UpdateError } from '../errors.js';
import { replacePackageFiles } from './replace.js';
import { type UpdateInput, type UpdateOutcome, nothing } from './types.js';

function refuse(changed: readonly string[]): never {
  throw new UpdateError(
    `local package files have been modified: [${changed.join(' ')}].\n  use a different update --strategy.`,
    'local-changes',
  );
}

/** fast-forward: upstream's version, but only when the local package is unchanged since it was fetched. */
export function fastForward(input: UpdateInput): UpdateOutcome {
  if (input.origin.exists()) {
    const changed = changedFiles(input.origin, input.local);
    if (changed.length > 0) refuse(changed);
  }
  replacePackageFiles(input);
  return nothing;
}

/** Paths of the local (not remote) packages of `pkg`, `.` first. */
function localPackages(pkg: PackageView): string[] {
  if (!pkg.exists()) return [];
  return ['.', ...pkg.nestedPackages({ includeRemote: false })];
}

/** fast-forward refuses when any local package of the tree changed since it was fetched. */
export function assertUnchangedTree(input: UpdateInput): void {
  const l = localPackages(input.local);
  const o = new Set(localPackages(input.origin));
  const changed: string[] = [];
  for (const rel of l) {
    if (!o.has(rel)) {
      if (rel !== '.') changed.push(rel);
      continue;
    }
    const files = rel === '.' ? changedFiles(input.origin, input.local) : changedFiles(input.origin.at(rel), input.local.at(rel));
    changed.push(...files.map((f) => (rel === '.' ? f : `${rel}/${f}`)));
  }
  if (changed.length > 0) refuse(changed);
}
