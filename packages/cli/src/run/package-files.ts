import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { listFiles } from '../util/fs.js';
import type { FileContent, PackageFiles } from './job.js';
import { fileContent } from './materialize.js';
import { RunError } from './errors.js';

/** A package directory's files (path → text, or bytes when not UTF-8); undefined when absent or empty. */
export async function readPackageDir(dir: string): Promise<Map<string, FileContent> | undefined> {
  let paths: string[];
  try {
    paths = await listFiles(dir, () => true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
  if (paths.length === 0) return undefined;
  const out = new Map<string, FileContent>();
  for (const p of paths) out.set(p, fileContent(await readFile(join(dir, p))));
  return out;
}

/** Replace a directory with exactly these files. */
export async function writePackageDir(dir: string, files: PackageFiles): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  for (const [path, content] of files) {
    if (path.split('/').some((s) => s === '..' || s === ''))
      throw new RunError('unsafe-path', `refusing to write "${path}": not a path inside the package`);
    const full = join(dir, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
  }
}

/** Text files (what the variant's mutations read) apart from binary ones (carried through untouched). */
export function splitBinary(files: PackageFiles): { text: Map<string, string>; binary: Map<string, Uint8Array> } {
  const text = new Map<string, string>();
  const binary = new Map<string, Uint8Array>();
  for (const [path, content] of files) {
    if (typeof content === 'string') text.set(path, content);
    else binary.set(path, content);
  }
  return { text, binary };
}
