/**
 * A kpt package on disk, read through the one in-memory model (`PackageTree`/`PackageView`):
 * `readPackage` gives the package's Kptfile, KRM resources with their file and index, other
 * files, subpackages and `.krmignore` (symlinks are listed, never followed) with a view to edit;
 * `savePackage` and `writePackage` write back only the files whose bytes change, all or nothing:
 * the new tree is built in a work copy and swapped in (`writeTreeChanges`, swap.ts).
 */
/// <reference types="node" preserve="true" />
import { posix, resolve } from 'node:path';
import { KptfileError, type KptfileIssue } from './errors.js';
import { parseKptfile, type ParsedKptfile } from './parse.js';
import { notUtf8, PackageTree, type PackageView, type TreeChanges } from './package-tree.js';
import { writeTreeChanges } from './package-write.js';
import type { PackageResource } from './resources.js';
import { KPTFILE_NAME } from './types.js';
import { chunkHasContent, rebuildYamlFile, splitYamlDocuments } from './yaml-file.js';

export { parseResources, type PackageResource } from './resources.js';

export type PackageFileKind =
  /** the package's Kptfile */
  | 'kptfile'
  /** a `*.yaml`/`*.yml` file whose documents are all KRM objects */
  | 'krm'
  /** any other file (including YAML that is not KRM) */
  | 'other'
  /** matched by `.krmignore`: kept, never parsed */
  | 'ignored'
  /** a symbolic link: recorded, not followed */
  | 'symlink';

export interface PackageFile {
  /** Path relative to the package root, `/`-separated. */
  readonly path: string;
  readonly kind: PackageFileKind;
  /** The file's bytes (empty for symlinks). */
  readonly content: Buffer;
  /** For symlinks: where the link points. */
  readonly target?: string;
}

/** A package as read: what it held then, and a view of it to edit in memory. */
export interface KptPackage {
  readonly dir: string;
  readonly kptfile?: ParsedKptfile;
  readonly resources: readonly PackageResource[];
  /** Every file of this package (subpackages excluded), in path order. */
  readonly files: readonly PackageFile[];
  /** Directories (relative) holding their own Kptfile: package boundaries, not read. */
  readonly subpackages: readonly string[];
  /** The package in memory (its tree holds the subpackages too): edit it, then `savePackage`. */
  readonly view: PackageView;
  /** The tree as read from disk, unchanged: what `savePackage` compares `view` with. */
  readonly base: PackageTree;
}

