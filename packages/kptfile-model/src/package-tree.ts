/**
 * A kpt package tree in memory: the root package with every nested package, its files as bytes
 * by `/`-separated relative path with their executable bit (git's 100755), its directories (empty
 * ones included, as kpt keeps them) and its symlinks (recorded, never followed). Read from disk once; `.git` is never read. Views at
 * any directory give one package: its Kptfile, its own files (nested packages excluded) and its
 * KRM resources, parsed only when asked.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseYamlDocument } from '@kdelta/merge-core';
import { KptfileError, type KptfileIssue } from './errors.js';
import { KRMIGNORE_FILE, parseKrmIgnore, type KrmIgnore } from './krmignore.js';
import { parseResources, type PackageResource } from './resources.js';
import { KPTFILE_NAME } from './types.js';
import { withLineEndsOf } from './yaml-file.js';

type TreeNode =
  | { readonly type: 'dir'; readonly children: Set<string> }
  | {
      readonly type: 'file';
      readonly bytes: Buffer;
      text?: string;
      readonly executable?: boolean;
      notUtf8?: boolean;
      /** Its KRM resources, parsed once: a node is replaced, never changed, when its file is written. */
      parsed?: { rel: string; resources: PackageResource[] | undefined; issues: KptfileIssue[] };
    }
  | { readonly type: 'symlink'; readonly target: string };

/** One file of a package, as the package sees it: path relative to the package root. */
export interface TreeFile {
  readonly path: string;
  readonly text: string;
}

/** What differs between two trees: what to write, delete and create to turn one into the other. */
export interface TreeChanges {
  /** Files new, with other bytes or with another executable bit (the new tree's). */
  readonly written: readonly { readonly path: string; readonly bytes: Buffer; readonly executable?: boolean }[];
  /** Symlinks new or pointing elsewhere. */
  readonly links: readonly { readonly path: string; readonly target: string }[];
  /** Files, symlinks and directories gone (a directory listed once, not its content), deepest first. */
  readonly deleted: readonly string[];
  /** Directories new in the new tree (parents before children). */
  readonly created: readonly string[];
}

const SKIPPED = '.git';

const parentOf = (path: string): string => {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
};
const baseOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const joinRel = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A path the tree cannot hold, as a KptfileError (`package-layout`) naming it. */
function layoutError(path: string, message: string): KptfileError {
  return new KptfileError([{ code: 'package-layout', file: path === '' ? '.' : path, field: '', message }]);
}

/** Normalises `a/./b/`, `/x` and `.` to the tree's own spelling (`a/b`, `x`, ``). */
export function treePath(path: string): string {
  const parts: string[] = [];
  for (const p of path.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') throw layoutError(path, 'the path leaves the package');
    parts.push(p);
  }
  return parts.join('/');
}

export class PackageTree {
  private readonly nodes: Map<string, TreeNode>;
  /** Changes with every edit: views cache what they computed for one version. */
  private editCount = 0;
  /** Where the tree was read from (or a label for it): names files in messages. */
  source = '';

  private constructor(nodes: Map<string, TreeNode>) {
    this.nodes = nodes;
  }

  /** A number that changes whenever the tree is edited. */
  get version(): number {
    return this.editCount;
  }

  /** `rel` named for messages: below {@link source} when there is one. */
  describe(rel: string): string {
    const r = treePath(rel);
    return this.source === '' ? r : r === '' ? this.source : join(this.source, ...r.split('/'));
  }

  /** A tree with nothing in it (a root directory only). */
  static empty(): PackageTree {
    return new PackageTree(new Map([['', { type: 'dir', children: new Set() }]]));
  }

  /** Reads the directory tree at `dir` once: files, directories and symlinks; `.git` skipped. A missing `dir` gives undefined. */
  static read(dir: string): PackageTree | undefined {
    try {
      if (!lstatSync(dir).isDirectory()) return undefined;
    } catch {
      return undefined;
    }
    const tree = PackageTree.empty();
    const walk = (abs: string, rel: string) => {
      for (const e of readdirSync(abs, { withFileTypes: true })) {
        if (e.name === SKIPPED) continue;
        const childAbs = join(abs, e.name);
        const childRel = joinRel(rel, e.name);
        if (e.isSymbolicLink()) tree.attach(childRel, { type: 'symlink', target: readlinkSync(childAbs) });
        else if (e.isDirectory()) {
          tree.attach(childRel, { type: 'dir', children: new Set() });
          walk(childAbs, childRel);
        } else if (e.isFile()) {
          // git keeps one mode bit of a file: whether it is executable (its owner's bit)
          const executable = (statSync(childAbs).mode & 0o100) !== 0;
          tree.attach(childRel, { type: 'file', bytes: readFileSync(childAbs), ...(executable ? { executable } : {}) });
        }
      }
    };
    walk(dir, '');
    tree.source = dir;
    return tree;
  }

