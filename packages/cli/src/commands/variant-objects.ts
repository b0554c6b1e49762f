import { promises as fs } from 'node:fs';
import path from 'node:path';
import { parseYamlStream, yamlDocumentValue } from '@kdelta/merge-core';
import {
  checkPackageVariant,
  decodeObject,
  PACKAGE_VARIANT_API_VERSION,
  type KubeObject,
  type PackageVariant,
} from '@kdelta/variant-engine';
import { UsageError } from '../command.js';
import { CliInputError } from '../errors.js';

/** One YAML document read from a file, with where it came from (for error messages). */
export interface SourcedObject {
  readonly file: string;
  /** 1-based document number in its file. */
  readonly document: number;
  readonly value: unknown;
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

/** Every non-empty document of a YAML file; a syntax error names the file, document and line. */
export async function readYamlDocuments(file: string, display = file): Promise<SourcedObject[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${display}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, expected a YAML file' : String(error)}`,
    );
  }
  const out: SourcedObject[] = [];
  parseYamlStream(text).forEach((doc, i) => {
    const err = doc.errors[0];
    if (err) {
      throw new CliInputError(
        'invalid-yaml',
        `${display}: document ${i + 1}: invalid YAML at line ${lineOf(text, err.pos[0])}: ${err.message.split('\n')[0]}`,
        { file: display, document: i + 1 },
      );
    }
    const value: unknown = yamlDocumentValue(doc, display, i + 1);
    if (value !== null && value !== undefined) out.push({ file: display, document: i + 1, value });
  });
  return out;
}

/** The objects under `--objects`: one YAML file, or every `*.yaml` / `*.yml` under a directory. */
export async function readObjects(target: string, cwd: string): Promise<SourcedObject[]> {
  const abs = path.resolve(cwd, target);
  let stat;
  try {
    stat = await fs.stat(abs);
  } catch {
    throw new UsageError(`--objects ${target}: no such file or directory`);
  }
  if (!stat.isDirectory()) return readYamlDocuments(abs, target);
  const files: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const e of await fs.readdir(dir, { withFileTypes: true })) {
      if (e.name === '.git' || e.name === 'node_modules') continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (/\.ya?ml$/.test(e.name)) files.push(p);
    }
  }
  await walk(abs);
  files.sort();
  const out: SourcedObject[] = [];
  for (const f of files) out.push(...(await readYamlDocuments(f, path.join(target, path.relative(abs, f)))));
  return out;
}

export function describeDocument(o: SourcedObject): string {
  const v = o.value as { kind?: unknown; metadata?: { name?: unknown } };
  const name = typeof v?.metadata?.name === 'string' ? ` "${v.metadata.name}"` : '';
  const kind = typeof v?.kind === 'string' ? ` (${v.kind}${name})` : '';
  return `${o.file}: document ${o.document}${kind}`;
}

/**
 * The `--objects` documents decoded. Two documents for the same object (apiVersion, kind,
 * namespace, name) are an error naming both: either could be the one injected or selected, and
 * picking one by file order would be a guess.
 */
export function decodeObjects(docs: readonly SourcedObject[]): KubeObject[] {
  const out: KubeObject[] = [];
  const seen = new Map<string, SourcedObject>();
  for (const o of docs) {
    const d = decodeObject(o.value);
    if (d.errors.length > 0)
      throw new CliInputError('invalid-object', `${describeDocument(o)}: ${d.errors.join('; ')}`, { file: o.file, document: o.document });
    const v = d.value;
    const name = v.metadata?.name;
    if (typeof name === 'string' && name !== '') {
      const key = `${v.apiVersion ?? ''}|${v.kind ?? ''}|${v.metadata?.namespace || 'default'}|${name}`;
      const before = seen.get(key);
      if (before) {
        throw new CliInputError(
          'duplicate-object',
          `${describeDocument(before)} and ${describeDocument(o)} are the same object ` +
            `(${v.apiVersion ?? ''} ${v.kind ?? ''} ${v.metadata?.namespace || 'default'}/${name}): keep one`,
          { file: o.file, document: o.document },
        );
      }
      seen.set(key, o);
    }
    out.push(v);
  }
  return out;
}

/**
 * The one PackageVariant document of `file`, decoded and checked: unknown fields, wrong types and
 * another apiVersion are errors naming the document and the field.
 */
export async function readPackageVariant(file: string, cwd: string): Promise<{ pv: PackageVariant; doc: SourcedObject; where: string }> {
  const docs = (await readYamlDocuments(path.resolve(cwd, file), file)).filter((d) => (d.value as KubeObject)?.kind === 'PackageVariant');
  if (docs.length !== 1) {
    throw new CliInputError('invalid-variant', `${file}: expected one PackageVariant document, found ${docs.length}`, { file });
  }
  const doc = docs[0]!;
  const where = describeDocument(doc);
  const checked = checkPackageVariant(doc.value);
  if (checked.problems.length > 0)
    throw new CliInputError('invalid-variant', `${where}: ${checked.problems.join('; ')}`, { file: doc.file, document: doc.document });
  const pv = checked.value;
  if (pv.apiVersion !== PACKAGE_VARIANT_API_VERSION) {
    throw new CliInputError(
      'invalid-variant',
      `${where}: apiVersion: expected ${PACKAGE_VARIANT_API_VERSION}, got ${pv.apiVersion ?? '(none)'}`,
      {
        file: doc.file,
        document: doc.document,
        path: '.apiVersion',
      },
    );
  }
  return { pv, doc, where };
}
