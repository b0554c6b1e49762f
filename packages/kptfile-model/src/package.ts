/**
 * A kpt package on disk: read it (Kptfile, KRM resources with their file and index, other
 * files, subpackages, `.krmignore`; symlinks are listed, never followed) and write files back
 * atomically (a temporary sibling, then a rename), touching only files whose bytes change.
 */
/// <reference types="node" preserve="true" />
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join, posix, resolve, sep } from 'node:path';
import { parseDocument, type Document } from 'yaml';
import { KptfileError, type KptfileIssue } from './errors.js';
import { KRMIGNORE_FILE, parseKrmIgnore, type KrmIgnore } from './krmignore.js';
import { parseKptfile, type ParsedKptfile } from './parse.js';
import { KPTFILE_NAME } from './types.js';
import { chunkHasContent, rebuildYamlFile, splitYamlDocuments } from './yaml-file.js';

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

export interface PackageResource {
  /** The file it is in, relative to the package root. */
  readonly file: string;
  /** Its position among the documents of that file that hold a value (0-based). */
  readonly index: number;
  /** The document's exact text (after its `---` line, if any). */
  readonly text: string;
  /** The document as plain data. */
  readonly object: Record<string, unknown>;
  /** The parsed document (comments and formatting kept). */
  readonly document: Document;
}

export interface KptPackage {
  readonly dir: string;
  readonly kptfile?: ParsedKptfile;
  readonly resources: readonly PackageResource[];
  /** Every file of this package (subpackages excluded), in path order. */
  readonly files: readonly PackageFile[];
  /** Directories (relative) holding their own Kptfile: package boundaries, not read. */
  readonly subpackages: readonly string[];
}

const isYamlName = (name: string): boolean => /\.ya?ml$/i.test(name);

function isKrmObject(v: unknown): v is Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o['apiVersion'] === 'string' && typeof o['kind'] === 'string';
}

/** The KRM resources of a YAML file; undefined when not every document is a KRM object. */
export function parseResources(path: string, text: string, issues: KptfileIssue[]): PackageResource[] | undefined {
  const out: PackageResource[] = [];
  let index = 0;
  let allKrm = true;
  for (const chunk of splitYamlDocuments(text)) {
    if (!chunkHasContent(chunk.body)) continue;
    const document = parseDocument(chunk.body);
    if (document.errors.length > 0) {
      const e = document.errors[0];
      issues.push({ code: 'yaml-syntax', file: path, field: `document ${index}`, message: `invalid YAML: ${e?.message.split('\n')[0] ?? ''}` });
      return undefined;
    }
    const object = document.toJS() as unknown;
    if (!isKrmObject(object)) allKrm = false;
    else out.push({ file: path, index, text: chunk.body, object, document });
    index++;
  }
  return allKrm && out.length > 0 ? out : undefined;
}

/** Reads a package directory. Throws `KptfileError` naming the file for a broken Kptfile or YAML. */
export async function readPackage(dir: string): Promise<KptPackage> {
  const root = resolve(dir);
  const issues: KptfileIssue[] = [];
  const files: PackageFile[] = [];
  const resources: PackageResource[] = [];
  const subpackages: string[] = [];
  let ignore: KrmIgnore | undefined;
  try {
    ignore = parseKrmIgnore(await fs.readFile(join(root, KRMIGNORE_FILE), 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  let kptfile: ParsedKptfile | undefined;

  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(join(root, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const abs = join(root, path);
      if (entry.isSymbolicLink()) {
        files.push({ path, kind: 'symlink', content: Buffer.alloc(0), target: await fs.readlink(abs) });
        continue;
      }
      if (entry.isDirectory()) {
        if (entry.name === '.git') continue;
        if (rel !== '' || entry.name !== '') {
          const hasKptfile = await fs
            .lstat(join(abs, KPTFILE_NAME))
            .then((s) => s.isFile())
            .catch(() => false);
          if (hasKptfile) {
            subpackages.push(path);
            continue;
          }
        }
        await walk(path);
        continue;
      }
      if (!entry.isFile()) continue;
      const content = await fs.readFile(abs);
      if (path === KPTFILE_NAME) {
        try {
          kptfile = parseKptfile(content.toString('utf8'), path);
        } catch (e) {
          if (e instanceof KptfileError) issues.push(...e.issues);
          else throw e;
        }
        files.push({ path, kind: 'kptfile', content });
        continue;
      }
      if (ignore?.ignores(path)) {
        files.push({ path, kind: 'ignored', content });
        continue;
      }
      if (isYamlName(entry.name)) {
        const parsed = parseResources(path, content.toString('utf8'), issues);
        if (parsed) {
          resources.push(...parsed);
          files.push({ path, kind: 'krm', content });
          continue;
        }
      }
      files.push({ path, kind: 'other', content });
    }
  };
  await walk('');
  if (issues.length > 0) throw new KptfileError(issues);
  return { dir: root, ...(kptfile ? { kptfile } : {}), resources, files, subpackages };
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
 * Writes files into a package directory atomically per file (temporary sibling + rename): all
 * new contents are staged first, so an error before the renames leaves the directory as it was.
 * Files whose bytes do not change are not touched. Throws `KptfileError` for bad paths.
 */
export async function writePackage(dir: string, files: readonly FileWrite[], options: WritePackageOptions = {}): Promise<WritePackageResult> {
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

  const current = await readPackageFiles(root);
  const staged: { tmp: string; dest: string; path: string }[] = [];
  const unchanged: string[] = [];
  try {
    for (const f of files) {
      const bytes = typeof f.content === 'string' ? Buffer.from(f.content, 'utf8') : Buffer.from(f.content);
      const old = current.get(f.path);
      if (old?.equals(bytes)) {
        unchanged.push(f.path);
        continue;
      }
      const dest = join(root, ...f.path.split('/'));
      if (!resolve(dest).startsWith(root + sep)) throw new KptfileError([{ code: 'package-layout', file: f.path, field: '', message: 'outside the package' }]);
      await fs.mkdir(resolve(dest, '..'), { recursive: true });
      const tmp = `${dest}.kdelta-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      await fs.writeFile(tmp, bytes, { flag: 'wx' });
      staged.push({ tmp, dest, path: f.path });
    }
  } catch (e) {
    await Promise.all(staged.map((s) => fs.rm(s.tmp, { force: true })));
    throw e;
  }
  for (const s of staged) await fs.rename(s.tmp, s.dest);
  const deleted: string[] = [];
  if (options.prune) {
    for (const path of current.keys()) {
      if (seen.has(path)) continue;
      await fs.rm(join(root, ...path.split('/')), { force: true });
      deleted.push(path);
    }
  }
  return { written: staged.map((s) => s.path), deleted, unchanged };
}

/** The regular files of the package at `root` (subpackages, .git and symlinks excluded). */
async function readPackageFiles(root: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (rel: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(join(root, rel), { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name === '.git') continue;
        const sub = await fs.lstat(join(root, path, KPTFILE_NAME)).then((s) => s.isFile(), () => false);
        if (!sub) await walk(path);
      } else if (entry.isFile()) out.set(path, await fs.readFile(join(root, path)));
    }
  };
  await walk('');
  return out;
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
    else throw new KptfileError([{ code: 'package-layout', file: '', field: '', message: 'a resource has neither a local nor an upstream place' }]);
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
