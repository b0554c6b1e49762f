import { join } from 'node:path';
import { KdeltaError } from '@kdelta/errors';
import type { Shard } from '../plan/shard.js';
import {
  DEFAULT_AUTHOR,
  SETTING_KEYS,
  type SETTING_RULES,
  settingRow,
  type SettingKey,
  type SettingRule,
  type SettingValues,
  type TextKind,
} from './setting-table.js';

export {
  DEFAULT_AUTHOR,
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_REMOVALS,
  MAX_CONCURRENCY,
  SETTING_KEYS,
  SETTING_RULES,
  settingNames,
  settingRow,
  type ForgeName,
  type RunMode,
  type SettingKey,
  type SettingPath,
  type SettingRow,
  type SettingRule,
  type SettingValues,
  type TextKind,
} from './setting-table.js';

/**
 * A run's settings, however they are given: `kdelta run`'s flags, the Action's inputs, RunSettings
 * in the control resources, or `run()`'s options. Each source turns what it holds into raw values
 * with their origin (settings-sources.ts); `checkSettings` holds every rule, once, so the sources
 * agree by construction; `resolveSettings` decides precedence, once: a flag or input, then
 * RunSettings, then the default.
 */

/** Where a value came from: every problem with it names this. */
export type Origin =
  | { readonly type: 'flag'; readonly name: string }
  | { readonly type: 'input'; readonly name: string }
  | { readonly type: 'field'; readonly field: string; readonly file: string }
  | { readonly type: 'option'; readonly name: string }
  | { readonly type: 'default' };

/** `--concurrency`, `input "concurrency"`, `RunSettings spec.concurrency in .kdelta/settings.yaml`. */
export function describeOrigin(origin: Origin): string {
  switch (origin.type) {
    case 'flag':
      return `--${origin.name}`;
    case 'input':
      return `input "${origin.name}"`;
    case 'field':
      return `RunSettings ${origin.field} in ${origin.file}`;
    case 'option':
      return `run option ${origin.name}`;
    case 'default':
      return 'the default';
    default:
      return origin satisfies never;
  }
}

/** The name alone, as a user types it in that source: `--concurrency`, `commit-author-name`, `spec.author.name`. */
function originName(origin: Origin): string {
  switch (origin.type) {
    case 'flag':
      return `--${origin.name}`;
    case 'input':
    case 'option':
      return origin.name;
    case 'field':
      return origin.field;
    case 'default':
      return 'the default';
    default:
      return origin satisfies never;
  }
}

const TRUE = new Set(['true', 'True', 'TRUE']);
const FALSE = new Set(['false', 'False', 'FALSE']);

/**
 * A flag's or an input's text → the value its rule checks. Text that is not of the kind stays
 * text, so that the rule refuses it saying what it got.
 */
export function valueFromText(kind: TextKind, text: string): unknown {
  const t = text.trim();
  switch (kind) {
    case 'word':
      return t;
    case 'integer':
      // any number reads as one, so that "-1" and "1.5" are refused as RunSettings' -1 and 1.5 are
      return /^[+-]?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
    case 'boolean':
      // YAML 1.2's core booleans, as @actions/core's getBooleanInput reads them
      return TRUE.has(t) ? true : FALSE.has(t) ? false : t;
    case 'list':
      // comma- or newline-separated, blanks dropped: `a, b` and a YAML block both work
      return t
        .split(/[\n,]/)
        .map((s) => s.trim())
        .filter((s) => s !== '');
    case 'lines':
      // one entry a line, blank lines kept so that a problem names the line the user sees
      return text.replace(/\r/g, '').split('\n');
    case 'auto-merge':
      return FALSE.has(t) ? false : t;
    default:
      return kind satisfies never;
  }
}

/** One value as a source gave it. */
export interface RawSetting {
  readonly value: unknown;
  readonly origin: Origin;
}

/** What one source gives, and the names it has for every setting it could give (for "set both … or neither"). */
export interface RawSettings {
  readonly values: { readonly [K in SettingKey]?: RawSetting };
  readonly originOf: (key: SettingKey) => Origin | undefined;
}

export interface SettingProblem {
  readonly key: SettingKey;
  readonly origin: Origin;
  readonly message: string;
}

/** Values that passed their rules, each with its origin. */
export interface CheckedSettings {
  readonly values: Partial<SettingValues>;
  readonly origins: { readonly [K in SettingKey]?: Origin };
}

export const NO_SETTINGS: CheckedSettings = { values: {}, origins: {} };

/** `over`'s values, and `under`'s for the settings `over` leaves unset: two checked values of one door. */
export function overSettings(over: CheckedSettings, under: CheckedSettings): CheckedSettings {
  return { values: { ...under.values, ...over.values }, origins: { ...under.origins, ...over.origins } };
}

export function describeProblem(problem: SettingProblem): string {
  return `${describeOrigin(problem.origin)}: ${problem.message}`;
}

/** Settings the run cannot use: every problem, each naming its flag, input or RunSettings field. */
export class SettingsError extends KdeltaError {
  override readonly name = 'SettingsError';
  declare readonly code: 'invalid-option';
  readonly problems: readonly SettingProblem[];
  constructor(problems: readonly SettingProblem[]) {
    super({
      code: 'invalid-option',
      message: problems.length === 1 ? describeProblem(problems[0]!) : problems.map(describeProblem).join('\n'),
    });
    this.problems = problems;
  }
}

