import { isAbsolute, relative, resolve } from 'node:path';
import { KdeltaError } from '@kdelta/merge-core';
import { branchPrefixProblem, type GitHubAppCredentials, type GitHubRunOptions, type RunMode, type RunOptions } from '@kdelta/run';

/**
 * The Action's inputs → `run()`'s options: a pure function of the raw input strings (as
 * `core.getInput` returns them, '' when unset) and the workspace, so every rule is unit-tested
 * without a runner.
 */

/** Reads one input by its name in action.yml; '' when it is not set. */
export type InputReader = (name: string) => string;

export type ForgeName = 'github' | 'local';
export type DraftPolicy = 'always' | 'never' | 'conflicts';
export type AutoMerge = false | 'merge' | 'squash' | 'rebase';

/** The GitHub forge's options (the `github` field of run options when forge is `github`). */
export type GitHubOptions = GitHubRunOptions;

/** `run()`'s options, as the inputs set them. */
export type ActionRunOptions = RunOptions;

export interface ActionSettings {
  readonly options: ActionRunOptions;
  /** The config directory relative to the workspace (annotations name files from there). */
  readonly config: string;
  readonly forge: ForgeName;
  /** Never printed: registered as a secret before anything is logged. */
  readonly token: string;
}

/** An input has a value the Action cannot use: names the input, the value and what is expected. */
export class InputError extends KdeltaError {
  override readonly name = 'InputError';
  declare readonly code: 'invalid-input';
  constructor(
    readonly input: string,
    message: string,
  ) {
    super({ code: 'invalid-input', message: `input "${input}": ${message}` });
  }
}

const TRUE = new Set(['true', 'True', 'TRUE']);
const FALSE = new Set(['false', 'False', 'FALSE']);

/** A YAML 1.2 core boolean, as `core.getBooleanInput` accepts them; '' → the default. */
export function parseBoolean(name: string, raw: string, fallback: boolean): boolean {
  const v = raw.trim();
  if (v === '') return fallback;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new InputError(name, `expected true or false (got "${v}")`);
}