function missingDirectory(dir: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, scandir '${dir}'`), { code: 'ENOENT', path: dir });
}

/**
 * What the package at `view` holds: its Kptfile parsed and checked, its resources, each own file
 * with its kind. Throws `KptfileError` naming the file for a broken Kptfile or YAML.
 */
export function describePackage(view: PackageView): Pick<KptPackage, 'kptfile' | 'resources' | 'files' | 'subpackages'> {
  const issues: KptfileIssue[] = [];
  let kptfile: ParsedKptfile | undefined;
  const kptfileText = view.kptfileText();
  if (kptfileText !== undefined && !view.tree.isUtf8(view.pathOf(KPTFILE_NAME))) issues.push(notUtf8(KPTFILE_NAME));
  else if (kptfileText !== undefined) {
    try {
      kptfile = parseKptfile(kptfileText, KPTFILE_NAME);
    } catch (e) {
      if (!(e instanceof KptfileError)) throw e;
      issues.push(...e.issues);
    }
  }
  let resources: readonly PackageResource[] = [];
  try {
    resources = view.resources();
  } catch (e) {
    if (!(e instanceof KptfileError)) throw e;
    issues.push(...e.issues);
  }
  if (issues.length > 0) throw new KptfileError(issues);

  const krm = new Set(resources.map((r) => r.file));
  const ignore = view.krmIgnore();
  const files: PackageFile[] = [];
  const subpackages: string[] = [];
  const walk = (rel: string): void => {
    for (const name of view.list(rel)) {
      const path = rel ? `${rel}/${name}` : name;
      const type = view.typeOf(path);
      if (type === 'symlink') {
        files.push({ path, kind: 'symlink', content: Buffer.alloc(0), target: view.tree.linkTarget(view.pathOf(path)) ?? '' });
      } else if (type === 'dir') {
        if (view.at(path).hasKptfile()) subpackages.push(path);
        else walk(path);
      } else if (type === 'file') {
        const content = view.tree.bytes(view.pathOf(path))!;
        const kind: PackageFileKind =
          path === KPTFILE_NAME ? 'kptfile' : ignore?.ignores(path) ? 'ignored' : krm.has(path) ? 'krm' : 'other';
        files.push({ path, kind, content });
      }
    }
  };
  if (view.exists()) walk('');
  return { ...(kptfile ? { kptfile } : {}), resources, files, subpackages };
}

/** Reads a package directory. Throws `KptfileError` naming the file for a broken Kptfile or YAML. */
export async function readPackage(dir: string): Promise<KptPackage> {
  const root = resolve(dir);
  const base = PackageTree.read(root);
  if (!base) throw missingDirectory(root);
  const view = base.clone().package();
  return { dir: root, ...describePackage(view), view, base };
}

/**
 * Writes what changed in `pkg.view` since `readPackage` back to `pkg.dir`: only files whose
 * bytes differ are written; every new file is staged before anything in the package is touched.
 */
export async function savePackage(pkg: Pick<KptPackage, 'dir' | 'view' | 'base'>): Promise<TreeChanges> {
  return writeTreeChanges(pkg.dir, pkg.base, pkg.view.tree);
}

/** What to write: a path relative to the package root and its new content. */
export interface FileWrite {
  readonly path: string;
  readonly content: string | Uint8Array;
}

export interface WritePackageOptions {
  /** Delete files of this package (subpackages and symlinks excepted) not in `files`. */
  prune?: boolean;
}

export interface WritePackageResult {
  readonly written: readonly string[];
  readonly deleted: readonly string[];
  readonly unchanged: readonly string[];
}

function checkPath(path: string): string | undefined {
  if (path === '' || path.includes('\0')) return 'empty or invalid path';
  if (path.includes('\\')) return 'use / as the path separator';
  if (posix.isAbsolute(path)) return 'path must be relative to the package';
  const n = posix.normalize(path);
  if (n !== path || n === '.' || n.startsWith('../') || n === '..') return 'path must be normalized and stay inside the package';
  if (n.split('/').includes('.git')) return 'refusing to write inside .git';
  return undefined;
}

/**
 * Writes files into a package directory: the package is read as a tree, the files are written
 * into a copy of it, and what differs is written back (`writeTreeChanges`), all or nothing: an
 * error or a kill leaves the directory wholly as it was or wholly as written. Files whose bytes do not change are not touched.
 * Throws `KptfileError` for bad paths.
 */
export async function writePackage(
  dir: string,
  files: readonly FileWrite[],
  options: WritePackageOptions = {},
): Promise<WritePackageResult> {
  const root = resolve(dir);
  const issues: KptfileIssue[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    const why = checkPath(f.path);
    if (why) issues.push({ code: 'package-layout', file: f.path, field: '', message: why });
    if (seen.has(f.path)) issues.push({ code: 'package-layout', file: f.path, field: '', message: 'written twice' });
    seen.add(f.path);
  }
  if (issues.length > 0) throw new KptfileError(issues);

  const base = PackageTree.read(root) ?? PackageTree.empty();
  const next = base.clone();
  const written: string[] = [];
  const unchanged: string[] = [];
  for (const f of files) {
    const bytes = typeof f.content === 'string' ? Buffer.from(f.content, 'utf8') : Buffer.from(f.content);
    if (base.bytes(f.path)?.equals(bytes)) {
      unchanged.push(f.path);
      continue;
    }
    next.write(f.path, bytes);
    written.push(f.path);
  }
  const deleted: string[] = [];
  if (options.prune) {
    for (const { path } of base.package().ownFiles().files) {
      if (seen.has(path)) continue;
      next.delete(path);
      deleted.push(path);
    }
  }
  await writeTreeChanges(root, base, next);
  return { written, deleted, unchanged };
}

/** The files of a package as read, for writing back (`writePackage(dir, packageFiles(pkg))`). */
export function packageFiles(pkg: KptPackage): FileWrite[] {
  return pkg.files.filter((f) => f.kind !== 'symlink').map((f) => ({ path: f.path, content: f.content }));
}

/** A resource after a merge, with where it was locally and/or upstream. */
export interface PlacedResource {
  /** The resource's YAML text (one document). */
  readonly text: string;
  readonly local?: { file: string; index: number };
  readonly upstream?: { file: string; index: number };
}

/**
 * Lays merged resources out in files: a resource stays in its local file and position; one
 * added by the merge goes to the file upstream had it in (appended after the local ones).
 * Files of `local` keep their comments, separators and unchanged documents byte for byte.
 * Returns the KRM files to write; a local KRM file left without resources is not returned.
 */
export function layoutResources(local: KptPackage | undefined, resources: readonly PlacedResource[]): FileWrite[] {
  const byFile = new Map<string, { kept: Map<number, string>; added: { order: number; text: string }[] }>();
  const slot = (file: string) => {
    let s = byFile.get(file);
    if (!s) byFile.set(file, (s = { kept: new Map(), added: [] }));
    return s;
  };
  for (const r of resources) {
    if (r.local) slot(r.local.file).kept.set(r.local.index, r.text);
    else if (r.upstream) slot(r.upstream.file).added.push({ order: r.upstream.index, text: r.text });
    else
      throw new KptfileError([
        { code: 'package-layout', file: '', field: '', message: 'a resource has neither a local nor an upstream place' },
      ]);
  }
  const originals = new Map<string, string>();
  for (const f of local?.files ?? []) if (f.kind === 'krm') originals.set(f.path, f.content.toString('utf8'));
  const out: FileWrite[] = [];
  const paths = new Set([...originals.keys(), ...byFile.keys()]);
  for (const path of [...paths].sort()) {
    const s = byFile.get(path);
    if (!s) continue;
    const added = s.added.sort((a, b) => a.order - b.order).map((a) => a.text);
    const original = originals.get(path);
    if (original === undefined) {
      const kept = [...s.kept.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => t);
      out.push({ path, content: rebuildYamlFile('', new Map(), [...kept, ...added]) });
      continue;
    }
    const count = local?.resources.filter((r) => r.file === path).length ?? 0;
    const bodies = new Map<number, string | null>();
    for (let k = 0; k < count; k++) bodies.set(k, s.kept.has(k) ? (s.kept.get(k) as string) : null);
    const content = rebuildYamlFile(original, bodies, added);
    if (splitYamlDocuments(content).some((c) => chunkHasContent(c.body))) out.push({ path, content });
  }
  return out;
}