/** Every rule, over every value of one source: the values that pass and a problem for each that does not. */
export function checkSettings(raw: RawSettings): { settings: CheckedSettings; problems: SettingProblem[] } {
  const values: Record<string, unknown> = {};
  const origins: Record<string, Origin> = {};
  const problems: SettingProblem[] = [];
  for (const key of SETTING_KEYS) {
    const given = raw.values[key];
    if (given === undefined) continue;
    const checked = (settingRow(key) as SettingRule<SettingKey>).check(given.value);
    if (checked.ok) {
      values[key] = checked.value;
      origins[key] = given.origin;
    } else problems.push({ key, origin: given.origin, message: checked.problem });
  }
  // an author is a name and an address together: one without the other would pair with another source's half
  const [name, address] = [raw.values.authorName, raw.values.authorEmail];
  if ((name === undefined) !== (address === undefined)) {
    const missing: SettingKey = name === undefined ? 'authorName' : 'authorEmail';
    const nameOrigin = name?.origin ?? raw.originOf('authorName');
    const addressOrigin = address?.origin ?? raw.originOf('authorEmail');
    const origin = raw.originOf(missing) ?? (name ?? address)!.origin;
    problems.push({
      key: missing,
      origin,
      message: `set both ${nameOrigin ? originName(nameOrigin) : 'the name'} and ${addressOrigin ? originName(addressOrigin) : 'the email'}, or neither`,
    });
  }
  return { settings: { values: values as Partial<SettingValues>, origins }, problems };
}

/** `checkSettings` for a door (flags, inputs, options): the first bad value stops everything before anything runs. */
export function normaliseSettings(raw: RawSettings): CheckedSettings {
  const { settings, problems } = checkSettings(raw);
  if (problems.length > 0) throw new SettingsError(problems);
  return settings;
}

/** The keys whose row has a default: resolved, they always have a value. */
type Defaulted = { [K in SettingKey]: (typeof SETTING_RULES)[K] extends { readonly default: unknown } ? K : never }[SettingKey];
type GitHubKey = 'labels' | 'assignees' | 'reviewers' | 'teamReviewers' | 'draft' | 'autoMerge' | 'signedCommits';

/** The settings a run goes by: each from a flag or input, else RunSettings, else its row's default. */
export type ResolvedSettings = { readonly [K in Defaulted]: SettingValues[K] } & {
  readonly shard: Shard | undefined;
  /** As given (relative to the working directory); the default is `<config>/proposals`. */
  readonly proposalsDir: string;
  readonly author: { readonly name: string; readonly email: string };
  /** The github forge's pull request options: only those set (the forge has its own defaults). */
  readonly github: { readonly [K in GitHubKey]?: SettingValues[K] };
  /** Given by the user (a flag, an input, an option); unset: the render's default, kpt's catalogues. */
  readonly allowedImages: SettingValues['allowedImages'] | undefined;
  readonly allowLocalUpstreams: boolean | undefined;
  /** Where each value came from (`default` for a default). */
  readonly origins: { readonly [K in SettingKey]?: Origin };
};

/** The one precedence: `door` (flags, inputs or options) over `file` (RunSettings) over the row's default. */
export function resolveSettings(door: CheckedSettings, file: CheckedSettings, defaults: { readonly config: string }): ResolvedSettings {
  const origins: { [K in SettingKey]?: Origin } = {};
  function pick<K extends Defaulted>(key: K): SettingValues[K];
  function pick<K extends SettingKey>(key: K, fallback?: SettingValues[K]): SettingValues[K] | undefined;
  function pick<K extends SettingKey>(key: K, fallback?: SettingValues[K]): SettingValues[K] | undefined {
    for (const layer of [door, file]) {
      const value = layer.values[key];
      if (value !== undefined) {
        origins[key] = layer.origins[key];
        return value as SettingValues[K];
      }
    }
    const value = fallback ?? settingRow(key).default;
    if (value !== undefined) origins[key] = { type: 'default' };
    return value;
  }
  // the author's two halves come from one source: checkSettings refuses a half
  const authorLayer = door.values.authorName !== undefined ? door : file;
  for (const key of ['authorName', 'authorEmail'] as const) origins[key] = authorLayer.origins[key] ?? { type: 'default' };
  const github = {
    labels: pick('labels'),
    assignees: pick('assignees'),
    reviewers: pick('reviewers'),
    teamReviewers: pick('teamReviewers'),
    draft: pick('draft'),
    autoMerge: pick('autoMerge'),
    signedCommits: pick('signedCommits'),
  } satisfies { readonly [K in GitHubKey]: unknown };
  return {
    forge: pick('forge'),
    mode: pick('mode'),
    concurrency: pick('concurrency'),
    budget: pick('budget'),
    maxRemovals: pick('maxRemovals'),
    branchPrefix: pick('branchPrefix'),
    shard: pick('shard'),
    proposalsDir: pick('proposalsDir', join(defaults.config, 'proposals')) ?? join(defaults.config, 'proposals'),
    author: {
      name: authorLayer.values.authorName ?? DEFAULT_AUTHOR.name,
      email: authorLayer.values.authorEmail ?? DEFAULT_AUTHOR.email,
    },
    github: Object.fromEntries(Object.entries(github).filter(([, v]) => v !== undefined)),
    dryRun: pick('dryRun'),
    allowExec: pick('allowExec'),
    allowedImages: pick('allowedImages'),
    allowLocalUpstreams: pick('allowLocalUpstreams'),
    credentialHosts: pick('credentialHosts'),
    credentialRepositories: pick('credentialRepositories'),
    serverTokens: pick('serverTokens'),
    origins,
  };
}
