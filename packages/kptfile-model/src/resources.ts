/** The KRM resources of one YAML file of a package, parsed with their text and position kept. */
import { parseDocument, type Document } from 'yaml';
import type { KptfileIssue } from './errors.js';
import { chunkHasContent, splitYamlDocuments } from './yaml-file.js';

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
      issues.push({
        code: 'yaml-syntax',
        file: path,
        field: `document ${index}`,
        message: `invalid YAML: ${e?.message.split('\n')[0] ?? ''}`,
      });
      return undefined;
    }
    const object = document.toJS() as unknown;
    if (!isKrmObject(object)) allKrm = false;
    else out.push({ file: path, index, text: chunk.body, object, document });
    index++;
  }
  return allKrm && out.length > 0 ? out : undefined;
}
