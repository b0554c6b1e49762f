/**
 * Rendering a package directory in place: read the tree once, render in memory, then write every
 * changed file in one `writePackage` (all staged before any is renamed) and delete the files the
 * render emptied. A failed render writes nothing.
 */
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PackageTree, writePackage } from '@kdelta/kptfile-model';
import { renderPackage, type RenderOptions, type RenderOutcome } from './render.js';

export type DirectoryRenderOutcome = RenderOutcome;

export async function renderDirectory(dir: string, options: Omit<RenderOptions, 'dir'> = {}): Promise<DirectoryRenderOutcome> {
  const root = resolve(dir);
  const tree = PackageTree.read(root);
  if (!tree) return { ok: false, results: [], error: { message: `${dir}: no such directory`, package: '' } };
  const outcome = await renderPackage(tree, options);
  if (!outcome.ok) return outcome;
  const files = outcome.written.map((path) => ({ path, content: outcome.tree.bytes(path) ?? Buffer.alloc(0) }));
  if (files.length > 0) await writePackage(root, files);
  for (const path of outcome.deleted) await rm(join(root, ...path.split('/')), { force: true });
  return outcome;
}
