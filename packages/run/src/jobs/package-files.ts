import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { PackageTree } from '@kdelta/kptfile-model';
import { fileContent, type FileContent, type PackageFiles } from './file-content.js';
import { RunError } from '../errors.js';

const byPath = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

/** Whether a package path names a file inside the package: no `..`, `.` or empty segment. */
function assertInsidePackage(path: string): void {
  if (path.split('/').some((s) => s === '..' || s === '' || s === '.'))
    throw new RunError('unsafe-path', `refusing to write "${path}": not a path inside the package`);
}

/** What neither a package directory nor its files hold: git's own, and installed dependencies. */
const isLeftOut = (path: string): boolean => path.split('/').some((s) => s === '.git' || s === 'node_modules');

/**
 * A package directory's files (path → text, bytes when not UTF-8, an executable file, or a
 * symlink with its target); undefined when absent or empty. Symlinks are recorded, never
 * followed: what they point at is not the package's.
 */
export async function readPackageDir(dir: string): Promise<Map<string, FileContent> | undefined> {
  const out = new Map<string, FileContent>();
  const walk = async (abs: string): Promise<void> => {
    for (const entry of await readdir(abs, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === 'node_modules') continue;
      const full = join(abs, entry.name);
      const rel = relative(dir, full).split(sep).join('/');
      if (entry.isSymbolicLink()) out.set(rel, { kind: 'symlink', target: await readlink(full) });
      else if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        const bytes = await readFile(full);
        // git keeps one mode bit of a file: whether its owner may run it
        out.set(rel, ((await lstat(full)).mode & 0o100) !== 0 ? { kind: 'executable', bytes } : fileContent(bytes));
      }
    }
  };
  try {
    if ((await lstat(dir)).isSymbolicLink())
      throw new RunError('symlinked-package', `${dir} is a symlink: a package directory is never followed`);
    await walk(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
  if (out.size === 0) return undefined;
  return new Map([...out].sort(byPath));
}

/**
 * Refuses a package directory `directory` of the repository at `root` when it, or a directory
 * above it inside the repository, is a symlink: reading it would push files from wherever it
 * points (outside the repository, the runner's own), and writing it would write there.
 */
export async function assertNoSymlinkIn(root: string, directory: string, repository: string): Promise<void> {
  const parts = directory.split('/').filter((p) => p !== '' && p !== '.');
  for (let i = 1; i <= parts.length; i++) {
    const path = parts.slice(0, i).join('/');
    let link: string | undefined;
    try {
      const stats = await lstat(join(root, path));
      if (!stats.isSymbolicLink()) continue;
      link = await readlink(join(root, path));
    } catch {
      return; // missing: nothing to follow (the package is new)
    }
    const what = path === parts.join('/') ? 'the package directory' : `${path}, a directory above the package,`;
    throw new RunError(
      'symlinked-package',
      `${parts.join('/')} in ${repository}: ${what} is a symlink (to ${link}): kdelta never follows a symlink out of a package; left alone`,
      { path: parts.join('/') },
    );
  }
}

/**
 * Replace a directory with exactly these files: text and bytes as regular files, executable ones
 * with mode 755, symlinks as symlinks (made last, so that no file is ever written through one).
 */
export async function writePackageDir(dir: string, files: PackageFiles): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  const links: [string, string][] = [];
  for (const [path, content] of files) {
    assertInsidePackage(path);
    const full = join(dir, path);
    if (typeof content === 'object' && 'kind' in content && content.kind === 'symlink') {
      links.push([full, content.target]);
      continue;
    }
    await mkdir(dirname(full), { recursive: true });
    if (typeof content === 'string' || content instanceof Uint8Array) await writeFile(full, content);
    else {
      await writeFile(full, content.bytes);
      await chmod(full, 0o755);
    }
  }
  for (const [full, target] of links) {
    await mkdir(dirname(full), { recursive: true });
    await symlink(target, full);
  }
}

/**
 * The files as a package tree, in memory, as {@link writePackageDir} would write them and
 * kptfile-model would read them back: text and bytes as files, executable ones with their bit,
 * symlinks as symlinks (recorded last: a symlink never stands where other files go). `source`
 * names the tree's files in errors.
 */
export function packageTreeOf(files: PackageFiles, source: string): PackageTree {
  const tree = PackageTree.empty();
  const links: [string, string][] = [];
  for (const [path, content] of files) {
    assertInsidePackage(path);
    // never part of a package tree (kptfile-model does not read it from a directory either)
    if (path.split('/').includes('.git')) continue;
    if (typeof content === 'string' || content instanceof Uint8Array) tree.write(path, content);
    else if (content.kind === 'executable') tree.write(path, content.bytes, { executable: true });
    else links.push([path, content.target]);
  }
  for (const [path, target] of links) {
    if (tree.exists(path))
      throw new RunError('unsafe-path', `refusing to write "${path}": a symlink where the package has a directory of files`);
    tree.symlink(path, target);
  }
  tree.source = source;
  return tree;
}

/**
 * A tree's files and symlinks as {@link readPackageDir} reads them from a directory (sorted,
 * `.git` and `node_modules` left out; executable files and symlinks as such).
 */
export function packageFilesOf(tree: PackageTree): Map<string, FileContent> {
  const files = new Map<string, FileContent>();
  for (const p of tree.allFiles().keys()) {
    if (isLeftOut(p)) continue;
    const bytes = tree.bytes(p)!;
    files.set(p, tree.isExecutable(p) ? { kind: 'executable', bytes } : fileContent(bytes));
  }
  for (const [p, target] of tree.allLinks()) if (!isLeftOut(p)) files.set(p, { kind: 'symlink', target });
  return new Map([...files].sort(byPath));
}
