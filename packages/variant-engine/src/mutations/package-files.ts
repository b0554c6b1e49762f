import { KdeltaError } from '@kdelta/merge-core';
import { type Document, isMap, isScalar, isSeq, parseAllDocuments, type YAMLMap, type Node } from 'yaml';

/**
 * A package as the mutations see it: file path (relative, `/`-separated) → text, like Porch's
 * PackageRevisionResources. YAML files are parsed on first use into `yaml` Documents, so comments
 * and layout survive; only the files a mutation really changed are printed again.
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

export class PackageDocuments {
  private readonly parsed = new Map<string, ParsedFile>();

  constructor(private readonly files: PackageFiles) {}

  has(path: string): boolean {
    return this.files.has(path);
  }

  paths(): string[] {
    return [...this.files.keys()].sort();
  }

  /** The documents of a file; a YAML error throws `<file>: <reason>`. */
  documents(path: string): Document.Parsed[] {
    const hit = this.parsed.get(path);
    if (hit) return hit.docs;
    const text = this.files.get(path);
    if (text === undefined) throw new VariantMutationError('missing-file', `${path}: no such file in the package`, path);
    const docs = parseAllDocuments(text);
    if (!Array.isArray(docs)) return [];
    for (const doc of docs) {
      const err = doc.errors[0];
      if (err) throw new VariantMutationError('invalid-yaml', `${path}: ${err.message.split('\n')[0]}`, path);
    }
    const kept = docs.filter((d) => d.contents !== null || d.commentBefore || d.comment);
    this.parsed.set(path, { docs: kept, before: kept.map((d) => snapshot(d)) });
    return kept;
  }

  /** The package's KRM objects: `(file, index, document)` for every mapping document. */
  objects(): { file: string; index: number; doc: Document.Parsed; map: YAMLMap }[] {
    const out: { file: string; index: number; doc: Document.Parsed; map: YAMLMap }[] = [];
    for (const file of this.paths()) {
      if (!isKrmFile(file)) continue;
      this.documents(file).forEach((doc, index) => {
        if (doc.contents === null) return;
        if (!isMap(doc.contents)) {
          const what = isSeq(doc.contents) ? 'a list' : isScalar(doc.contents) ? 'a scalar' : 'not a mapping';
          throw new VariantMutationError('not-a-krm-object', `${file}: failed to extract objects: document ${index + 1} is ${what}, not a KRM object`, file);
        }
        out.push({ file, index, doc, map: doc.contents });
      });
    }
    return out;
  }

  /** The files whose content changed, printed again; untouched files keep their exact bytes. */
  changedFiles(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [path, { docs, before }] of this.parsed) {
      if (docs.every((d, i) => snapshot(d) === before[i])) continue;
      out.set(path, printDocuments(docs, this.files.get(path) ?? ''));
    }
    return out;
  }

  /** All files after the mutations. */
  result(): Map<string, string> {
    const out = new Map(this.files);
    for (const [path, text] of this.changedFiles()) out.set(path, text);
    return out;
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