  /** A tree built from files (path → text or bytes) and, optionally, empty directories. */
  static fromFiles(files: Iterable<readonly [string, string | Uint8Array]>, dirs: Iterable<string> = []): PackageTree {
    const tree = PackageTree.empty();
    for (const [path, content] of files) tree.write(path, content);
    for (const d of dirs) tree.mkdir(d);
    return tree;
  }

  /** An independent copy (file bytes are shared: they are never changed in place). */
  clone(): PackageTree {
    const nodes = new Map<string, TreeNode>();
    for (const [p, n] of this.nodes) nodes.set(p, n.type === 'dir' ? { type: 'dir', children: new Set(n.children) } : n);
    const copy = new PackageTree(nodes);
    copy.source = this.source;
    return copy;
  }

  private attach(path: string, node: TreeNode): void {
    const parent = this.nodes.get(parentOf(path));
    if (parent?.type !== 'dir') throw layoutError(parentOf(path), 'not a directory');
    this.editCount++;
    parent.children.add(baseOf(path));
    this.nodes.set(path, node);
  }

  /** Whether anything (file, directory or symlink) is at `path` (lstat: symlinks are not followed). */
  exists(path: string): boolean {
    return this.nodes.has(treePath(path));
  }

  isDir(path: string): boolean {
    return this.nodes.get(treePath(path))?.type === 'dir';
  }

  isFile(path: string): boolean {
    return this.nodes.get(treePath(path))?.type === 'file';
  }

  /** The file's bytes; undefined when there is no regular file at `path`. */
  bytes(path: string): Buffer | undefined {
    const n = this.nodes.get(treePath(path));
    return n?.type === 'file' ? n.bytes : undefined;
  }

  /**
   * The file as UTF-8 text (decoded once); undefined when there is no regular file at `path`.
   * Bytes that are not UTF-8 come out as U+FFFD: callers that parse the text check `isUtf8`
   * first, and files are written back from their bytes, never from this text.
   */
  text(path: string): string | undefined {
    const n = this.nodes.get(treePath(path));
    if (n?.type !== 'file') return undefined;
    if (n.text === undefined) {
      try {
        n.text = strictUtf8.decode(n.bytes);
      } catch {
        n.text = n.bytes.toString('utf8');
        n.notUtf8 = true;
      }
    }
    return n.text;
  }

  /** Whether the file at `path` is executable (git's mode 100755). */
  isExecutable(path: string): boolean {
    const n = this.nodes.get(treePath(path));
    return n?.type === 'file' && n.executable === true;
  }

  /** Sets or clears the executable bit of the file at `path` (nothing there: no change). */
  setExecutable(path: string, executable: boolean): void {
    const p = treePath(path);
    const n = this.nodes.get(p);
    if (n?.type !== 'file' || (n.executable === true) === executable) return;
    this.editCount++;
    const { executable: _, ...same } = n;
    this.nodes.set(p, executable ? { ...same, executable } : same);
  }

  /** Every symlink under `dir` (nested packages included): path relative to `dir` → target. */
  allLinks(dir = ''): Map<string, string> {
    const out = new Map<string, string>();
    const root = treePath(dir);
    for (const [p, n] of this.nodes) {
      if (n.type !== 'symlink') continue;
      if (root === '') out.set(p, n.target);
      else if (p.startsWith(`${root}/`)) out.set(p.slice(root.length + 1), n.target);
    }
    return out;
  }

  /**
   * The KRM resources of the YAML file at `path`, named `rel` in them and in `issues`; undefined
   * when not every document is a KRM object. Parsed once per content, shared by the tree's clones:
   * a big file is not parsed again after every edit elsewhere in the tree.
   */
  fileResources(path: string, rel: string, issues: KptfileIssue[]): readonly PackageResource[] | undefined {
    const n = this.nodes.get(treePath(path));
    if (n?.type !== 'file') return undefined;
    if (n.parsed?.rel !== rel) {
      const found: KptfileIssue[] = [];
      n.parsed = { rel, resources: parseResources(rel, this.text(path)!, found), issues: found };
    }
    issues.push(...n.parsed.issues);
    return n.parsed.resources;
  }

