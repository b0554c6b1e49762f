/** The KRM resources of one YAML file of a package, parsed with their text and position kept. */
import { MergeInputError, parseYamlDocument, yamlDocumentValue } from '@kdelta/merge-core';
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

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The KRM resources of a YAML file; undefined when not every document is a KRM object. */
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
