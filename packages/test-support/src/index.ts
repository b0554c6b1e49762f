/**
 * @kdelta/test-support (private): fixtures the workspace's tests share. kpt's pkg get / pkg update
 * conformance scenarios from this one runner and one copy of the data, each at one layer: command
 * lines through the CLI (packages/cli), updaters through the library (packages/package-update);
 * `kdelta run`'s tests and the Action's share one fleet of repositories on disk.
 */
export {
  type CommandConformanceOptions,
  commitStep,
  describePkgCommandConformance,
  describeThreeWayConformance,
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
  removeBuiltFleets,
  repository,
  UPSTREAM_PACKAGE,
  writeTree,
} from './fleet.js';
export { BAD_SETTINGS, type BadSettingCase, GOOD_SETTINGS, type GoodSettingCase, type SettingCase } from './settings-cases.js';