  /** Whether the file at `path` is UTF-8 text (false for anything but a regular file). */
  isUtf8(path: string): boolean {
    if (this.text(path) === undefined) return false;
    return (this.nodes.get(treePath(path)) as { notUtf8?: boolean }).notUtf8 !== true;
  }

  /** Where the symlink at `path` points; undefined when there is no symlink there. */
  linkTarget(path: string): string | undefined {
    const n = this.nodes.get(treePath(path));
    return n?.type === 'symlink' ? n.target : undefined;
  }

  /** Names in directory `dir`, sorted; empty when it is not a directory. */
  list(dir: string): string[] {
    const n = this.nodes.get(treePath(dir));
    return n?.type === 'dir' ? [...n.children].sort(byName) : [];
  }

  /** The node type at `path`. */
  typeOf(path: string): 'dir' | 'file' | 'symlink' | undefined {
    return this.nodes.get(treePath(path))?.type;
  }

  /**
   * Writes a file, creating its parent directories; replaces whatever was at `path`. Text
   * written over a file whose every line ends in CRLF gets CRLF line ends too: edits (a merge, a
   * mutation, a render) print with LF, and must not change a Windows-style file's line endings.
   * A file written over a file keeps its executable bit (new content, same mode) unless
   * `executable` says otherwise; a new one is not executable unless it says so.
   */
  write(path: string, content: string | Uint8Array, options: { readonly executable?: boolean } = {}): void {
    const p = treePath(path);
    if (p === '') throw layoutError(path, 'a file cannot be the root of a package tree');
    if (typeof content === 'string' && this.isFile(p)) content = withLineEndsOf(this.text(p)!, content);
    this.mkdir(parentOf(p));
    const executable = options.executable ?? this.isExecutable(p);
    if (this.nodes.has(p)) this.delete(p);
    const mode = executable ? { executable } : {};
    const node: TreeNode =
      typeof content === 'string'
        ? { type: 'file', bytes: Buffer.from(content, 'utf8'), text: content, ...mode }
        : { type: 'file', bytes: Buffer.from(content), ...mode };
    this.attach(p, node);
  }

  /** Records a symlink (never followed). */
  symlink(path: string, target: string): void {
    const p = treePath(path);
    this.mkdir(parentOf(p));
    if (this.nodes.has(p)) this.delete(p);
    this.attach(p, { type: 'symlink', target });
  }

  /** Creates a directory and its parents (`mkdir -p`); a file in the way is an error. */
  mkdir(path: string): void {
    const p = treePath(path);
    const n = this.nodes.get(p);
    if (n?.type === 'dir') return;
    if (n) throw layoutError(p, 'not a directory');
    this.mkdir(parentOf(p));
    this.attach(p, { type: 'dir', children: new Set() });
  }

  /** Deletes a file, symlink or whole directory (`rm -rf`); nothing there is no error. The root is emptied. */
  delete(path: string): void {
    const p = treePath(path);
    const n = this.nodes.get(p);
    if (!n) return;
    if (n.type === 'dir') for (const c of [...n.children]) this.delete(joinRel(p, c));
    if (p === '') return;
    this.editCount++;
    this.nodes.delete(p);
    const parent = this.nodes.get(parentOf(p));
    if (parent?.type === 'dir') parent.children.delete(baseOf(p));
  }

  /** Copies the subtree at `from` of `source` to `to` in this tree (merged over what is there, like `cp -r`). */
  copyFrom(source: PackageTree, from: string, to: string, filter: (rel: string) => boolean = () => true): void {
    const f = treePath(from);
    const t = treePath(to);
    if (!source.nodes.has(f)) return;
    const walk = (rel: string) => {
      if (rel !== '' && !filter(rel)) return;
      const node = source.nodes.get(rel === '' ? f : joinRel(f, rel));
      const dest = rel === '' ? t : joinRel(t, rel);
      if (!node) return;
      if (node.type === 'dir') {
        this.mkdir(dest);
        for (const c of node.children) walk(joinRel(rel, c));
      } else if (node.type === 'file') {
        this.mkdir(parentOf(dest));
        if (this.nodes.has(dest)) this.delete(dest);
        // what was learned of the bytes (their text, whether UTF-8, their resources) goes along
        this.attach(dest, { ...node });
      } else this.symlink(dest, node.target);
    };
    walk('');
  }

