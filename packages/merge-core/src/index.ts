/**
 * @kdelta/merge-core: the 3-way merge of KRM resources with kpt's semantics, schema-aware like
 * server-side apply, comment-preserving, and honest about conflicts.
 */
export {
  mergeFiles,
  type MergeFilesInput,
  type MergeFilesResult,
  type ResourceAction,
  type ResourceReport,
  type SourceFile,
} from './resource/merge-files.js';
export { merge3Text, type ValueInput, type ValueMergeResult } from './value.js';
export { keepingLines, withFinalLineBreak } from './emit/print.js';
export type { ConflictStrategy, MergeOptions } from './options.js';
// Re-exported from @kdelta/errors, where the one class lives, for callers that took it from here.
export { composeMessage, isKdeltaError, KdeltaError, locationParts, type KdeltaErrorInit } from '@kdelta/errors';
export {
  MergeInputError,
  type ConflictValues,
  type Conflict,
  type Decision,
  type MergeInputErrorCode,
  type RuleName,
  type Side,
} from './errors.js';
export { FieldPath } from './path.js';
export { isPinnedPair, pinPair, PIN_COMMENT } from './collate/pin.js';
export { setResourceField, type SetFieldInput, type SetFieldResult } from './resource/set-field.js';
export {
  formatIdentity,
  groupOf,
  type IdentifiedDocument,
  identifyScanned,
  identityOf,
  mergeCommentOf,
  type ResourceIdentity,
} from './resource/identity.js';
export {
  createParsedTexts,
  parseStream,
  parseYamlDocument,
  parseYamlStream,
  stringifyYaml,
  yamlDocumentOptions,
  yamlDocumentValue,
  yamlErrorReason,
  yamlParseOptions,
  type ParsedTexts,
  type SourceDocument,
  type SourceFileDocuments,
} from './yaml/parse.js';
export {
  scanEachDocument,
  scannedPair,
  scanStream,
  type ScannedDocument,
  type ScannedLines,
  type ScannedOrDeclined,
  type ScannedPair,
  type ScannedValue,
} from './yaml/scan.js';
export {
  builtinSchemas,
  FALLBACK_MERGE_KEYS,
  isCustomResourceDefinition,
  layerSchemas,
  schemaRegistryFromCrds,
  schemaRegistryFromOpenApi,
  schemaRegistryFromText,
  SchemaError,
  type GroupVersionKind,
  type ListSchema,
  type ListType,
  type MapType,
  type ObjectSchema,
  type Schema,
  type SchemaRegistry,
} from './schema/index.js';
