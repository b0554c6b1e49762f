/**
 * kpt's Kptfile rules, as a list of small checks returning issues (never throwing).
 */
import { posix } from 'node:path';
import { MergeInputError, parseYamlStream, yamlDocumentValue } from '@kdelta/merge-core';
import { joinField, type KptfileIssue } from './errors.js';
import { validateImageReference } from './image.js';
import { PIPELINE_LISTS, type Inventory, type KptFunction, type Kptfile } from './types.js';

/** `undefined` when `path` may be a function's `configPath`, else the reason. */
export function validateConfigPath(path: string): string | undefined {
  if (path.trim() === '') return 'config path must not be empty';
  const cleaned = posix.normalize(path);
  if (posix.isAbsolute(cleaned)) return `config path ${JSON.stringify(path)} must be relative to the package`;
  if (cleaned.includes('..')) return `config path ${JSON.stringify(path)} must not refer to files outside the package`;
  return undefined;
}

/** Checks one pipeline function; `field` is its path, like `pipeline.mutators[0]`. */
export function validateFunction(fn: KptFunction, field: string, file: string): KptfileIssue[] {
  const issues: KptfileIssue[] = [];
  const image = fn.image ?? '';
  const exec = fn.exec ?? '';
  if (image === '' && exec === '') {
    issues.push({
      code: 'missing-function',
      file,
      field: joinField(field, 'image'),
      message: 'a function must name what to run: `image` (e.g. ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2) or `exec`',
    });
  }
  if (image !== '') {
    const why = validateImageReference(image);
    if (why) issues.push({ code: 'invalid-image', file, field: joinField(field, 'image'), message: `${JSON.stringify(image)} is ${why}` });
  }
  const configs: string[] = [];
  if (fn.configPath !== undefined && fn.configPath !== '') {
    const why = validateConfigPath(fn.configPath);
    if (why) issues.push({ code: 'invalid-config-path', file, field: joinField(field, 'configPath'), message: why });
    configs.push('configPath');
  }
  if (fn.configMap && Object.keys(fn.configMap).length > 0) configs.push('configMap');
  if (configs.length > 1) {
    issues.push({
      code: 'conflicting-config',
      file,
      field,
      message: `a function may give only one of configPath, configMap (got ${configs.join(' and ')})`,
    });
  }
  return issues;
}

/** kpt's `KptFile.Validate`: the pipeline functions (what to run, image names, config). */
export function validateKptfile(kptfile: Kptfile, file = 'Kptfile'): KptfileIssue[] {
  const issues: KptfileIssue[] = [];
  for (const list of PIPELINE_LISTS) {
    kptfile.pipeline?.[list]?.forEach((fn, i) => {
      issues.push(...validateFunction(fn, `pipeline.${list}[${i}]`, file));
    });
  }
  return issues;
}

/** kpt's inventory check for `live` commands: namespace, name and inventoryID all set. */
export function validateInventory(inventory: Inventory | undefined, file = 'Kptfile'): KptfileIssue[] {
  if (!inventory) {
    return [{ code: 'invalid-inventory', file, field: 'inventory', message: 'the Kptfile has no inventory section' }];
  }
  const issues: KptfileIssue[] = [];
  for (const key of ['namespace', 'name', 'inventoryID'] as const) {
    if ((inventory[key] ?? '').trim() === '') {
      issues.push({ code: 'invalid-inventory', file, field: joinField('inventory', key), message: 'must not be empty' });
    }
  }
  return issues;
}

const KUSTOMIZE_GROUP = 'kustomize.config.k8s.io';
const KUSTOMIZATION_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);

/**
 * Whether an object is a Kustomization (kpt refuses those as function config): by its file
 * name (`path`, or the `config.kubernetes.io/path` annotation), or by its group and kind.
 */
export function isKustomization(object: unknown, path?: string): boolean {
  if (!object || typeof object !== 'object' || Array.isArray(object)) return false;
  const o = object as { apiVersion?: unknown; kind?: unknown; metadata?: { annotations?: Record<string, unknown> } };
  const p = path ?? o.metadata?.annotations?.['config.kubernetes.io/path'];
  if (typeof p === 'string' && KUSTOMIZATION_FILES.has(posix.basename(p))) return true;
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group === KUSTOMIZE_GROUP) return true;
  return group === '' && o.kind === 'Kustomization';
}

/**
 * kpt's check of a function config file (`configPath`): exactly one YAML document, a map, and
 * not a Kustomization. Returns the config object or the reason it cannot be used.
 */
export function validateFunctionConfig(
  text: string,
  configPath: string,
): { ok: true; config: Record<string, unknown> } | { ok: false; message: string } {
  const docs = parseYamlStream(text);
  const bad = docs.find((d) => d.errors.length > 0);
  if (bad) return { ok: false, message: `functionConfig ${JSON.stringify(configPath)}: ${bad.errors[0]?.message ?? 'invalid YAML'}` };
  let values: unknown[];
  try {
    values = docs.flatMap((d, i) => (d.contents === null ? [] : [yamlDocumentValue(d, configPath, i)]));
  } catch (error) {
    if (error instanceof MergeInputError) return { ok: false, message: `functionConfig ${JSON.stringify(configPath)}: ${error.reason}` };
    throw error;
  }
  if (values.length === 0) return { ok: false, message: `functionConfig ${JSON.stringify(configPath)} is empty` };
  if (values.length > 1) {
    return {
      ok: false,
      message: `functionConfig ${JSON.stringify(configPath)} must not contain more than one config, got ${values.length}`,
    };
  }
  const config = values[0];
  if (!config || typeof config !== 'object' || Array.isArray(config)) {
    return { ok: false, message: `functionConfig ${JSON.stringify(configPath)} must be a KRM resource (a YAML map)` };
  }
  if (isKustomization(config, configPath)) {
    return { ok: false, message: `functionConfig ${JSON.stringify(configPath)} must not be a Kustomization` };
  }
  return { ok: true, config: config as Record<string, unknown> };
}
