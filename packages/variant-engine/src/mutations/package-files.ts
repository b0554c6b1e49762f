import { KdeltaError } from '@kdelta/errors';
import { keepingLines, parseYamlStream, withFinalLineBreak } from '@kdelta/merge-core';
import { KptfileError, PackageTree, type PackageView } from '@kdelta/kptfile-model';
import { type Document, isMap, isScalar, isSeq, type YAMLMap, type Node } from 'yaml';

/**
 * A package's files as Porch's PackageRevisionResources hold them: path (relative,
 * `/`-separated) → text. The mutations read it as a package tree holding exactly these files.
 */
export type PackageFiles = ReadonlyMap<string, string>;

export type VariantMutationErrorCode =
  | 'missing-file' // a file the variant needs is not in the package
  | 'empty-file'
  | 'invalid-yaml'
  | 'not-a-krm-object' // a document that is a list or a scalar, not a KRM object
  | 'wrong-type' // a field that is not the map or list it must be
  | 'invalid-package-context' // package-context.yaml without its ConfigMap or its data
  | 'invalid-injection-point' // an injection annotation with a bad value, or ambiguous condition types
  | 'ambiguous-injection'; // several in-cluster objects match one injection point equally

/** Why a variant could not be applied to a package; `file` is the package file, when one is to blame. */
export class VariantMutationError extends KdeltaError {
  override readonly name = 'VariantMutationError';
  declare readonly code: VariantMutationErrorCode;
  constructor(code: VariantMutationErrorCode, message: string, file?: string, path?: string) {
    super({ code, message, file, path });
  }
}

/** `*.yaml`, `*.yml` and `Kptfile`, the files Porch parses for KRM objects. */
export function isKrmFile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base === 'Kptfile' || base.endsWith('.yaml') || base.endsWith('.yml');
}

interface ParsedFile {
  readonly docs: Document.Parsed[];
  /** Snapshot of each document's value (JSON, key order included), to detect real changes. */
  readonly before: string[];
}

const isFileMap = (pkg: PackageView | PackageFiles): pkg is PackageFiles =>
  typeof (pkg as PackageFiles).get === 'function' && typeof (pkg as PackageFiles).entries === 'function';

/**
 * A package as the mutations see it: kptfile-model's package view, its YAML files parsed on first
 * use into `yaml` Documents, so comments and layout survive; only the files a mutation really
 * changed are printed again, and written into the package by {@link writeChanges}.
 *
 * Given a package view, the mutations read and edit its Kptfile and the files kptfile-model reads
 * as KRM resources (`.krmignore`d files, other files and nested packages are not theirs to edit).
 * Given Porch's files (a map), they see every file, as Porch does.
 */
export class PackageDocuments {
  /** The package the mutations edit. */
  readonly pkg: PackageView;
  private readonly everyFile: boolean;
  private scope: Set<string> | undefined;
  private readonly parsed = new Map<string, ParsedFile>();
  private otherYamlChecked = false;

  constructor(pkg: PackageView | PackageFiles) {
    this.everyFile = isFileMap(pkg);
    this.pkg = isFileMap(pkg) ? PackageTree.fromFiles(pkg).package() : pkg;
  }

  private files(): Set<string> {
    if (this.scope) return this.scope;
    if (this.everyFile) {
      this.scope = new Set(this.pkg.tree.allFiles(this.pkg.dir).keys());
      return this.scope;
    }
    let resources;
    try {
      resources = this.pkg.resources();
    } catch (error) {
      if (!(error instanceof KptfileError)) throw error;
      throw new VariantMutationError('invalid-yaml', error.message, error.file);
    }
    this.scope = new Set(resources.map((r) => r.file));
    if (this.pkg.hasKptfile()) this.scope.add('Kptfile');
    return this.scope;
  }

  has(path: string): boolean {
    return this.files().has(path);
  }

  paths(): string[] {
    return [...this.files()].sort();
  }

  /** The documents of a file; a YAML error throws `<file>: <reason>`. */
  documents(path: string): Document.Parsed[] {
    const hit = this.parsed.get(path);
    if (hit) return hit.docs;
    const text = this.has(path) ? this.pkg.text(path) : undefined;
    if (text === undefined) throw new VariantMutationError('missing-file', `${path}: no such file in the package`, path);
    const docs = parseYamlStream(text);
    for (const doc of docs) {
      const err = doc.errors[0];
      if (err) throw new VariantMutationError('invalid-yaml', `${path}: ${err.message.split('\n')[0]}`, path);
    }
    const kept = docs.filter(holdsSomething);
    this.parsed.set(path, { docs: kept, before: kept.map((d) => snapshot(d)) });
    return kept;
  }

  /**
   * The package's YAML files kptfile-model reads as no KRM resources, which Porch parses all the
   * same: a scalar document in one (`junk.yaml: baddata`) is Porch's "failed to extract objects",
   * never skipped. A list or a map without apiVersion (a kustomize patch, a values file) stays
   * not the variant's, as Porch's SDK reads no annotated object in it either.
   */
  private checkOtherYamlFiles(): void {
    if (this.everyFile || this.otherYamlChecked) return;
    this.otherYamlChecked = true;
    const ignore = this.pkg.krmIgnore();
    for (const f of this.pkg.ownFiles().files) {
      if (!isKrmFile(f.path) || f.path === 'Kptfile' || this.has(f.path) || ignore?.ignores(f.path)) continue;
      parseYamlStream(f.text).forEach((doc, index) => {
        if (doc.errors.length === 0 && isScalar(doc.contents) && doc.contents.value !== null) {
          throw new VariantMutationError(
            'not-a-krm-object',
            `${f.path}: failed to extract objects: document ${index + 1} is a scalar, not a KRM object`,
            f.path,
          );
        }
      });
    }
  }

