import { serverTokenSecrets } from '@kdelta/run';
import { isAbsolute, relative, resolve } from 'node:path';
import { KdeltaError } from '@kdelta/errors';
import {
  describeProblem,
  normaliseSettings,
  SettingsError,
  textSettings,
  type CheckedSettings,
  type ForgeName,
  type GitHubAppCredentials,
  type RunOptions,
} from '@kdelta/run';

/**
 * The Action's inputs → `run()`'s options: a pure function of the raw input strings (as
 * `core.getInput` returns them, '' when unset) and the workspace, so every rule is unit-tested
 * without a runner. The inputs that are run settings (concurrency, labels, …) are read and
 * checked by @kdelta/run's settings, as the CLI's flags and RunSettings are; the rest (config,
 * token, the GitHub endpoints) belong to the Action and are read here.
 */

/** Reads one input by its name in action.yml; '' when it is not set. */
export type InputReader = (name: string) => string;

export type { ForgeName };

/** `run()`'s options, as the inputs set them. */
export type ActionRunOptions = RunOptions;

export interface ActionSettings {
  /** `run()`'s options; the run settings among them are `settings`, checked once, here. */
  readonly options: ActionRunOptions & { readonly settings: CheckedSettings };
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

export interface InputContext {
  /** The control repository's work tree (`GITHUB_WORKSPACE`). */
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The Action's default forge (action.yml says so too): in a workflow, proposals are pull requests. */
const DEFAULT_FORGE: ForgeName = 'github';

/** The inputs that are run settings, by the run's rules; a blank input is unset (RunSettings, else the default, decides). */
function runSettingsFromInputs(input: InputReader): CheckedSettings {
  try {
    return normaliseSettings(
      textSettings('input', (name) => {
        const text = input(name).trim();
        return text === '' ? undefined : text;
      }),
    );
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    const [first, ...more] = error.problems;
    const name = first!.origin.type === 'input' ? first!.origin.name : 'unknown';
    throw new InputError(name, [first!.message, ...more.map(describeProblem)].join('\n'));
  }
}

/** The config directory, which must lie in the workspace. */
function configFromInput(input: InputReader, ctx: InputContext): string {
  const config = input('config').trim() || '.kdelta';
  const rel = relative(ctx.workspace, resolve(ctx.workspace, config));
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new InputError('config', `must be inside the workspace ${ctx.workspace} (got "${config}")`);
  }
  return config;
}

/**
 * The github forge's connection: the token input or a GitHub App's credentials, and where GitHub
 * is, as the runner says (github.com or an Enterprise Server). Credentials, not run settings.
 */
function githubConnection(input: InputReader, ctx: InputContext, forge: ForgeName) {
  const token = input('token').trim();
  const app = githubAppInputs(input);
  if (forge === 'github' && token === '' && !app) {
    throw new InputError(
      'token',
      "the github forge needs a token: leave the input unset to use the workflow's GITHUB_TOKEN, or pass a secret",
    );
  }
  return {
    token,
    tokenName: 'the `token` input',
    ...(app ? { app } : {}),
    ...(ctx.env.GITHUB_API_URL ? { apiUrl: ctx.env.GITHUB_API_URL } : {}),
    ...(ctx.env.GITHUB_SERVER_URL ? { serverUrl: ctx.env.GITHUB_SERVER_URL } : {}),
    ...(ctx.env.GITHUB_GRAPHQL_URL ? { graphqlUrl: ctx.env.GITHUB_GRAPHQL_URL } : {}),
  };
}

/**
 * The fleet dashboard: on unless the input says `false`; on GitHub, an issue of the workflow's
 * repository (GITHUB_REPOSITORY: the control repository, checked out as the workspace).
 */
function dashboardFromInput(input: InputReader, ctx: InputContext): ActionRunOptions['dashboard'] {
  const text = input('dashboard').trim();
  if (text !== '' && text !== 'true' && text !== 'false') throw new InputError('dashboard', `expected true or false (got "${text}")`);
  if (text === 'false') return false;
  const repository = ctx.env.GITHUB_REPOSITORY?.trim();
  return repository ? { repository } : {};
}

/**
 * Every secret value among the inputs, to mask (`core.setSecret`) before anything reads them: the
 * token, the comment token, the App's private key line by line (the runner masks each line of a
 * multi-line secret), and each server token, read from the text whether or not it parses, so that
 * a bad line's token is masked too.
 */
export function secretInputs(input: InputReader): string[] {
  const privateKey = input('private-key')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => !line.startsWith('-----'));
  const values = [input('token').trim(), input('comment-token').trim(), ...privateKey, ...serverTokenSecrets(input('server-tokens'))];
  return [...new Set(values.filter((v) => v !== ''))];
}

/** Every input checked at once, before anything runs: a bad one throws an InputError naming it. */
export function settingsFromInputs(input: InputReader, ctx: InputContext): ActionSettings {
  const config = configFromInput(input, ctx);
  const settings = runSettingsFromInputs(input);
  const forge = settings.values.forge ?? DEFAULT_FORGE;
  const connection = githubConnection(input, ctx, forge);
  const dashboard = dashboardFromInput(input, ctx);
  const options = {
    cwd: ctx.workspace,
    config,
    env: ctx.env,
    settings,
    // the Action's default, over RunSettings' forge as an input would be
    forge,
    ...(forge === 'github' ? { github: connection } : {}),
    dashboard,
  };
  return { options, config, forge, token: connection.token };
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
