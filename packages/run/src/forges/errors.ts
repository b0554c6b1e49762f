import { KdeltaError } from '@kdelta/errors';

/** Why a forge call failed: stable codes a caller (the run, the Action) can act on. */
export type ForgeErrorCode =
  | 'invalid-option' // a forge option out of range: the write budget
  | 'missing-token' // the github forge without GITHUB_TOKEN / GH_TOKEN
  | 'missing-installation' // the GitHub App is not installed on a repository's owner
  | 'budget-spent' // a retried write would go past the run's budget
  | 'unsupported-repository' // a downstream URL the forge cannot serve
  | 'github-request-failed' // GitHub refused or answered what the forge cannot use
  | 'missing-permission' // GitHub named a permission the token lacks (the message says which, and how to give it)
  | 'forbidden' // GitHub refused the token (403) without naming a permission: not allowed on that repository
  | 'installation-suspended' // the GitHub App's installation is suspended: an owner must unsuspend it; no token helps
  | 'body-too-long' // a proposal body over GitHub's limit even when shortened
  | 'branch-moved' // a branch moved since it was read: left alone
  | 'invalid-name' // a name that cannot name a record file
  | 'invalid-proposal-record' // a local forge record that cannot be read
  | 'invalid-statuses-file'; // the local forge's statuses.json (health signals a person set) cannot be read

/** An error of a forge, in the workspace's one error contract. */
export class ForgeError extends KdeltaError {
  override readonly name = 'ForgeError';
  declare readonly code: ForgeErrorCode;
  constructor(code: ForgeErrorCode, message: string, at: { file?: string | undefined; path?: string | undefined } = {}) {
    super({ code, message, ...at });
  }
}
