/**
 * Rendering a package directory in place: read the tree once, render in memory, then write the
 * changed files and delete the ones the render emptied in one `writeTreeChanges` (the new tree
 * swapped in whole). A failed render writes nothing.
 */
import { resolve } from 'node:path';
import { PackageTree, writeTreeChanges } from '@kdelta/kptfile-model';
import { renderPackage, type RenderOptions, type RenderOutcome } from './render.js';

export type DirectoryRenderOutcome = RenderOutcome;

export async function renderDirectory(dir: string, options: Omit<RenderOptions, 'dir'> = {}): Promise<DirectoryRenderOutcome> {
  const root = resolve(dir);
  const tree = PackageTree.read(root);
  if (!tree) return { ok: false, results: [], error: { message: `${dir}: no such directory`, package: '' } };
  const outcome = await renderPackage(tree, options);
  if (!outcome.ok) return outcome;
  // one write of the whole result, written and deleted files together: all or nothing
  await writeTreeChanges(root, tree, outcome.tree);
  return outcome;
}
