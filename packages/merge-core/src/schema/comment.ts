/**
 * Field schemas written in comments, as kyaml reads them: a line comment or head comment on a
 * field holding one JSON object that is an OpenAPI schema, e.g.
 *   containers: # {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}
 *   # {"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}
 *   spec:
 * A `$ref` (`#/definitions/<name>`) resolves against the given definitions (the built-ins).
 * The schema describes the commented field's value and overrides what the resource schema says.
 */
import { JsonSchemaConverter, definitionsResolver, isRecord } from './json-schema.js';
import type { DefinitionSource, Schema } from './types.js';

/** Keywords that make a JSON object a schema (anything else is an ordinary comment). */
const SCHEMA_KEYWORDS = [
  '$ref',
  'type',
  'items',
  'properties',
  'additionalProperties',
  'allOf',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
];

/**
 * The schema in a comment, or undefined when the comment is not a JSON schema (plain text,
 * kpt-merge comments, setter comments, JSON that is not an object or names no schema keyword).
 * `commentText` may include the leading `#` (of each line) or not, as the `yaml` library gives it.
 */
export function schemaFromComment(commentText: string, definitions?: DefinitionSource): Schema | undefined {
  const text = commentText
    .split(/\r?\n/)
    .map((line) => line.replace(/^\s*#*/, '').trim())
    .join('\n')
    .trim();
  if (!text.startsWith('{') || !text.endsWith('}')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || !SCHEMA_KEYWORDS.some((k) => Object.hasOwn(value, k))) return undefined;
  const resolve = definitionsResolver((name) => definitions?.definition(name));
  return new JsonSchemaConverter(resolve).convert(value);
}
