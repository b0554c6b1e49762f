// The run: control resources → plan → one proposal per variant, update and removal.
export {
  run,
  DEFAULT_CONCURRENCY,
  DEFAULT_CONFIG_DIR,
  type RunOptions,
  type RunProgress,
  type RunMode,
} from './run.js';
export type { RunReport, VariantResult, JobAction, Materialize, MaterializeInput, MaterializeResult, PackageFiles } from './job.js';
export { createPackageUpdateMaterialize, packageUpdateMaterialize, getPackageFiles } from './materialize.js';
export { parseMetadataBlock, renderTable, reportJson, type ProposalMetadata, type RenderFailureReport } from './report.js';
export { ControlError, type ControlIssue } from './control.js';
export { RunError, type RunErrorCode } from './errors.js';
export { branchPrefixProblem, DEFAULT_BRANCH_PREFIX } from './branch-prefix.js';
export { parseShard, shardOf, type Shard } from './shard.js';
export { withInterruptCleanup } from './interrupt.js';
// Forges: where proposals live.
export { STOP_LABEL } from './forge/forge.js';
export type {
  Forge,
  Proposal,
  ProposalInput,
  ProposalState,
  ProposalStatus,
  ProposalTarget,
  PublishCommitInput,
  UpsertResult,
  WriteOperation,
} from './forge/forge.js';
export { ForgeError, type ForgeErrorCode } from './forge/errors.js';
export { createLocalForge, type LocalForgeOptions } from './forge/local.js';
export {
  createGitHubForge,
  type GitHubForge,
  type GitHubForgeOptions,
  type GitHubRunOptions,
  type DraftPolicy,
  type AutoMergeMethod,
} from './forge/github.js';
export {
  APP_CLIENT_ID_ENV,
  APP_ID_ENV,
  APP_PRIVATE_KEY_ENV,
  type ForgeClock,
  type GitHubAppCredentials,
} from './forge/github-auth.js';
export { Budget, DEFAULT_BUDGET, type BudgetReport } from './forge/budget.js';
