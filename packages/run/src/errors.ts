import { KdeltaError } from '@kdelta/errors';
import type { ForgeErrorCode } from './forges/errors.js';

/** Why a run, a job or a forge call stopped: stable codes a caller (the Action) can act on. */
export type RunErrorCode =
  | ForgeErrorCode // a forge's failure, passed on
  | 'invalid-option' // a run option out of range: budget, concurrency, shard, branch prefix
  | 'missing-token' // the github forge without GITHUB_TOKEN / GH_TOKEN
  | 'unsupported-repository' // a downstream URL the forge cannot serve
  | 'github-request-failed' // GitHub refused or answered what the forge cannot use
  | 'body-too-long' // a proposal body over GitHub's limit even when shortened
  | 'branch-moved' // a branch moved since it was read: left alone
  | 'branch-missing' // the downstream has no such base branch
  | 'head-is-base' // a proposal branch that is its own base branch: never pushed
  | 'name-collision' // two variants or packages that would share a branch, a record or a package directory
  | 'invalid-name' // a variant or package name that cannot name a file or directory
  | 'invalid-proposal-record' // a local forge record that cannot be read
  | 'invalid-kptfile' // a Kptfile the run must edit does not parse
  | 'not-a-package' // a directory with no Kptfile where a kpt package is needed
  | 'upstream-moved' // the upstream ref moved between resolving it and fetching it: the next run picks it up
  | 'origin-unreachable' // the commit a package's upstreamLock names cannot be fetched from the lock's repository
  | 'unsafe-path' // a file path that leaves the package
  | 'symlinked-package' // a package directory (or one above it) is a symlink: never followed
  | 'interrupted' // the run was stopped (a signal, RunOptions.signal) before it finished
  | 'no-such-box' // `kdelta decide`: no open box of a proposal or the dashboard is the one named
  | 'ambiguous-box' // `kdelta decide`: several boxes are: their ids are listed
  | 'no-dashboard' // `kdelta dashboard`, `kdelta decide --dashboard`: no run has kept one yet
  | 'no-such-repository' // `kdelta status`: no Repository of the control resources is the one named, or several are
  | 'no-such-rollout' // `kdelta rollout`: no rollout of the dashboard is the one named, or several are
  | 'internal'; // a broken invariant: a bug to report

/** An error of `kdelta run`, its jobs and its forges, in the workspace's one error contract. */
export class RunError extends KdeltaError {
  override readonly name = 'RunError';
  declare readonly code: RunErrorCode;
  constructor(code: RunErrorCode, message: string, at: { file?: string | undefined; path?: string | undefined } = {}) {
    super({ code, message, ...at });
  }
}