  /** Every regular file under `dir` (nested packages included), paths relative to `dir`. */
  allFiles(dir = ''): Map<string, string> {
    const out = new Map<string, string>();
    const root = treePath(dir);
    const walk = (rel: string) => {
      for (const c of this.list(joinRel(root, rel) || root)) {
        const r = joinRel(rel, c);
        const abs = joinRel(root, r);
        const t = this.typeOf(abs);
        if (t === 'dir') walk(r);
        else if (t === 'file') out.set(r, this.text(abs)!);
      }
    };
    walk('');
    return out;
  }

  /** The package at directory `dir` of this tree. */
  package(dir = ''): PackageView {
    return new PackageView(this, treePath(dir));
  }

  /** What to write, delete and create to turn `before` into this tree. */
  changesFrom(before: PackageTree): TreeChanges {
    const written: { path: string; bytes: Buffer; executable?: boolean }[] = [];
    const links: { path: string; target: string }[] = [];
    const deleted: string[] = [];
    const created: string[] = [];
    for (const [p, n] of this.nodes) {
      if (p === '') continue;
      const o = before.nodes.get(p);
      if (n.type === 'file') {
        const modeChanged = o?.type === 'file' && (o.executable === true) !== (n.executable === true);
        if (o?.type !== 'file' || modeChanged || (o.bytes !== n.bytes && !o.bytes.equals(n.bytes)))
          written.push({ path: p, bytes: n.bytes, ...(n.executable ? { executable: true } : {}) });
      } else if (n.type === 'symlink') {
        if (o?.type !== 'symlink' || o.target !== n.target) links.push({ path: p, target: n.target });
      } else if (o?.type !== 'dir') created.push(p);
    }
    for (const [p, o] of before.nodes) {
      if (p === '') continue;
      const n = this.nodes.get(p);
      const replaced = !n || n.type !== o.type;
      // a deleted directory's content goes with it
      const parent = parentOf(p);
      if (replaced && !(parent !== '' && this.nodes.get(parent)?.type !== 'dir')) deleted.push(p);
    }
    const depth = (p: string) => p.split('/').length;
    deleted.sort((a, b) => depth(b) - depth(a) || byName(a, b));
    created.sort((a, b) => depth(a) - depth(b) || byName(a, b));
    written.sort((a, b) => byName(a.path, b.path));
    return { written, links, deleted, created };
  }
}

// `ignoreBOM`: a byte order mark is kept in the text, as the bytes hold it
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A YAML file that is not UTF-8: an error, never decoded with U+FFFD in place of its bytes and
 * written back changed (kpt, through Go's yaml, refuses it too).
 */
export function notUtf8(file: string): KptfileIssue {
  return {
    code: 'not-utf8',
    file,
    field: '',
    message: 'not UTF-8 text: YAML files are read as UTF-8, and kdelta never rewrites bytes it cannot read',
  };
}

/** Whether a Kptfile's text names a git upstream (judged leniently: bad YAML names none). */
export function kptfileHasUpstream(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    const doc = parseYamlDocument(text);
    if (doc.errors.length > 0) return false;
    const data = doc.toJS() as { upstream?: { git?: unknown } } | null;
    return Boolean(data?.upstream?.git);
  } catch {
    return false;
  }
}

export interface NestedPackageOptions {
  /** List packages whose Kptfile names an upstream (default: no). */
  readonly includeRemote?: boolean;
  /** Look inside the remote packages listed (default: no). */
  readonly recurseIntoRemote?: boolean;
}

/** One package of a tree: the directory `dir` (``: the root), with its own files and its nested packages. */
export class PackageView {
  private ownCache: { version: number; own: { files: TreeFile[]; dirs: string[] } } | undefined;
  private resourceCache: { version: number; resources: PackageResource[] } | undefined;

  constructor(
    readonly tree: PackageTree,
    readonly dir: string,
  ) {}

  /** `rel` (relative to this package) as a path of the tree. */
  pathOf(rel: string): string {
    return this.abs(rel);
  }

  /** Copies `rel` of package `source` (any tree) to `rel` here, merged over what is there; `filter` sees paths below `rel`. */
  copyFrom(source: PackageView, rel: string, filter?: (below: string) => boolean): void {
    this.tree.copyFrom(source.tree, source.pathOf(rel), this.abs(rel), filter);
  }

  private abs(rel: string): string {
    const r = treePath(rel);
    return r === '' ? this.dir : joinRel(this.dir, r);
  }

  /** Whether the package directory exists. */
  exists(rel = ''): boolean {
    return this.tree.exists(this.abs(rel));
  }

  hasKptfile(): boolean {
    return this.tree.exists(this.abs(KPTFILE_NAME));
  }

  /** The Kptfile's text, if there is one. */
  kptfileText(): string | undefined {
    return this.tree.text(this.abs(KPTFILE_NAME));
  }

