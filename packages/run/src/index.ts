// The run: control resources → plan → one proposal per variant, update and removal.
export {
  run,
  DEFAULT_CONCURRENCY,
  DEFAULT_CONFIG_DIR,
  type RunOptions,
  type RunProgress,
  type RunMode,
} from './run.js';
export {
  countedAs,
  countResults,
  type RunReport,
  type VariantResult,
  type JobAction,
  type Counted,
  type Counts,
} from './report/result.js';
export type { PackageFiles } from './jobs/file-content.js';
export {
  createPackageUpdateMaterialize,
  packageUpdateMaterialize,
  type Materialize,
  type MaterializeInput,
  type MaterializeResult,
} from './jobs/materialize.js';
export { getPackageFiles } from './jobs/upstream-copy.js';
export { parseMetadataBlock, type ProposalMetadata } from './propose/proposal-metadata.js';
export { renderFailureOfBody } from './propose/proposal-body.js';
export { decideBoxes, selectDecideBox, tickLine, type DecideBox } from './propose/decide-boxes.js';
export {
  dashboardBoxes,
  selectDashboardBox,
  selectRolloutBox,
  type DashboardBox,
  type DashboardBoxKind,
} from './dashboard/dashboard-boxes.js';
export type { RolloutTickKind } from './dashboard/rollout-boxes.js';
export { failureGroupLines, groupFailures, type FailureGroup } from './report/failure-groups.js';
// The one escaping of strangers' text into Markdown, for every writer (the Action's summary too).
export { inert, type MarkdownContext, shortName } from './markdown.js';
export type { RenderFailureReport } from './jobs/render.js';
export { renderTable, reportJson } from './report/report.js';
export { rolloutLine, rolloutReport, type RolloutReport } from './report/rollouts.js';
// The gates a planned job passes before it proposes (a schedule window, a freeze, the removal guard).
export { GATES } from './gates/gates.js';
export { PASS, type Gate, type GateContext, type GateDecision } from './gates/gate.js';
export type { PlannedJob } from './plan/jobs-plan.js';
// The fleet dashboard: its text (render, parse) and what a run did with it.
export {
  dashboardEntries,
  dashboardState,
  jobKey,
  parseDashboard,
  removalSetKey,
  renderDashboard,
  type DashboardEntry,
  type DashboardState,
  type DashboardTicks,
} from './dashboard/dashboard.js';
export { dashboardRepositoryProblem, dashboardTarget, type DashboardOptions, type DashboardReport } from './dashboard/dashboard-run.js';
export { readFleetDashboard, type FleetDashboard, type FleetDashboardOptions } from './dashboard/dashboard-read.js';
// The fleet preview: a candidate change's proposals, computed by the dry run and summarised.
export {
  preview,
  previewOf,
  impactOf,
  type PreviewCandidate,
  type PreviewImpact,
  type PreviewOptions,
  type PreviewReport,
  type PreviewSummary,
  type PreviewVariant,
} from './preview/preview.js';
export { renderPreview, type PreviewFormat, type RenderPreviewOptions } from './preview/preview-render.js';
export type { UpstreamRef } from './preview/preview-scope.js';
export { ControlError, fieldPath, issueLine, type ControlIssue } from './control/control.js';
export { RunError, type RunErrorCode } from './errors.js';
export { branchPrefixProblem, DEFAULT_BRANCH_PREFIX } from './settings/branch-prefix.js';
export { parseShard, shardOf, shardProblem, type Shard } from './plan/shard.js';
// Settings: one parse, one set of rules and one precedence for flags, Action inputs and RunSettings.
export {
  checkSettings,
  describeOrigin,
  describeProblem,
  normaliseSettings,
  resolveSettings,
  valueFromText,
  SettingsError,
  SETTING_RULES,
  SETTING_KEYS,
  DEFAULT_AUTHOR,
  MAX_CONCURRENCY,
  DEFAULT_MAX_REMOVALS,
  type CheckedSettings,
  type ForgeName,
  type Origin,
  type RawSetting,
  type RawSettings,
  type ResolvedSettings,
  type SettingKey,
  type SettingProblem,
  type SettingRule,
  type SettingValues,
  type TextKind,
  NO_SETTINGS,
  overSettings,
  settingNames,
  settingRow,
  type SettingRow,
} from './settings/settings.js';
export { actionInputsYaml, generatedSettingsFiles, runSettingsSpecSchema, type GeneratedFile } from './settings/settings-generated.js';
export {
  optionSettings,
  runSettingsSource,
  settingOptions,
  textSettings,
  type SettingOptions,
  type TextReader,
} from './settings/settings-sources.js';
export { withInterruptCleanup } from './interrupt.js';
// Forges: where proposals live.
export { PROPOSE_AGAIN_LABEL, STOP_LABEL } from './forges/forge.js';
export { githubProposals, listProposals, type GitHubProposalsOptions, type ListProposalsOptions } from './report/proposals.js';
export type {
  DashboardRecord,
  DashboardTarget,
  Forge,
  Proposal,
  ProposalInput,
  ProposalState,
  ProposalStatus,
  ProposalTarget,
  PublishCommitInput,
  UpsertResult,
  WriteOperation,
} from './forges/forge.js';
export { ForgeError, type ForgeErrorCode } from './forges/errors.js';
export { createLocalForge, type LocalForgeOptions } from './forges/local.js';
export { LOCAL_STATUS_STATES, type LocalStatus, type LocalStatusState } from './forges/local-statuses.js';
export { listDownstreamStatuses, setDownstreamStatus, type LocalStatusOptions } from './policy/local-status.js';
// The GitHub forge itself is `@kdelta/run/github` (Octokit loads with it); its types are here.
export type { GitHubForge, GitHubForgeOptions, GitHubRunOptions, DraftPolicy, AutoMergeMethod } from './forges/github/github.js';
export type { ForgeClock, GitHubAppCredentials } from './forges/github/auth.js';
export { Budget, DEFAULT_BUDGET, type BudgetReport } from './forges/budget.js';
export { nextPageOf, type NextPage } from './forges/github/pages.js';
export { serverTokenSecrets, type ServerToken } from '@kdelta/git-source';
