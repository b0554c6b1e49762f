export { main, defaultIo } from './main.js';
export type { Command, Io } from './command.js';
export { UsageError, ExitCode } from './command.js';
export { CliInputError, exitCodeFor, formatError } from './errors.js';
// the base of every error kdelta's packages throw: callers branch on its `code`
export { isKdeltaError, KdeltaError, type KdeltaErrorInit } from '@kdelta/merge-core';
// The one way kdelta reads YAML, for the Action.
export { parseYamlStream } from '@kdelta/merge-core';
export { withInterruptCleanup } from './interrupt.js';
export { run, type RunOptions, type RunProgress, type RunMode } from './run/run.js';
export type { RunReport, VariantResult, JobAction, Materialize, MaterializeInput, MaterializeResult, PackageFiles } from './run/job.js';
export type { RenderFailureReport } from './run/report.js';
export { ControlError, type ControlIssue } from './run/control.js';
export { RunError, type RunErrorCode } from './run/errors.js';
export { branchPrefixProblem, DEFAULT_BRANCH_PREFIX } from './run/branch-prefix.js';
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
export { createLocalForge, type LocalForgeOptions } from './forge/local.js';
export {
  createGitHubForge,
  type GitHubForge,
  type GitHubForgeOptions,
  type GitHubRunOptions,
  type DraftPolicy,
  type AutoMergeMethod,
} from './forge/github.js';
export { Budget, DEFAULT_BUDGET, type BudgetReport } from './forge/budget.js';
