/**
 * A registry from a full OpenAPI v2 document (`--schema <file>`): `definitions` with `$ref`s
 * and `x-kubernetes-group-version-kind`, the same list/map rules as the built-in table.
 * The kyaml bundle format (a `resources[]` list of apiVersion/kind/definition) is read too.
 */
import { parseYamlStream, yamlErrorReason } from '../yaml/parse.js';
import { schemaRegistryFromCrds } from './crd.js';
import { SchemaError } from './errors.js';
import { JsonSchemaConverter, definitionsResolver, isRecord, own, type JsonObject } from './json-schema.js';
import type { GroupVersionKind, ObjectSchema, Schema, SchemaSource } from './types.js';
import { parseApiVersion, pickVersion } from './versions.js';

export interface OpenApiOptions {
  /** The file the document came from, for error messages. */
  readonly file?: string;
}

/** Builds a registry from an OpenAPI v2 document given as a plain JS value. */
export function schemaRegistryFromOpenApi(doc: unknown, options: OpenApiOptions = {}): SchemaSource {
  const file = options.file;
  if (!isRecord(doc)) {
    throw new SchemaError({ file, path: '', reason: `expected an OpenAPI document (an object with "definitions"), got ${describe(doc)}` });
  }
  const definitions = own(doc, 'definitions');
  if (!isRecord(definitions)) {
    throw new SchemaError({ file, path: 'definitions', reason: `expected an object of named schemas, got ${describe(definitions)}` });
  }
  const kinds = new Map<string, [string, string][]>();
  const add = (group: string, version: string, kind: string, name: string): void => {
    const key = `${group}/${kind}`;
    let versions = kinds.get(key);
    if (versions === undefined) kinds.set(key, (versions = []));
    if (!versions.some(([v]) => v === version)) versions.push([version, name]);
  };
  for (const [name, def] of Object.entries(definitions)) {
    if (!isRecord(def)) {
      throw new SchemaError({ file, path: `definitions.${name}`, reason: `expected a schema object, got ${describe(def)}` });
    }
    const gvks = own(def, 'x-kubernetes-group-version-kind');
    for (const [i, gvk] of (Array.isArray(gvks) ? gvks : gvks === undefined ? [] : [gvks]).entries()) {
      const where = `definitions.${name}.x-kubernetes-group-version-kind${Array.isArray(gvks) ? `[${i}]` : ''}`;
      if (!isRecord(gvk) || typeof own(gvk, 'version') !== 'string' || typeof own(gvk, 'kind') !== 'string') {
        throw new SchemaError({ file, path: where, reason: 'expected {group, version, kind} with string values' });
      }
      const group = own(gvk, 'group');
      add(typeof group === 'string' ? group : '', gvk.version as string, gvk.kind as string, name);
    }
  }
  const resources = own(doc, 'resources');
  if (Array.isArray(resources)) {
    resources.forEach((r, i) => {
      if (!isRecord(r)) return;
      const { apiVersion, kind, definition } = r as JsonObject & Record<'apiVersion' | 'kind' | 'definition', unknown>;
      if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof definition !== 'string') return;
      if (!Object.hasOwn(definitions, definition)) {
        throw new SchemaError({ file, path: `resources[${i}].definition`, reason: `no definition named "${definition}"` });
      }
      const { group, version } = parseApiVersion(apiVersion);
      add(group, version, kind, definition);
    });
  }

  const definition = (name: string): Schema | undefined =>
    Object.hasOwn(definitions, name) ? converter.convert(definitions[name]) : undefined;
  const converter = new JsonSchemaConverter(definitionsResolver(definition));
  return {
    lookup(gvk: GroupVersionKind): ObjectSchema | undefined {
      const versions = kinds.get(`${gvk.group}/${gvk.kind}`);
      const name = versions && pickVersion(versions, gvk.version);
      const schema = name === undefined ? undefined : definition(name);
      return schema?.kind === 'object' ? schema : undefined;
    },
    definition,
  };
}

/**
 * Reads a `--schema` file's text: JSON or YAML, either an OpenAPI v2 document or a stream of
 * CustomResourceDefinitions. Errors name the file and what is wrong.
 */
export function schemaRegistryFromText(text: string, file: string): SchemaSource {
  const docs = parseYamlStream(text);
  const values: unknown[] = [];
  for (const [i, d] of docs.entries()) {
    const reason = yamlErrorReason(d, text);
    if (reason !== undefined) {
      throw new SchemaError({ file, path: docs.length > 1 ? `document ${i + 1}` : '', reason: `cannot parse: ${reason}` });
    }
    const value: unknown = d.toJS({ maxAliasCount: 1000 });
    if (value !== null && value !== undefined) values.push(value);
  }
  const first = values[0];
  if (values.length === 1 && isRecord(first) && own(first, 'definitions') !== undefined) {
    return schemaRegistryFromOpenApi(first, { file });
  }
  const isCrd = (v: unknown): boolean => isRecord(v) && own(v, 'kind') === 'CustomResourceDefinition';
  const items = values.flatMap((v) => (isRecord(v) && Array.isArray(own(v, 'items')) ? (own(v, 'items') as unknown[]) : [v]));
  if (items.length > 0 && items.some(isCrd)) return schemaRegistryFromCrds(items, { file });
  throw new SchemaError({
    file,
    path: '',
    reason: 'expected an OpenAPI v2 document with "definitions" or CustomResourceDefinition objects',
  });
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}
