export { GitError, isGitError, type GitErrorCode } from './errors.js';
export { redact, hideCredentials } from './redact.js';
export { runGit, stopRunningGit, type GitRunOptions, type GitResult } from './exec.js';
export {
  assertSafeArgument,
  repoLocation,
  repoCacheKey,
  repositoryIdentity,
  splitCredentials,
  withoutCredentials,
  looksLikeCommit,
  isFullCommit,
  type RepoLocation,
  type RepoKind,
  type SplitRepo,
  type UrlCredentials,
} from './url.js';
export { credentialsFor, type Credentials } from './auth.js';
export {
  sourceTrust,
  trustNamed,
  hostOf,
  credentialsAllowed,
  assertContentSource,
  CREDENTIAL_HOSTS_ENV,
  ALLOW_LOCAL_UPSTREAMS_ENV,
  type SourceTrust,
  type SourceTrustOptions,
} from './trust.js';
export {
  listRemoteRefs,
  listTags,
  defaultBranch,
  resolveRef,
  pickRef,
  pickCommit,
  detectMovedRef,
  latestRelease,
  parseSemanticVersion,
  compareSemanticVersions,
  type Release,
  type SemanticVersion,
  type RemoteOptions,
  type RemoteRef,
  type ResolvedRef,
  type RefKind,
} from './refs.js';
export {
  fetchPackage,
  expandCommit,
  clearCache,
  defaultCacheDir,
  normalizeDirectory,
  type FetchPackageOptions,
  type FetchedPackage,
} from './cache.js';
export { releaseHeldLocks } from './lock.js';
export {
  createBranch,
  commitAll,
  push,
  deleteRemoteBranch,
  fetchBranch,
  cloneBare,
  readLocalHead,
  readRemoteHead,
  type Author,
  type WorkTreeOptions,
} from './write.js';
export {
  listBranches,
  listFiles,
  showFile,
  isAncestor,
  cloneShared,
  stageAll,
  commitStaged,
  revParse,
  commitsSince,
  lastCommitWithLine,
  changedBetween,
  workTreeRoot,
  checkoutDetached,
  currentBranch,
  remoteUrl,
  type StagedChange,
  type CommitInfo,
} from './local.js';
