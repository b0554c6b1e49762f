import { KdeltaError } from '@kdelta/errors';
import { redact } from './redact.js';

/** What kind of failure a git invocation was, classified from git's exit status and stderr. */
export type GitErrorCode =
  | 'refused-argument' // a ref, URL or path starting with `-` (would be read as an option)
  | 'not-a-repository' // the URL or path is not a git repository
  | 'unknown-revision' // the ref or commit does not exist on the remote
  | 'auth' // the remote refused our credentials or asked for some
  | 'forbidden' // the remote took our credentials but does not let them do this (HTTP 403: a push without write access)
  | 'stale-lease' // push --force-with-lease: the remote branch moved since we read it
  | 'non-fast-forward' // push rejected because it would lose commits
  | 'not-found' // a directory that does not exist at the ref
  | 'lock-timeout' // another process held the cache lock too long
  | 'refused-local' // package content named a repository on this machine that the user did not
  | 'invalid-pattern' // a listed repository pattern (KDELTA_CREDENTIAL_REPOSITORIES) that is not one
  | 'invalid-server-token' // a server token (KDELTA_SERVER_TOKENS) that is not <server>=<token>
  | 'failed'; // anything else

export class GitError extends KdeltaError {
  override readonly name = 'GitError';
  declare readonly code: GitErrorCode;
  /** The git arguments, credentials redacted. */
  readonly args: readonly string[];
  /** git's stderr, credentials redacted. */
  readonly stderr: string;
  readonly exitCode: number | undefined;

  constructor(input: {
    code: GitErrorCode;
    message: string;
    args?: readonly string[];
    stderr?: string;
    exitCode?: number;
    secrets?: readonly string[];
  }) {
    const secrets = input.secrets ?? [];
    super({ code: input.code, message: redact(input.message, secrets) });
    this.args = (input.args ?? []).map((a) => redact(a, secrets));
    this.stderr = redact(input.stderr ?? '', secrets);
    this.exitCode = input.exitCode;
  }
}

export function isGitError(value: unknown): value is GitError {
  return value instanceof GitError;
}

const patterns: ReadonlyArray<readonly [RegExp, GitErrorCode]> = [
  [/\(stale info\)/, 'stale-lease'],
  [/\(non-fast-forward\)|\(fetch first\)/, 'non-fast-forward'],
  [
    /does not appear to be a git repository|not a git repository|repository '.*' not found|Could not read from remote repository/i,
    'not-a-repository',
  ],
  [
    /Authentication failed|could not read Username|could not read Password|Permission denied \(publickey|terminal prompts disabled|HTTP Basic: Access denied/i,
    'auth',
  ],
  [/The requested URL returned error: 403|remote: Permission to \S+ denied/i, 'forbidden'],
  [
    /unknown revision|couldn't find remote ref|not our ref|bad revision|invalid object name|no such ref|did not match any|Not a valid object name|not a valid ref|upload-pack: not our ref/i,
    'unknown-revision',
  ],
];

export function classify(stderr: string): GitErrorCode {
  for (const [re, code] of patterns) if (re.test(stderr)) return code;
  return 'failed';
}
