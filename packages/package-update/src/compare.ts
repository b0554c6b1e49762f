import { parseYamlDocument, parseYamlStream } from '@kdelta/merge-core';
import type { PackageView } from '@kdelta/kptfile-model';
import { KPTFILE } from './kptfile.js';

/** Kptfile content that says where a package came from, not what it is: ignored by change checks. */
const KPTFILE_BOOKKEEPING = ['apiVersion', 'kind', 'upstream', 'upstreamLock', 'status', 'metadata'] as const;

function kptfileData(text: string): unknown {
  try {
    const doc = parseYamlDocument(text);
    if (doc.errors.length > 0) return text;
    const data = (doc.toJS() ?? {}) as Record<string, unknown>;
    const copy: Record<string, unknown> = { ...data };
    for (const k of KPTFILE_BOOKKEEPING) delete copy[k];
    return copy;
  } catch {
    return text;
  }
}

function yamlData(text: string): unknown {
  try {
    const docs = parseYamlStream(text);
    if (docs.some((d) => d.errors.length > 0)) return text.trim();
    return docs.map((d) => stripIdentifier(d.toJS())).filter((d) => d !== null && d !== undefined);
  } catch {
    return text.trim();
  }
}

/** The upstream-identifier annotation is bookkeeping added by get/update. */
function stripIdentifier(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const v = value as { metadata?: { annotations?: Record<string, unknown> } };
  const ann = v.metadata?.annotations;
  if (!ann || !('internal.kpt.dev/upstream-identifier' in ann)) return value;
  const { ['internal.kpt.dev/upstream-identifier']: _, ...rest } = ann;
  const metadata: Record<string, unknown> = { ...v.metadata };
  if (Object.keys(rest).length === 0) delete metadata.annotations;
  else metadata.annotations = rest;
  return { ...v, metadata };
}

/** Whether two versions of a file say the same thing (YAML compared as data). */
export function sameFile(path: string, a: string, b: string): boolean {
  if (a === b) return true;
  const base = path.split('/').pop() ?? '';
  if (base === KPTFILE) return JSON.stringify(kptfileData(a)) === JSON.stringify(kptfileData(b));
  if (/\.ya?ml$/i.test(base)) return JSON.stringify(yamlData(a)) === JSON.stringify(yamlData(b));
  return a.trim() === b.trim();
}

/** Paths of the package's own files (not nested packages') that differ between two versions of it. */
export function changedFiles(a: PackageView, b: PackageView): string[] {
  const fa = new Map(a.ownFiles().files.map((f) => [f.path, f.text]));
  const fb = new Map(b.ownFiles().files.map((f) => [f.path, f.text]));
  const out: string[] = [];
  // A Kptfile that says nothing but bookkeeping is the same as no Kptfile.
  const emptyKptfile = 'apiVersion: kpt.dev/v1\nkind: Kptfile\n';
  for (const [p, t] of fa) {
    const other = fb.get(p) ?? (p === KPTFILE ? emptyKptfile : undefined);
    if (other === undefined || !sameFile(p, t, other)) out.push(p);
  }
  for (const [p, t] of fb) if (!fa.has(p) && !(p === KPTFILE && sameFile(p, t, emptyKptfile))) out.push(p);
  return out.sort();
}

/** Whether a package and all its nested packages are unchanged between `a` and `b`. */
export function treeUnchanged(a: PackageView, b: PackageView): boolean {
  if (changedFiles(a, b).length > 0) return false;
  const sa = a.nestedPackages({ includeRemote: true, recurseIntoRemote: false });
  const sb = b.nestedPackages({ includeRemote: true, recurseIntoRemote: false });
  if (sa.join('\n') !== sb.join('\n')) return false;
  return sa.every((p) => treeUnchanged(a.at(p), b.at(p)));
}