  /** Whether its Kptfile names an upstream: a remote package. */
  isRemote(): boolean {
    return kptfileHasUpstream(this.kptfileText());
  }

  text(rel: string): string | undefined {
    return this.tree.text(this.abs(rel));
  }

  /** The text of a file to parse as YAML; throws `KptfileError` naming it when it is not UTF-8. */
  yamlText(rel: string): string | undefined {
    const text = this.text(rel);
    if (text !== undefined && !this.tree.isUtf8(this.abs(rel))) throw new KptfileError([notUtf8(this.describe(rel))]);
    return text;
  }

  /** `rel` named for messages (below the tree's source). */
  describe(rel = ''): string {
    return this.tree.describe(this.abs(rel));
  }

  /** See {@link PackageTree.write}: a file written over a file keeps its executable bit. */
  write(rel: string, content: string | Uint8Array, options?: { readonly executable?: boolean }): void {
    this.tree.write(this.abs(rel), content, options);
  }

  delete(rel: string): void {
    this.tree.delete(this.abs(rel));
  }

  mkdir(rel: string): void {
    this.tree.mkdir(this.abs(rel));
  }

  list(rel = ''): string[] {
    return this.tree.list(this.abs(rel));
  }

  typeOf(rel: string): 'dir' | 'file' | 'symlink' | undefined {
    return this.tree.typeOf(this.abs(rel));
  }

  /** The package at `rel` below this one. */
  at(rel: string): PackageView {
    return new PackageView(this.tree, this.abs(rel));
  }

  /**
   * The package's own regular files (not its nested packages': directories holding a Kptfile;
   * not symlinks), in directory-walk order, with the directories it contains (kpt keeps empty ones).
   */
  ownFiles(): { readonly files: readonly TreeFile[]; readonly dirs: readonly string[] } {
    if (this.ownCache?.version === this.tree.version) return this.ownCache.own;
    const files: TreeFile[] = [];
    const dirs: string[] = [];
    const walk = (rel: string) => {
      for (const name of this.list(rel)) {
        const r = joinRel(rel, name);
        const t = this.typeOf(r);
        if (t === 'dir') {
          if (this.tree.exists(this.abs(`${r}/${KPTFILE_NAME}`))) continue;
          dirs.push(r);
          walk(r);
        } else if (t === 'file') files.push({ path: r, text: this.text(r)! });
      }
    };
    if (this.exists()) walk('');
    this.ownCache = { version: this.tree.version, own: { files, dirs } };
    return this.ownCache.own;
  }

  /** Relative paths of the packages nested in this one (sorted), at any depth. */
  nestedPackages(options: NestedPackageOptions = {}): string[] {
    const out: string[] = [];
    const walk = (rel: string) => {
      for (const name of this.list(rel)) {
        const r = joinRel(rel, name);
        if (name === SKIPPED || this.typeOf(r) !== 'dir') continue;
        if (this.exists(`${r}/${KPTFILE_NAME}`)) {
          const remote = this.at(r).isRemote();
          if (remote && !options.includeRemote) continue;
          out.push(r);
          if (remote && !options.recurseIntoRemote) continue;
        }
        walk(r);
      }
    };
    if (this.exists()) walk('');
    return out.sort();
  }

  /** The `.krmignore` of the package, if it has one. */
  krmIgnore(): KrmIgnore | undefined {
    const text = this.text(KRMIGNORE_FILE);
    return text === undefined ? undefined : parseKrmIgnore(text);
  }

  /**
   * The package's KRM resources (files whose documents are all KRM objects; `.krmignore`d files
   * excepted), parsed on first use. Throws `KptfileError` naming the file for broken YAML.
   */
  resources(): readonly PackageResource[] {
    if (this.resourceCache?.version === this.tree.version) return this.resourceCache.resources;
    const ignore = this.krmIgnore();
    const issues: KptfileIssue[] = [];
    const out: PackageResource[] = [];
    for (const f of this.ownFiles().files) {
      if (f.path === KPTFILE_NAME || ignore?.ignores(f.path) || !/\.ya?ml$/i.test(f.path)) continue;
      if (!this.tree.isUtf8(this.abs(f.path))) {
        issues.push(notUtf8(f.path));
        continue;
      }
      out.push(...(this.tree.fileResources(this.abs(f.path), f.path, issues) ?? []));
    }
    if (issues.length > 0) throw new KptfileError(issues);
    this.resourceCache = { version: this.tree.version, resources: out };
    return out;
  }
}