/** A list: comma- or newline-separated, blanks dropped (`a, b` and a YAML block both work). */
export function parseList(raw: string): string[] {
  return raw
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function parsePositiveInteger(name: string, raw: string): number | undefined {
  const v = raw.trim();
  if (v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InputError(name, `expected a positive whole number (got "${v}")`);
  return Number(v);
}

function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T | undefined {
  const v = raw.trim();
  if (v === '') return undefined;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new InputError(name, `expected one of ${allowed.join(', ')} (got "${v}")`);
  }
  return v as T;
}

const SHARD = /^(\d+)\/(\d+)$/;

export interface InputContext {
  /** The control repository's work tree (`GITHUB_WORKSPACE`). */
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Every input checked at once, before anything runs: the first bad one throws an InputError. */
export function settingsFromInputs(input: InputReader, ctx: InputContext): ActionSettings {
  const config = input('config').trim() || '.kdelta';
  const resolvedConfig = resolve(ctx.workspace, config);
  const rel = relative(ctx.workspace, resolvedConfig);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new InputError('config', `must be inside the workspace ${ctx.workspace} (got "${config}")`);
  }
  const forge = oneOf<ForgeName>('forge', input('forge'), ['github', 'local']) ?? 'github';
  const mode = oneOf<RunMode>('mode', input('mode'), ['variants', 'updates', 'both']);
  const shard = input('shard').trim();
  if (shard !== '') {
    const m = SHARD.exec(shard);
    if (!m || Number(m[2]) < 1 || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) {
      throw new InputError('shard', `expected k/n with 1 ≤ k ≤ n, e.g. 2/5 (got "${shard}")`);
    }
  }
  const concurrency = parsePositiveInteger('concurrency', input('concurrency'));
  const budget = parsePositiveInteger('budget', input('budget'));
  const dryRun = parseBoolean('dry-run', input('dry-run'), false);
  const draft = oneOf<DraftPolicy>('draft', input('draft'), ['always', 'never', 'conflicts']);
  const autoMergeRaw = oneOf('auto-merge', input('auto-merge'), ['false', 'merge', 'squash', 'rebase']);
  const autoMerge: AutoMerge | undefined = autoMergeRaw === undefined ? undefined : autoMergeRaw === 'false' ? false : autoMergeRaw;
  const signedCommits = parseBoolean('signed-commits', input('signed-commits'), false);
  const allowExec = parseBoolean('allow-exec', input('allow-exec'), false);
  const allowLocalUpstreams = parseBoolean('allow-local-upstreams', input('allow-local-upstreams'), false);
  const credentialHosts = parseList(input('credential-hosts'));
  const authorName = input('commit-author-name').trim();
  const authorEmail = input('commit-author-email').trim();
  if ((authorName === '') !== (authorEmail === '')) {
    throw new InputError(
      authorName === '' ? 'commit-author-name' : 'commit-author-email',
      'set both commit-author-name and commit-author-email, or neither',
    );
  }
  if (authorEmail !== '' && !/^[^\s<>@]+@[^\s<>@]+$/.test(authorEmail)) {
    throw new InputError('commit-author-email', `expected an email address (got "${authorEmail}")`);
  }
  // '' is an unset input (the default prefix); any other value follows the run's one rule
  const branchPrefix = input('branch-prefix').trim();
  const prefixProblem = branchPrefix === '' ? undefined : branchPrefixProblem(branchPrefix);
  if (prefixProblem) throw new InputError('branch-prefix', prefixProblem);
  const token = input('token').trim();
  const app = githubAppInputs(input);
  if (forge === 'github' && token === '' && !app) {
    throw new InputError(
      'token',
      "the github forge needs a token: leave the input unset to use the workflow's GITHUB_TOKEN, or pass a secret",
    );
  }

  // The runner says where GitHub is (github.com or an Enterprise Server): pass it on as it is.
  const endpoints = {
    ...(ctx.env.GITHUB_API_URL ? { apiUrl: ctx.env.GITHUB_API_URL } : {}),
    ...(ctx.env.GITHUB_SERVER_URL ? { serverUrl: ctx.env.GITHUB_SERVER_URL } : {}),
    ...(ctx.env.GITHUB_GRAPHQL_URL ? { graphqlUrl: ctx.env.GITHUB_GRAPHQL_URL } : {}),
  };
  const github: GitHubOptions = {
    token,
    tokenName: 'the `token` input',
    ...(app ? { app } : {}),
    ...endpoints,
    labels: parseList(input('labels')),
    assignees: parseList(input('assignees')),
    reviewers: parseList(input('reviewers')),
    teamReviewers: parseList(input('team-reviewers')),
    ...(draft === undefined ? {} : { draft }),
    ...(autoMerge === undefined ? {} : { autoMerge }),
    signedCommits,
  };
  const options: ActionRunOptions = {
    cwd: ctx.workspace,
    config,
    forge,
    dryRun,
    allowExec,
    env: ctx.env,
    ...(mode === undefined ? {} : { mode }),
    ...(shard === '' ? {} : { shard }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(budget === undefined ? {} : { budget }),
    ...(authorName === '' ? {} : { author: { name: authorName, email: authorEmail } }),
    ...(branchPrefix === '' ? {} : { branchPrefix }),
    ...(allowLocalUpstreams ? { allowLocalUpstreams } : {}),
    ...(credentialHosts.length > 0 ? { credentialHosts } : {}),
    ...(forge === 'github' ? { github } : {}),
  };
  return { options, config, forge, token };
}

/**
 * GitHub App authentication: `app-id` (or `client-id`) and `private-key`. With them the run mints
 * an installation token per owner of the downstream repositories, and `token` is not used.
 */
export function githubAppInputs(input: InputReader): GitHubAppCredentials | undefined {
  const appId = input('app-id').trim();
  const clientId = input('client-id').trim();
  const privateKey = input('private-key').trim();
  if (appId === '' && clientId === '' && privateKey === '') return undefined;
  if (appId !== '' && clientId !== '') throw new InputError('client-id', 'give app-id or client-id, not both');
  if (appId === '' && clientId === '') throw new InputError('private-key', 'a GitHub App private key needs app-id or client-id');
  if (appId !== '' && !/^\d+$/.test(appId))
    throw new InputError('app-id', `expected the App's numeric id (got "${appId}"); a client id goes in client-id`);
  if (!privateKey.includes('PRIVATE KEY-----')) {
    throw new InputError('private-key', "expected the App's private key in PEM (-----BEGIN RSA PRIVATE KEY----- …), from a secret");
  }
  return { ...(appId ? { appId } : { clientId }), privateKey: `${privateKey}\n` };
}
