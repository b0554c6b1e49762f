/**
 * Reading and printing a Kptfile: decode (strict, errors as data), parse (decode + kind check +
 * kpt's validation, throws), print (keeps the user's comments, order and quoting).
 */
import { parseYamlStream } from '@kdelta/merge-core';
import type { Document } from 'yaml';
import { decodeKptfileNode } from './decode.js';
import { detectSequenceIndent, hoistKeyComments, syncDocument } from './document.js';
import { KptfileError, type KptfileIssue } from './errors.js';
import { formatKptfile } from './format.js';
import { KPTFILE_API_VERSION, KPTFILE_KIND, type Kptfile } from './types.js';
import { validateKptfile } from './validate.js';

/** A Kptfile with the YAML document it came from (for printing it back with its comments). */
export interface ParsedKptfile {
  readonly file: string;
  readonly kptfile: Kptfile;
  readonly document: Document;
  /** The exact text read. */
  readonly text: string;
}

export interface DecodeResult extends ParsedKptfile {
  readonly issues: readonly KptfileIssue[];
}

function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${col}`;
}

/**
 * Decodes a Kptfile without judging it: YAML errors, wrong types and unknown fields come back
 * as `issues` (each naming `file` and the field path), never thrown.
 */
export function decodeKptfile(text: string, file = 'Kptfile'): DecodeResult {
  const list = parseYamlStream(text);
  const issues: KptfileIssue[] = [];
  const nonEmpty = list.filter((d) => d.contents !== null || d.errors.length > 0);
  const document = (nonEmpty[0] ?? list[0] ?? parseYamlStream('{}')[0]) as Document;
  for (const d of list) {
    for (const e of d.errors) {
      issues.push({
        code: 'yaml-syntax',
        file,
        field: '',
        message: `invalid YAML at ${position(text, e.pos[0])}: ${e.message.split('\n')[0]}`,
      });
    }
  }
  if (nonEmpty.length > 1) {
    issues.push({ code: 'not-a-map', file, field: '', message: `a Kptfile holds one YAML document, found ${nonEmpty.length}` });
  }
  if (issues.length > 0) return { file, kptfile: {}, document, text, issues };
  hoistKeyComments(document, text);
  const kptfile = decodeKptfileNode(document.contents as never, file, issues);
  return { file, kptfile, document, text, issues };
}

/** Kind and version: kpt reads only `kpt.dev/v1` `Kptfile`. */
export function checkKptfileKind(kptfile: Kptfile, file = 'Kptfile'): KptfileIssue[] {
  const issues: KptfileIssue[] = [];
  if (kptfile.kind !== KPTFILE_KIND) {
    issues.push({
      code: 'wrong-kind',
      file,
      field: 'kind',
      message: `expected ${KPTFILE_KIND}, got ${JSON.stringify(kptfile.kind ?? null)}`,
    });
  }
  if (kptfile.apiVersion !== KPTFILE_API_VERSION) {
    const hint = kptfile.apiVersion?.startsWith('kpt.dev/')
      ? ' (an older Kptfile: upgrade it with `kpt fn eval --image ghcr.io/kptdev/krm-functions-catalog/fix`)'
      : '';
    issues.push({
      code: 'wrong-kind',
      file,
      field: 'apiVersion',
      message: `expected ${KPTFILE_API_VERSION}, got ${JSON.stringify(kptfile.apiVersion ?? null)}${hint}`,
    });
  }
  return issues;
}

/**
 * Reads a Kptfile the one way every command reads it: YAML, known fields only, right types,
 * `kpt.dev/v1` `Kptfile`. Throws `KptfileError` naming `file` and the field path. The functions
 * are not judged here (see `parseKptfile`): a package with a broken pipeline can still be updated.
 */
export function readKptfileText(text: string, file = 'Kptfile'): ParsedKptfile {
  const r = decodeKptfile(text, file);
  const decoded = r.issues.every((i) => i.code !== 'yaml-syntax' && i.code !== 'not-a-map');
  const kind = decoded ? checkKptfileKind(r.kptfile, file) : [];
  // An older Kptfile (kpt.dev/v1alpha1's packageMetadata, openAPI, …) has fields v1 does not know:
  // its version is the reason to give, not each field it brings.
  const issues = kind.length > 0 ? kind : r.issues;
  if (issues.length > 0) throw new KptfileError(issues);
  return { file: r.file, kptfile: r.kptfile, document: r.document, text: r.text };
}

/**
 * Parses and validates a Kptfile. Throws `KptfileError` (every issue names `file` and the
 * field, e.g. `Kptfile: pipeline.mutators[2].image: ...`) when it is not a valid kpt Kptfile.
 */
export function parseKptfile(text: string, file = 'Kptfile'): ParsedKptfile {
  const parsed = readKptfileText(text, file);
  const issues = validateKptfile(parsed.kptfile, file);
  if (issues.length > 0) throw new KptfileError(issues);
  return parsed;
}

/**
 * Prints a parsed Kptfile, optionally changed to `next`: comments, key order, quoting and the
 * file's sequence indentation are kept for everything that did not change. With no `next` (or
 * an equal one) the text read is returned byte for byte.
 */
export function printKptfile(parsed: ParsedKptfile, next?: Kptfile): string {
  if (next === undefined || formatKptfile(next) === formatKptfile(parsed.kptfile)) return parsed.text;
  const doc = parsed.document.clone();
  syncDocument(doc, toPlain(next));
  const indent = detectSequenceIndent(parsed.text) ?? 'wide';
  return doc.toString({ indentSeq: indent === 'wide', lineWidth: 0, flowCollectionPadding: false });
}

/** Drops `undefined` fields so the document does not grow empty keys. */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toPlain(v);
    return out;
  }
  return value;
}