  /**
   * The package's KRM objects: `(file, index, document)` for every mapping document (of the files
   * `only`, when given).
   */
  objects(only?: ReadonlySet<string>): { file: string; index: number; doc: Document.Parsed; map: YAMLMap }[] {
    this.checkOtherYamlFiles();
    const out: { file: string; index: number; doc: Document.Parsed; map: YAMLMap }[] = [];
    for (const file of this.paths()) {
      if (!isKrmFile(file) || (only && !only.has(file))) continue;
      this.documents(file).forEach((doc, index) => {
        if (doc.contents === null) return;
        if (!isMap(doc.contents)) {
          const what = isSeq(doc.contents) ? 'a list' : isScalar(doc.contents) ? 'a scalar' : 'not a mapping';
          throw new VariantMutationError(
            'not-a-krm-object',
            `${file}: failed to extract objects: document ${index + 1} is ${what}, not a KRM object`,
            file,
          );
        }
        out.push({ file, index, doc, map: doc.contents });
      });
    }
    return out;
  }

  /**
   * The files that may hold an object with the annotation `key`, found without parsing the
   * files again: in a package view, the files whose resources (parsed once by the package model)
   * carry it, the Kptfile and the files already parsed here (a mutation may have edited them).
   * Undefined (every file) for Porch's files.
   */
  filesAnnotated(key: string): ReadonlySet<string> | undefined {
    if (this.everyFile) return undefined;
    this.files(); // a YAML error of the package is a VariantMutationError, as for every file read
    const out = new Set<string>(['Kptfile', ...this.parsed.keys()]);
    for (const r of this.pkg.resources()) {
      // A key is written as it is unless a double-quoted escape spells it: a resource whose text
      // holds neither is not read (its parse, of a big ConfigMap, is spared).
      if (!r.text.includes(key) && !r.text.includes('\\')) continue;
      const annotations = (r.object['metadata'] as { annotations?: Record<string, unknown> } | undefined)?.annotations;
      if (annotations?.[key] !== undefined && annotations[key] !== null) out.add(r.file);
    }
    return out;
  }

  /** The files whose content changed, printed again; untouched files keep their exact bytes. */
  changedFiles(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [path, { docs, before }] of this.parsed) {
      if (docs.every((d, i) => snapshot(d) === before[i])) continue;
      out.set(path, printEdited(this.pkg.text(path) ?? '', docs));
    }
    return out;
  }

  /** The mutations' files (see the class) after the mutations, changed or not. */
  result(): Map<string, string> {
    const out = new Map<string, string>();
    for (const path of this.paths()) out.set(path, this.pkg.text(path) ?? '');
    for (const [path, text] of this.changedFiles()) out.set(path, text);
    return out;
  }

  /** Writes the changed files into the package; returns them. */
  writeChanges(): Map<string, string> {
    const changed = this.changedFiles();
    for (const [path, text] of changed) this.pkg.write(path, text);
    // the package now holds what was parsed: later changes are measured from here
    for (const [path, file] of this.parsed) this.parsed.set(path, { docs: file.docs, before: file.docs.map((d) => snapshot(d)) });
    return changed;
  }
}

function snapshot(doc: Document): string {
  return JSON.stringify(doc.toJS());
}

/** kpt's style when the file uses it: sequences not indented under their key. */
function indentsSequences(original: string): boolean {
  const m = /^( *)[^\s#-][^\n]*:[ \t]*\n\1( {2})?- /m.exec(original);
  return m ? m[2] !== undefined : true;
}

/** A document the mutations see: one with content or comments (a stray `---` is not). */
const holdsSomething = (d: Document): boolean => d.contents !== null || Boolean(d.commentBefore) || Boolean(d.comment);

/**
 * A file the mutations edited: its own lines wherever the edit left them (comments the printer
 * would move, such as `metadata: # kpt-merge: …`, quoting, indentation), printed lines where the
 * content changed.
 */
function printEdited(original: string, docs: readonly Document[]): string {
  const lf = original.replace(/\r\n/g, '\n');
  const before = printDocuments(parseYamlStream(lf).filter(holdsSomething), lf);
  const text = keepingLines(lf, before, printDocuments(docs, lf));
  return text === '' || text.endsWith('\n') ? text : withFinalLineBreak(text);
}

export function printDocuments(docs: readonly Document[], original = ''): string {
  const indentSeq = indentsSequences(original);
  return docs
    .map((d, i) => {
      const text = d.toString({ indentSeq, lineWidth: 0 });
      return i === 0 ? text : text.startsWith('---') ? text : `---\n${text}`;
    })
    .join('');
}

/** `metadata.annotations` of an object, created when asked to. */
export function annotationsOf(doc: Document, create: boolean): YAMLMap | undefined {
  const existing = doc.getIn(['metadata', 'annotations']);
  if (isMap(existing)) return existing;
  if (!create) return undefined;
  doc.setIn(['metadata', 'annotations'], doc.createNode({}));
  return doc.getIn(['metadata', 'annotations']) as YAMLMap;
}

export function stringAt(node: unknown): string | undefined {
  if (isScalar(node)) return node.value === null || node.value === undefined ? undefined : String(node.value);
  return typeof node === 'string' ? node : undefined;
}

export function asNode(doc: Document, value: unknown): Node {
  return doc.createNode(value) as Node;
}
