/**
 * @kdelta/test-support (private): fixtures the workspace's tests share. kpt's pkg get / pkg update
 * conformance scenarios run through the CLI (packages/cli) and through the library
 * (packages/package-update) from this one runner and one copy of the data; `kdelta run`'s tests and
 * the Action's share one fleet of repositories on disk.
 */
export {
  type ConformanceOptions,
  commitStep,
  describePkgUpdateConformance,
  initUpstreams,
  type PkgCommand,
  type PkgCommandResult,
  scratch,
  type UpdateEntryPoints,
} from './pkg-update/suite.js';
export { type Any, Vars } from './pkg-update/runner.js';
export { tempDir } from './temp.js';
export {
  createFleet,
  type Fleet,
  git,
  gitEnv,
  packageVariant,
  readTree,
  repository,
  UPSTREAM_PACKAGE,
  writeTree,
} from './fleet.js';
