export type {
  Condition,
  ConditionStatus,
  GitLock,
  GitSource,
  Inventory,
  KptFunction,
  Kptfile,
  ObjectMeta,
  OriginType,
  PackageInfo,
  Pipeline,
  PipelineList,
  ReadinessGate,
  Selector,
  Status,
  StringMap,
  UpdateStrategy,
  Upstream,
  UpstreamLock,
} from './types.js';
export { KPTFILE_API_VERSION, KPTFILE_KIND, KPTFILE_NAME, PIPELINE_LISTS, UPDATE_STRATEGIES } from './types.js';
export { KptfileError, formatIssue, type KptfileIssue, type KptfileIssueCode } from './errors.js';
export { decodeKptfile, parseKptfile, printKptfile, readKptfileText, type DecodeResult, type ParsedKptfile } from './parse.js';
export { formatKptfile, type FormatOptions } from './format.js';
export {
  isKustomization,
  validateConfigPath,
  validateFunction,
  validateFunctionConfig,
  validateInventory,
  validateKptfile,
} from './validate.js';
export { imageWithoutTag, parseImageReference, validateImageReference, type ImageReference } from './image.js';
export { derivedFunctionKey, pipelineKeyMode, type PipelineKeyMode } from './pipeline-key.js';
export {
  mergeKptfile,
  type KptfileMergeInput,
  type KptfileMergeOptions,
  type KptfileMergeResult,
} from './merge.js';
export {
  addMergeComments,
  addMergeCommentsIdentified,
  parseMergeComment,
  MERGE_COMMENT_PREFIX,
  UPSTREAM_IDENTIFIER_ANNOTATION,
  type MergeIdentity,
} from './merge-comment.js';
export {
  describePackage,
  layoutResources,
  packageFiles,
  readPackage,
  savePackage,
  writePackage,
  type FileWrite,
  type KptPackage,
  type PackageFile,
  type PackageFileKind,
  type PackageResource,
  type PlacedResource,
  type WritePackageOptions,
  type WritePackageResult,
} from './package.js';
export { KRMIGNORE_FILE, parseKrmIgnore, type KrmIgnore } from './krmignore.js';
export { rebuildYamlFile, splitYamlDocuments, type YamlChunk } from './yaml-file.js';
// The one way kdelta reads YAML (merge-core's), for the packages that build on this one.
export { parseYamlDocument, parseYamlStream, stringifyYaml, yamlDocumentOptions } from '@kdelta/merge-core';
export {
  editPackageContext,
  findPackageContext,
  isPackageContext,
  packageContextConfigMap,
  PACKAGE_CONTEXT_FILE,
  PACKAGE_CONTEXT_NAME,
  RESERVED_PACKAGE_CONTEXT_KEYS,
  type PackageContextEdit,
} from './package-context.js';
export {
  PackageTree,
  PackageView,
  kptfileHasUpstream,
  treePath,
  type NestedPackageOptions,
  type TreeChanges,
  type TreeFile,
} from './package-tree.js';
export { applyChanges, commitTree, isEmptyChange, writeTreeChanges } from './package-write.js';
export {
  canonical as canonicalPackagePath,
  copyTreeFast,
  makeWorkDir,
  pendingSwapTarget,
  recoverInterruptedSwap,
  sweepAbandonedWork,
  swap as swapInTree,
  SwapError,
  type SwapErrorCode,
} from './swap.js';
export { makeTempDir, removeAllTempDirs, removeTempDir } from './temp.js';
export { checkOutputPath, isDirectory, listFiles, readText, writeFileAtomic, type OutputPath } from './fs.js';
export {
  mergePackages,
  readMergeSide,
  type MergeSide,
  type MergeSides,
  type PackageMergeOptions,
  type PackageMergeReport,
  type PackageMergeResult,
} from './merge-packages.js';
