/** The KRM resources of one YAML file of a package, parsed with their text and position kept. */
import { MergeInputError, parseYamlDocument, scannedPair, scanStream, yamlDocumentValue } from '@kdelta/merge-core';
import type { Document } from 'yaml';
import type { KptfileIssue } from './errors.js';
import { chunkHasContent, splitYamlDocuments } from './yaml-file.js';

export interface PackageResource {
  /** The file it is in, relative to the package root. */
  readonly file: string;
  /** Its position among the documents of that file that hold a value (0-based). */
  readonly index: number;
  /** The document's exact text (after its `---` line, if any). */
  readonly text: string;
  /** The document as plain data (parsed when first read: see {@link parseResources}). */
  readonly object: Record<string, unknown>;
  /** The parsed document (comments and formatting kept), parsed when first read. */
  readonly document: Document;
}

/**
 * Whether the line scanner reads the text as one KRM object (a block map whose `apiVersion` and
 * `kind` are strings). The scanner declines what it does not model, and checks that `yaml` would
 * read the text without error or duplicate key: what it reads needs no parse to be known valid.
 */
function scansAsKrmObject(text: string): boolean {
  const docs = scanStream(text);
  const root = docs?.length === 1 ? docs[0]!.root : undefined;
  const isString = (key: string) => {
    const v = scannedPair(root, key)?.value;
    return v?.kind === 'scalar' && v.str !== null;
  };
  return root !== undefined && isString('apiVersion') && isString('kind');
}

/** A resource the scan read: parsed, once, only when its value or document is read. */
function scannedResource(file: string, index: number, text: string): PackageResource {
  let parsed: { readonly document: Document; readonly object: Record<string, unknown> } | undefined;
  const parse = () => {
    if (!parsed) {
      const document = parseYamlDocument(text);
      parsed = { document, object: yamlDocumentValue(document, file, index) as Record<string, unknown> };
    }
    return parsed;
  };
  return {
    file,
    index,
    text,
    get object() {
      return parse().object;
    },
    get document() {
      return parse().document;
    },
  };
}

function isKrmObject(v: unknown): v is Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o['apiVersion'] === 'string' && typeof o['kind'] === 'string';
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * The KRM resources of a YAML file; undefined when not every document is a KRM object. A document
 * the line scanner reads is parsed only when its value is read: which files hold resources is
 * known without parsing a big ConfigMap no mutation or function touches.
 */
export function parseResources(path: string, text: string, issues: KptfileIssue[]): PackageResource[] | undefined {
  const out: PackageResource[] = [];
  let index = 0;
  let allKrm = true;
  // lines of the file before the chunk's body, so an error names the file's line
  let linesBefore = 0;
  for (const chunk of splitYamlDocuments(text)) {
    linesBefore += countLines(chunk.marker);
    const bodyLines = linesBefore;
    linesBefore += countLines(chunk.body);
    if (!chunkHasContent(chunk.body)) continue;
    if (scansAsKrmObject(chunk.body)) {
      out.push(scannedResource(path, index, chunk.body));
      index++;
      continue;
    }
    const document = parseYamlDocument(chunk.body);
    const e = document.errors[0];
    if (e) {
      const line = bodyLines + countLines(chunk.body.slice(0, e.pos[0])) + 1;
      issues.push({
        code: 'yaml-syntax',
        file: path,
        field: `document ${index}`,
        message: `invalid YAML (line ${line}): ${e.message.split('\n')[0]}`,
      });
      return undefined;
    }
    let object: unknown;
    try {
      object = yamlDocumentValue(document, path, index);
    } catch (e) {
      if (!(e instanceof MergeInputError)) throw e;
      issues.push({ code: 'yaml-syntax', file: path, field: `document ${index}`, message: e.reason });
      return undefined;
    }
    if (!isKrmObject(object)) allKrm = false;
    else out.push({ file: path, index, text: chunk.body, object, document });
    index++;
  }
  return allKrm && out.length > 0 ? out : undefined;
}
