/**
 * A registry from CustomResourceDefinitions (apiextensions.k8s.io/v1 and v1beta1), given as
 * parsed YAML values. Each served version's `schema.openAPIV3Schema` (v1beta1: also the
 * CRD-wide `spec.validation.openAPIV3Schema`) describes the kind `spec.names.kind` in group
 * `spec.group`. Structural OpenAPI v3: properties, items, additionalProperties and the
 * x-kubernetes-list-type / -list-map-keys / -map-type / -patch-* extensions. Other objects
 * are ignored.
 */
import { SchemaError } from './errors.js';
import { JsonSchemaConverter, isRecord, own, type JsonObject } from './json-schema.js';
import type { GroupVersionKind, ObjectSchema, Schema, SchemaSource } from './types.js';
import { pickVersion } from './versions.js';

const CRD_API_VERSIONS = new Set(['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1']);

export interface CrdOptions {
  /** The file the objects came from, for error messages. */
  readonly file?: string;
  /**
   * Leave out a CRD that cannot be read as a schema (no group or kind, a malformed schema) instead
   * of failing. For the CRDs a package holds: they are resources to merge, and a partial one (an
   * example's CRD with only `spec.conversion`) teaches the merge nothing but must not stop it.
   */
  readonly skipUnreadable?: boolean;
}

export function isCustomResourceDefinition(value: unknown): value is JsonObject {
  return isRecord(value) && own(value, 'kind') === 'CustomResourceDefinition' && CRD_API_VERSIONS.has(String(own(value, 'apiVersion')));
}

export function schemaRegistryFromCrds(objects: readonly unknown[], options: CrdOptions = {}): SchemaSource {
  const file = options.file;
  // CRD schemas never use $ref (structural schemas forbid it).
  const converter = new JsonSchemaConverter(() => undefined);
  const kinds = new Map<string, [string, JsonObject][]>();
  const byName = new Map<string, JsonObject>();

  const read = (obj: unknown, i: number) => {
    if (!isCustomResourceDefinition(obj)) return;
    const metadata = own(obj, 'metadata');
    const crdName = isRecord(metadata) && typeof own(metadata, 'name') === 'string' ? ` (${String(own(metadata, 'name'))})` : '';
    const fail = (path: string, reason: string): never => {
      throw new SchemaError({ file, path: `objects[${i}].${path}`, reason: `CustomResourceDefinition${crdName}: ${reason}` });
    };
    const spec = own(obj, 'spec');
    if (!isRecord(spec)) return fail('spec', 'expected an object');
    const group = own(spec, 'group');
    if (typeof group !== 'string' || group === '') return fail('spec.group', 'expected a non-empty string');
    const names = own(spec, 'names');
    const kind = isRecord(names) ? own(names, 'kind') : undefined;
    if (typeof kind !== 'string' || kind === '') return fail('spec.names.kind', 'expected a non-empty string');

    const schemaAt = (container: unknown, path: string): JsonObject | undefined => {
      if (container === undefined || container === null) return undefined;
      if (!isRecord(container)) return fail(path, 'expected an object');
      const s = own(container, 'openAPIV3Schema');
      if (s === undefined || s === null) return undefined;
      if (!isRecord(s)) return fail(`${path}.openAPIV3Schema`, 'expected a schema object');
      return s;
    };
    const shared = schemaAt(own(spec, 'validation'), 'spec.validation'); // v1beta1 only
    const found: [string, JsonObject][] = [];
    const versions = own(spec, 'versions');
    if (versions !== undefined && versions !== null && !Array.isArray(versions)) fail('spec.versions', 'expected a list');
    for (const [j, v] of (Array.isArray(versions) ? versions : []).entries()) {
      if (!isRecord(v) || typeof own(v, 'name') !== 'string') return fail(`spec.versions[${j}].name`, 'expected a string');
      const s = schemaAt(own(v, 'schema'), `spec.versions[${j}].schema`) ?? shared;
      if (s !== undefined) found.push([own(v, 'name') as string, s]);
    }
    const single = own(spec, 'version'); // v1beta1's older single version
    if (typeof single === 'string' && shared !== undefined && !found.some(([n]) => n === single)) found.push([single, shared]);

    const key = `${group}/${kind}`;
    let list = kinds.get(key);
    if (list === undefined) kinds.set(key, (list = []));
    for (const [version, schema] of found) {
      if (list.some(([v]) => v === version)) continue; // the first CRD for a version wins
      list.push([version, schema]);
      byName.set(`${group}.${version}.${kind}`, schema);
    }
  };
  objects.forEach((obj, i) => {
    try {
      read(obj, i);
    } catch (error) {
      // every check comes before the CRD is registered: one left out leaves nothing behind
      if (!(options.skipUnreadable && error instanceof SchemaError)) throw error;
    }
  });

  const asObject = (s: Schema | undefined): ObjectSchema | undefined => (s?.kind === 'object' ? s : undefined);
  return {
    lookup(gvk: GroupVersionKind): ObjectSchema | undefined {
      const versions = kinds.get(`${gvk.group}/${gvk.kind}`);
      const schema = versions && pickVersion(versions, gvk.version);
      return asObject(converter.convert(schema));
    },
    /** Definitions are named like kyaml names CRD schemas: `<group>.<version>.<kind>`. */
    definition(name: string): Schema | undefined {
      return converter.convert(byName.get(name));
    },
  };
}
