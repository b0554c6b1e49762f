/**
 * @kdelta/package-update: kpt's `pkg get`, `pkg update` and `pkg diff` as a library. A package is
 * read once into memory, merged there, and written once, all or nothing; results come back as
 * data, progress through an optional callback.
 */
export {
  getPackage,
  getPackageTree,
  type GetPackageOptions,
  type GetPackageTreeOptions,
  type GetResult,
  type GetTreeResult,
} from './get.js';
export {
  updatePackage,
  updatePackageTree,
  type FileOutcome,
  type FileStatus,
  type PackageOutcome,
  type TreeUpdateResult,
  type UpdatePackageOptions,
  type UpdatePackageTreeOptions,
  type UpdateResult,
} from './update.js';
export {
  diffPackage,
  diffTrees,
  fieldChanges,
  fieldDiffs,
  formatChanges,
  type DiffResult,
  type FieldDiff,
  type PkgChange,
} from './diff.js';
export { updater, updateTree } from './nested.js';
export { replaceNonKrmFiles } from './strategies/resource-merge.js';
export type { PackageAction, PackageVisit, UpdateInput, UpdateOutcome } from './strategies/types.js';
export { isUpdateStrategy, strategyOf, updateStrategies, type UpdateStrategy } from './kptfile.js';
export { UpdateError, type UpdateErrorCode } from './errors.js';
export { commitTree } from './commit.js';
export { createFetchMemo, type FetchMemo, type GitOptions } from './fetch.js';
export type { ProgressEvent, ProgressListener } from './progress.js';
export { pendingSwapTarget, recoverInterruptedSwap, removeAllTempDirs } from '@kdelta/kptfile-model';
