/**
 * Writing a package tree back to disk, all or nothing: the new tree is made in a work copy of the
 * package on its filesystem, outside its tree (see swap.ts), and swapped in under a journal. A
 * failure before the swap leaves the package exactly as it was; a process killed during it is
 * recovered by the next command on the package (`recoverInterruptedSwap`).
 */
/// <reference types="node" preserve="true" />
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PackageTree, TreeChanges } from './package-tree.js';
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
    // the executable bit as git keeps it: 755 or 644 (what git checks out), whatever the umask
    if (f.executable) chmodSync(to, 0o755);
  }
  for (const l of changes.links) {
    const to = abs(root, l.path);
    mkdirSync(dirname(to), { recursive: true });
    rmSync(to, { force: true });
    symlinkSync(l.target, to);
  }
}

export const isEmptyChange = (c: TreeChanges) => c.written.length + c.links.length + c.deleted.length + c.created.length === 0;

/**
 * Makes the directory `dir` (read as `before`) hold `after`, all or nothing; `dir` need not exist
 * yet. What the trees do not model (`.git`) stays as it is. Nothing is touched when nothing
 * changes. Synchronous: a signal handler never runs half way through.
 */
export function commitTree(dir: string, after: PackageTree, before: PackageTree): TreeChanges {
  const changes = after.changesFrom(before);
  if (isEmptyChange(changes)) return changes;
  const target = canonical(dir);
  const work = makeWorkDir(target, 'work');
  try {
    const next = join(work, 'new');
    if (existsSync(target)) {
      copyTreeFast(target, next);
      applyChanges(next, changes);
      swap(target, work);
    } else {
      // a new package: one rename puts it in place whole
      mkdirSync(next);
      applyChanges(next, changes);
      mkdirSync(dirname(target), { recursive: true });
      renameSync(next, target);
    }
    return changes;
  } finally {
    removeTempDir(work);
  }
}

/**
 * Makes the directory `dir`, read as `before`, hold `after` (see {@link commitTree}): files whose
 * bytes change are written, new symlinks and directories made, removed ones deleted; everything
 * else (and `.git`) keeps its bytes. A failure or a kill leaves the package wholly old or wholly new.
 */
export async function writeTreeChanges(dir: string, before: PackageTree, after: PackageTree): Promise<TreeChanges> {
  return commitTree(dir, after, before);
}
