export type {
  DefinitionSource,
  GroupVersionKind,
  ListSchema,
  ListType,
  MapType,
  ObjectSchema,
  ScalarSchema,
  Schema,
  SchemaRegistry,
  SchemaSource,
} from './types.js';
export { builtinSchemas, kustomizationSchemas } from './builtin.js';
export { schemaRegistryFromOpenApi, schemaRegistryFromText, type OpenApiOptions } from './openapi.js';
export { schemaRegistryFromCrds, isCustomResourceDefinition, type CrdOptions } from './crd.js';
export { layerSchemas } from './layered.js';
export { schemaFromComment } from './comment.js';
export { FALLBACK_MERGE_KEYS, KYAML_INFERRED_KEYS, inferListKeys } from './fallback.js';
export { SchemaError } from './errors.js';
export { compareKubeVersions, parseApiVersion } from './versions.js';
export { SCALAR } from './json-schema.js';
