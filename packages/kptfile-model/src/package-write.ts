/**
 * Writing a package tree back to disk: only what differs from the tree as read, every new file
 * staged before anything in the package is touched.
 */
/// <reference types="node" preserve="true" />
import { promises as fs } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PackageTree, TreeChanges } from './package-tree.js';

const isEmpty = (c: TreeChanges) => c.written.length + c.links.length + c.deleted.length + c.created.length === 0;

/**
 * Makes the directory `dir`, read as `before`, hold `after`: files whose bytes change are
 * written, new symlinks and directories made, removed ones deleted; everything else (and `.git`)
 * is left as it is, untouched. Every new file and link is staged first (in a temporary directory
 * inside `dir`, then renamed into place), so a failure while staging leaves the package as it was.
 */
export async function writeTreeChanges(dir: string, before: PackageTree, after: PackageTree): Promise<TreeChanges> {
  const changes = after.changesFrom(before);
  if (isEmpty(changes)) return changes;
  const root = resolve(dir);
  const abs = (rel: string) => join(root, ...rel.split('/'));
  await fs.mkdir(root, { recursive: true });
  const stage = await fs.mkdtemp(join(root, '.kdelta-stage-'));
  try {
    const staged: { from: string; to: string }[] = [];
    for (const f of changes.written) {
      const from = join(stage, String(staged.length));
      await fs.writeFile(from, f.bytes, { flag: 'wx' });
      staged.push({ from, to: abs(f.path) });
    }
    for (const l of changes.links) {
      const from = join(stage, String(staged.length));
      await fs.symlink(l.target, from);
      staged.push({ from, to: abs(l.path) });
    }
    // Everything is staged: put it in place (what a new node replaces goes first).
    for (const p of changes.deleted) await fs.rm(abs(p), { recursive: true, force: true });
    for (const p of changes.created) await fs.mkdir(abs(p), { recursive: true });
    for (const s of staged) {
      await fs.mkdir(dirname(s.to), { recursive: true });
      await fs.rename(s.from, s.to);
    }
    return changes;
  } finally {
    await fs.rm(stage, { recursive: true, force: true });
  }
}
