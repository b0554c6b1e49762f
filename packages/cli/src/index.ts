export { main, defaultIo } from './main.js';
export type { Command, Io } from './command.js';
export { UsageError, ExitCode } from './command.js';
export { run, type RunOptions, type RunProgress, type RunMode } from './run/run.js';
export type { RunReport, VariantResult, JobAction, Materialize, MaterializeInput, MaterializeResult, PackageFiles } from './run/job.js';
export { ControlError, type ControlIssue } from './run/control.js';
export type { Forge, Proposal, ProposalInput, ProposalState, ProposalStatus, ProposalTarget, UpsertResult } from './forge/forge.js';
export { createLocalForge, type LocalForgeOptions } from './forge/local.js';
