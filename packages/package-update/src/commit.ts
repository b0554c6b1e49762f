/**
 * The one place an update writes to disk: kptfile-model's `commitTree` (the new tree made in a work
 * copy of the package and swapped in under a journal, see kptfile-model's swap.ts), and the
 * writing of a fetched tree into a fresh directory.
 */
import { mkdirSync } from 'node:fs';
import { applyChanges, type PackageTree } from '@kdelta/kptfile-model';

export { commitTree, isEmptyChange as isEmpty } from '@kdelta/kptfile-model';

/** Writes a whole tree into `dir`, over what is there (`cp -r`). */
export function writeTree(dir: string, tree: PackageTree, empty: PackageTree): void {
  mkdirSync(dir, { recursive: true });
  applyChanges(dir, tree.changesFrom(empty));
}
