/**
 * The package context (seed 004 "Package Context"): a deployment package holds a ConfigMap
 * named `kptfile.kpt.dev` whose `data.name` is the package name, input for its functions.
 */
import { parseYamlDocument } from '@kdelta/merge-core';
import { isMap, YAMLMap } from 'yaml';
import { KptfileError } from './errors.js';
import type { KptPackage } from './package.js';
import type { PackageResource } from './resources.js';

export const PACKAGE_CONTEXT_NAME = 'kptfile.kpt.dev';
/** The file kpt creates it in. */
export const PACKAGE_CONTEXT_FILE = 'package-context.yaml';
/** Keys kpt/Porch own: a PackageVariant may not set them. */
export const RESERVED_PACKAGE_CONTEXT_KEYS: readonly string[] = ['name', 'package-path'];

/** The ConfigMap as kpt writes it for a package named `packageName`. */
export function packageContextConfigMap(packageName: string, data: Readonly<Record<string, string>> = {}): string {
  const doc = parseYamlDocument(
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      `  name: ${PACKAGE_CONTEXT_NAME}`,
      '  annotations:',
      '    config.kubernetes.io/local-config: "true"',
      'data: {}',
      '',
    ].join('\n'),
  );
  const map = new YAMLMap();
  map.set('name', packageName);
  for (const [k, v] of Object.entries(data)) if (k !== 'name') map.set(k, v);
  doc.set('data', map);
  return doc.toString({ lineWidth: 0 });
}

/** Whether a KRM object is the package-context ConfigMap. */
export function isPackageContext(object: Readonly<Record<string, unknown>>): boolean {
  const meta = object['metadata'] as { name?: unknown } | undefined;
  return object['apiVersion'] === 'v1' && object['kind'] === 'ConfigMap' && meta?.name === PACKAGE_CONTEXT_NAME;
}

/** The package-context ConfigMap of a package, if it has one. */
export function findPackageContext(pkg: KptPackage): PackageResource | undefined {
  return pkg.resources.find((r) => isPackageContext(r.object));
}

export interface PackageContextEdit {
  /** Keys to set in `data`. */
  readonly set?: Readonly<Record<string, string>>;
  /** Keys to remove from `data` (after `set`). */
  readonly remove?: readonly string[];
}

/**
 * Edits the `data` of a package-context ConfigMap document (its YAML text), keeping its
 * comments and order; returns the text unchanged when nothing changes.
 */
export function editPackageContext(text: string, edit: PackageContextEdit): string {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0)
    throw new KptfileError([
      { code: 'yaml-syntax', file: PACKAGE_CONTEXT_FILE, field: '', message: `invalid YAML: ${doc.errors[0]?.message ?? ''}` },
    ]);
  let data = doc.get('data', true);
  let changed = false;
  if (!isMap(data)) {
    if (!edit.set || Object.keys(edit.set).length === 0) return text;
    data = new YAMLMap();
    doc.set('data', data);
    changed = true;
  }
  const map = data as YAMLMap;
  for (const [k, v] of Object.entries(edit.set ?? {})) {
    if (map.get(k) !== v) {
      map.set(k, v);
      changed = true;
    }
  }
  for (const k of edit.remove ?? []) if (map.delete(k)) changed = true;
  return changed ? doc.toString({ lineWidth: 0 }) : text;
}
