/**
 * The one place the update writes to disk: the new tree goes into a staging copy of the package
 * on the same filesystem, which is then swapped in with two renames. A failure before the swap
 * leaves the package exactly as it was.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { PackageTree, TreeChanges } from '@kdelta/kptfile-model';

/** A temporary sibling of `path` (same filesystem, so a rename can replace `path`). */
export function siblingTemp(path: string, tag: string): string {
  return mkdtempSync(join(dirname(path), `.${basename(path)}.kdelta-${tag}-`));
}

/** Copy a whole directory tree as is: `cp -a` where there is one (much faster), else node's cpSync. */
function copyTreeFast(from: string, to: string): void {
  if (process.platform !== 'win32') {
    try {
      execFileSync('cp', ['-a', '--', from, to], { stdio: 'ignore' });
      return;
    } catch {
      rmSync(to, { recursive: true, force: true });
    }
  }
  cpSync(from, to, { recursive: true, verbatimSymlinks: true });
}

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

const isEmpty = (c: TreeChanges) => c.written.length + c.links.length + c.deleted.length + c.created.length === 0;

/**
 * Makes the package directory `dir` (read as `oldTree`) hold `newTree`, all or nothing. What the
 * trees do not model (`.git`) stays as it is.
 */
export function commitTree(dir: string, newTree: PackageTree, oldTree: PackageTree): TreeChanges {
  const changes = newTree.changesFrom(oldTree);
  if (isEmpty(changes)) return changes;
  const holder = siblingTemp(dir, 'work');
  try {
    const work = join(holder, 'pkg');
    copyTreeFast(dir, work);
    applyChanges(work, changes);
    const backup = join(holder, 'old');
    renameSync(dir, backup);
    try {
      renameSync(work, dir);
    } catch (error) {
      renameSync(backup, dir);
      throw error;
    }
    return changes;
  } finally {
    rmSync(holder, { recursive: true, force: true });
  }
}

/** Writes a whole tree into `dir`, over what is there (`cp -r`). */
export function writeTree(dir: string, tree: PackageTree, empty: PackageTree): void {
  mkdirSync(dir, { recursive: true });
  applyChanges(dir, tree.changesFrom(empty));
}
