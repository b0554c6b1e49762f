import { isDeepStrictEqual } from 'node:util';
import { hideCredentials } from '@kdelta/git-source';
import type { PackageTree } from '@kdelta/kptfile-model';
import { MergeInputError, type ParsedTexts, parseStream, parseYamlStream, yamlDocumentValue } from '@kdelta/merge-core';
import { sameFile } from './compare.js';
import { type UpdatePackageOptions, type UpdateResult, updatePackage } from './update.js';

/** One change `pkg update` would make. */
export interface PkgChange {
  readonly kind: 'added' | 'deleted' | 'changed';
  /** `apps/Deployment default/web`, or a file path for non-resource files. */
  readonly subject: string;
  readonly file: string;
  /** Field-level changes of a resource: `.spec.replicas: 3 → 5`. */
  readonly fields: readonly string[];
  /** The same field-level changes as values, for a caller that shows them its own way. */
  readonly values: readonly FieldDiff[];
}

/** A field that differs between two versions of a resource: its path, printed like `.spec.containers[name="app"].image`, and both values (undefined: absent). */
export interface FieldDiff {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

interface Resource {
  readonly id: string;
  readonly file: string;
  readonly value: unknown;
}

export interface DiffResult {
  /** The changes an update would make, sorted by subject. */
  readonly changes: readonly PkgChange[];
  /** The update computed (nothing written): conflicts, resources, files, the lock it would record. */
  readonly update: UpdateResult;
}

/** What `updatePackage` would change, resource by resource, without writing anything. */
export async function diffPackage(options: Omit<UpdatePackageOptions, 'dryRun'>): Promise<DiffResult> {
  const update = await updatePackage({ ...options, dryRun: true });
  return { changes: diffTrees(update.before, update.after), update };
}

const IDENTIFIER = 'internal.kpt.dev/upstream-identifier';

/** The resources of a file as the merge reads it (`parseStream`); undefined when it does not parse. */
function resourcesOf(file: string, text: string, parsed: ParsedTexts | undefined): Resource[] | undefined {
  let docs;
  try {
    docs = parsed ? parsed.stream(text, file) : parseStream(text, file);
  } catch (error) {
    if (error instanceof MergeInputError) return undefined;
    throw error;
  }
  const out: Resource[] = [];
  for (const [i, d] of docs.documents.entries()) {
    const v = yamlDocumentValue(d.doc, file, i) as Record<string, unknown> | null;
    if (!v || typeof v !== 'object' || typeof v['kind'] !== 'string') continue;
    const meta = (v['metadata'] ?? {}) as Record<string, unknown>;
    const apiVersion = String(v['apiVersion'] ?? '');
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
    const ns = typeof meta['namespace'] === 'string' ? `${meta['namespace']}/` : '';
    const dir = file.includes('/') ? `${file.slice(0, file.lastIndexOf('/'))}: ` : '';
    out.push({ id: `${dir}${group ? `${group}/` : ''}${v['kind']} ${ns}${String(meta['name'] ?? '')}`, file, value: strip(v) });
  }
  return out;
}

function strip(v: Record<string, unknown>): unknown {
  const meta = v['metadata'] as Record<string, unknown> | undefined;
  const ann = meta?.['annotations'] as Record<string, unknown> | undefined;
  if (!ann || !(IDENTIFIER in ann)) return v;
  const { [IDENTIFIER]: _, ...rest } = ann;
  const m: Record<string, unknown> = { ...meta };
  if (Object.keys(rest).length) m['annotations'] = rest;
  else delete m['annotations'];
  return { ...v, metadata: m };
}

const show = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v));
const fieldLine = (f: FieldDiff): string => `${f.path}: ${show(f.before)} → ${show(f.after)}`;

/** Field-level differences, paths printed like `.spec.containers[name="app"].image`. */
export function fieldChanges(a: unknown, b: unknown, path = ''): string[] {
  return fieldDiffs(a, b, path).map(fieldLine);
}

/**
 * Field-level differences as values: maps and lists of named items are descended into, other lists are compared whole.
 * Each field is looked at once on the way down: comparing whole subtrees at every level (as text, once)
 * made a big map (a ConfigMap's 40,000 keys) cost copies of its text per level and a deep tree quadratic time.
 */
