/**
 * The one place an update writes to disk: the new tree is made in a work copy of the package on
 * its filesystem, outside its tree (see swap.ts), and swapped in under a journal. A failure before
 * the swap leaves the package exactly as it was; a process killed during it is recovered by the
 * next operation on the package.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PackageTree, TreeChanges } from '@kdelta/kptfile-model';
import { canonical, copyTreeFast, makeWorkDir, swap } from './swap.js';
import { removeTempDir } from './temp.js';

const abs = (root: string, rel: string) => join(root, ...rel.split('/'));

/** Applies `changes` to the directory `root` (which holds the old tree). */
export function applyChanges(root: string, changes: TreeChanges): void {
  for (const p of changes.deleted) rmSync(abs(root, p), { recursive: true, force: true });
  for (const p of changes.created) mkdirSync(abs(root, p), { recursive: true });
  for (const f of changes.written) {
    const to = abs(root, f.path);
    mkdirSync(dirname(to), { recursive: true });
    // a new file, never one written through: the old bytes may be shared with the package
    rmSync(to, { force: true });
    writeFileSync(to, f.bytes);
  }
  for (const l of changes.links) {
    const to = abs(root, l.path);
    mkdirSync(dirname(to), { recursive: true });
    rmSync(to, { force: true });
    symlinkSync(l.target, to);
  }
}

export const isEmpty = (c: TreeChanges) => c.written.length + c.links.length + c.deleted.length + c.created.length === 0;

/**
 * Makes the package directory `dir` (read as `oldTree`) hold `newTree`, all or nothing. What the
 * trees do not model (`.git`) stays as it is.
 */
export function commitTree(dir: string, newTree: PackageTree, oldTree: PackageTree): TreeChanges {
  const changes = newTree.changesFrom(oldTree);
  if (isEmpty(changes)) return changes;
  const target = canonical(dir);
  const work = makeWorkDir(target, 'work');
  try {
    copyTreeFast(target, join(work, 'new'));
    applyChanges(join(work, 'new'), changes);
    swap(target, work);
    return changes;
  } finally {
    removeTempDir(work);
  }
}

/** Writes a whole tree into `dir`, over what is there (`cp -r`). */
export function writeTree(dir: string, tree: PackageTree, empty: PackageTree): void {
  mkdirSync(dir, { recursive: true });
  applyChanges(dir, tree.changesFrom(empty));
}