export function fieldDiffs(a: unknown, b: unknown, path = ''): FieldDiff[] {
  const isMap = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x) && !(x instanceof Date);
  if (isMap(a) && isMap(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => fieldDiffs(a[k], b[k], `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const named = (xs: unknown[]) => xs.every((x) => isMap(x) && typeof x['name'] === 'string');
    if (named(a) && named(b)) {
      const byName = (xs: unknown[]) => new Map(xs.map((x) => [(x as Record<string, unknown>)['name'] as string, x]));
      const ma = byName(a);
      const mb = byName(b);
      const names = [...new Set([...ma.keys(), ...mb.keys()])];
      return names.flatMap((n) => fieldDiffs(ma.get(n), mb.get(n), `${path}[name="${n}"]`));
    }
  }
  return isDeepStrictEqual(a, b) ? [] : [{ path: path || '.', before: a, after: b }];
}

/**
 * What changes between two versions of a package tree (nested packages included), resource by
 * resource. A file with the same text in both changes nothing and is not read. `parsed`: texts
 * the caller's update parsed already (see `UpdatePackageTreeOptions.parsed`), read from there.
 */
export function diffTrees(before: PackageTree, after: PackageTree, parsed?: ParsedTexts): PkgChange[] {
  const a = before.allFiles();
  const b = after.allFiles();
  const changes: PkgChange[] = [];
  const resA = new Map<string, Resource>();
  const resB = new Map<string, Resource>();
  const plainFiles = new Set<string>();
  for (const [files, into, other] of [
    [a, resA, b],
    [b, resB, a],
  ] as const) {
    for (const [file, text] of files) {
      if (other.get(file) === text) continue;
      const rs = /\.ya?ml$/i.test(file) && !file.endsWith('Kptfile') ? resourcesOf(file, text, parsed) : undefined;
      if (rs && rs.length > 0) for (const r of rs) into.set(r.id, r);
      else plainFiles.add(file);
    }
  }
  for (const [id, r] of resA) {
    const n = resB.get(id);
    if (!n) changes.push({ kind: 'deleted', subject: id, file: r.file, fields: [], values: [] });
    else {
      const values = fieldDiffs(r.value, n.value);
      const fields = values.map(fieldLine);
      if (fields.length > 0 || r.file !== n.file) {
        changes.push({
          kind: 'changed',
          subject: id,
          file: n.file,
          fields: r.file !== n.file ? [`(file) ${r.file} → ${n.file}`, ...fields] : fields,
          values,
        });
      }
    }
  }
  for (const [id, r] of resB) if (!resA.has(id)) changes.push({ kind: 'added', subject: id, file: r.file, fields: [], values: [] });
  for (const file of [...plainFiles].sort()) {
    const x = a.get(file);
    const y = b.get(file);
    if (x !== undefined && y === undefined) changes.push({ kind: 'deleted', subject: file, file, fields: [], values: [] });
    else if (x === undefined && y !== undefined) changes.push({ kind: 'added', subject: file, file, fields: [], values: [] });
    else if (x !== undefined && y !== undefined) {
      if (file.split('/').pop() === 'Kptfile') {
        const values = kptfileFields(x, y);
        if (values.length > 0) changes.push({ kind: 'changed', subject: file, file, fields: values.map(fieldLine), values });
      } else if (!sameFile(file, x, y)) changes.push({ kind: 'changed', subject: file, file, fields: ['(content changed)'], values: [] });
    }
  }
  return changes.sort((p, q) => (p.subject < q.subject ? -1 : p.subject > q.subject ? 1 : 0));
}

function kptfileFields(x: string, y: string): FieldDiff[] {
  // Credentials a Kptfile of an older tool held in a repository URL are dropped by any update:
  // not a change worth a line, and a line that would print them.
  const load = (t: string) => parseYamlStream(hideCredentials(t))[0]?.toJS();
  return fieldDiffs(load(x), load(y)).filter((f) => !f.path.startsWith('.upstreamLock.git.commit'));
}

export function formatChanges(changes: readonly PkgChange[]): string {
  const sign = { added: '+', deleted: '-', changed: '~' } as const;
  const lines: string[] = [];
  for (const c of changes) {
    lines.push(`${sign[c.kind]} ${c.subject}${c.kind === 'changed' ? '' : ` (${c.kind})`}${c.subject === c.file ? '' : `  [${c.file}]`}`);
    for (const f of c.fields) lines.push(`    ${f}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
