import { join } from 'node:path';
import { KdeltaError } from '@kdelta/errors';
import { imagePatternProblem } from '@kdelta/fn-render';
import { parseRepositoryPattern } from '@kdelta/git-source';
import { branchPrefixProblem, DEFAULT_BRANCH_PREFIX } from './branch-prefix.js';
import { DEFAULT_BUDGET } from '../forges/budget.js';
import type { AutoMergeMethod, DraftPolicy } from '../forges/github/github.js';
import { shardProblem, type Shard } from '../plan/shard.js';

/**
 * A run's settings, however they are given: `kdelta run`'s flags, the Action's inputs, RunSettings
 * in the control resources, or `run()`'s options. Each source turns what it holds into raw values
 * with their origin (settings-sources.ts); `checkSettings` holds every rule, once, so the sources
 * agree by construction; `resolveSettings` decides precedence, once: a flag or input, then
 * RunSettings, then the default.
 */

export type ForgeName = 'local' | 'github';
export type RunMode = 'variants' | 'updates' | 'both';

export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 64;
/** Removals one run may propose: more is likelier a selector or label typo than a fleet being retired. */
export const DEFAULT_MAX_REMOVALS = 5;
export const DEFAULT_AUTHOR = { name: 'kdelta', email: 'kdelta@noreply.invalid' } as const;

/** Every setting, normalised. */
export interface SettingValues {
  readonly forge: ForgeName;
  readonly mode: RunMode;
  readonly concurrency: number;
  readonly budget: number;
  readonly maxRemovals: number;
  readonly branchPrefix: string;
  readonly shard: Shard;
  readonly proposalsDir: string;
  readonly authorName: string;
  readonly authorEmail: string;
  readonly labels: readonly string[];
  readonly assignees: readonly string[];
  readonly reviewers: readonly string[];
  readonly teamReviewers: readonly string[];
  readonly draft: DraftPolicy;
  readonly autoMerge: false | AutoMergeMethod;
  readonly signedCommits: boolean;
  readonly dryRun: boolean;
  readonly allowExec: boolean;
  readonly allowedImages: readonly string[];
  readonly allowLocalUpstreams: boolean;
  readonly credentialHosts: readonly string[];
  readonly credentialRepositories: readonly string[];
}

export type SettingKey = keyof SettingValues;

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

/** How a flag's or an input's text becomes a value, before the rule sees it. */
export type TextKind = 'word' | 'integer' | 'boolean' | 'list' | 'auto-merge';

type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export interface SettingRule<K extends SettingKey> {
  /** `kdelta run --<flag>`. */
  readonly flag?: string;
  /** The Action's input (action.yml). */
  readonly input?: string;
  /** The field under RunSettings `spec` (`github.labels`). */
  readonly field?: string;
  readonly text: TextKind;
  readonly check: (value: unknown) => Checked<SettingValues[K]>;
}

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const bad = (problem: string): Checked<never> => ({ ok: false, problem });
const shown = (value: unknown): string => JSON.stringify(value) ?? String(value);

function oneOf<T extends string | false>(allowed: readonly T[]) {
  return (v: unknown): Checked<T> =>
    (allowed as readonly unknown[]).includes(v) ? ok(v as T) : bad(`must be one of ${allowed.map(String).join(', ')} (got ${shown(v)})`);
}

function integer(min: number, max?: number) {
  return (v: unknown): Checked<number> =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && (max === undefined || v <= max)
      ? ok(v)
      : bad(
          max === undefined
            ? `must be a whole number, ${min} or more (got ${shown(v)})`
            : `must be an integer from ${min} to ${max} (got ${shown(v)})`,
        );
}

const boolean = (v: unknown): Checked<boolean> => (typeof v === 'boolean' ? ok(v) : bad(`expected true or false (got ${shown(v)})`));

const nonEmpty = (v: unknown): Checked<string> =>
  typeof v === 'string' && v.trim() !== '' ? ok(v) : bad(`expected a non-empty string (got ${shown(v)})`);

// what git takes as an author's address: no blanks or angle brackets, one "@" with text on each side
const EMAIL = /^[^\s<>@]+@[^\s<>@]+$/;
const email = (v: unknown): Checked<string> =>
  typeof v === 'string' && EMAIL.test(v) ? ok(v) : bad(`expected an email address (got ${shown(v)})`);

const names = (v: unknown): Checked<readonly string[]> =>
  Array.isArray(v) && v.every((x) => typeof x === 'string' && x.trim() !== '')
    ? ok(v as string[])
    : bad(`expected a list of non-empty strings (got ${shown(v)})`);

/** Patterns of the container images a render may run (fn-render's rule): one list, each pattern checked. */
function imagePatterns(v: unknown): Checked<readonly string[]> {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return bad(`expected a list of image patterns (got ${shown(v)})`);
  const problem = (v as string[]).map(imagePatternProblem).find((p) => p !== undefined);
  return problem === undefined ? ok(v as string[]) : bad(problem);
}

/** Repository patterns (git-source's grammar: owner/repo, owner/*, host/path, a URL, a whole host). */
function repositoryPatterns(v: unknown): Checked<readonly string[]> {
  const listed = names(v);
  if (!listed.ok) return listed;
  for (const entry of listed.value) {
    const parsed = parseRepositoryPattern(entry);
    if (typeof parsed === 'string') return bad(`"${entry}" ${parsed}`);
  }
  return listed;
}

function branchPrefix(v: unknown): Checked<string> {
  if (typeof v !== 'string') return bad(`expected a string (got ${shown(v)})`);
  const problem = branchPrefixProblem(v);
  return problem === undefined ? ok(v) : bad(problem);
}

function shard(v: unknown): Checked<Shard> {
  const text =
    typeof v === 'string'
      ? v
      : typeof v === 'object' && v !== null && 'index' in v && 'count' in v
        ? `${String(v.index)}/${String(v.count)}`
        : undefined;
  if (text === undefined) return bad(`must be k/n with 1 ≤ k ≤ n, e.g. 2/5 (got ${shown(v)})`);
  const problem = shardProblem(text);
  if (problem !== undefined) return bad(problem);
  const [index, count] = text.trim().split('/').map(Number) as [number, number];
  return ok({ index, count });
}

/** Every setting: its names in each source and its one rule. A new setting is one row here. */
export const SETTING_RULES: { readonly [K in SettingKey]: SettingRule<K> } = {
  forge: { flag: 'forge', input: 'forge', field: 'forge', text: 'word', check: oneOf(['local', 'github'] as const) },
  mode: { flag: 'mode', input: 'mode', field: 'mode', text: 'word', check: oneOf(['variants', 'updates', 'both'] as const) },
  concurrency: { flag: 'concurrency', input: 'concurrency', field: 'concurrency', text: 'integer', check: integer(1, MAX_CONCURRENCY) },
  budget: { flag: 'budget', input: 'budget', field: 'budget', text: 'integer', check: integer(0) },
  maxRemovals: { flag: 'max-removals', input: 'max-removals', field: 'maxRemovals', text: 'integer', check: integer(0) },
  branchPrefix: { flag: 'branch-prefix', input: 'branch-prefix', field: 'branchPrefix', text: 'word', check: branchPrefix },
  shard: { flag: 'shard', input: 'shard', text: 'word', check: shard },
  proposalsDir: { flag: 'proposals-dir', field: 'proposalsDir', text: 'word', check: nonEmpty },
  authorName: { input: 'commit-author-name', field: 'author.name', text: 'word', check: nonEmpty },
  authorEmail: { input: 'commit-author-email', field: 'author.email', text: 'word', check: email },
  labels: { flag: 'label', input: 'labels', field: 'github.labels', text: 'list', check: names },
  assignees: { flag: 'assignee', input: 'assignees', field: 'github.assignees', text: 'list', check: names },
  reviewers: { flag: 'reviewer', input: 'reviewers', field: 'github.reviewers', text: 'list', check: names },
  teamReviewers: { flag: 'team-reviewer', input: 'team-reviewers', field: 'github.teamReviewers', text: 'list', check: names },
  draft: { flag: 'draft', input: 'draft', field: 'github.draft', text: 'word', check: oneOf(['always', 'never', 'conflicts'] as const) },
  autoMerge: {
    flag: 'auto-merge',
    input: 'auto-merge',
    field: 'github.autoMerge',
    text: 'auto-merge',
    check: oneOf([false, 'merge', 'squash', 'rebase'] as const),
  },
  signedCommits: { flag: 'signed-commits', input: 'signed-commits', field: 'github.signedCommits', text: 'boolean', check: boolean },
  dryRun: { flag: 'dry-run', input: 'dry-run', text: 'boolean', check: boolean },
  allowExec: { flag: 'allow-exec', input: 'allow-exec', text: 'boolean', check: boolean },
  allowedImages: { flag: 'allow-image', input: 'allowed-images', text: 'list', check: imagePatterns },
  allowLocalUpstreams: { flag: 'allow-local-upstreams', input: 'allow-local-upstreams', text: 'boolean', check: boolean },
  credentialHosts: { flag: 'credential-host', input: 'credential-hosts', text: 'list', check: repositoryPatterns },
  credentialRepositories: {
    flag: 'credential-repository',
    input: 'credential-repositories',
    text: 'list',
    check: repositoryPatterns,
  },
};

export const SETTING_KEYS = Object.keys(SETTING_RULES) as SettingKey[];

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
    const checked = (SETTING_RULES[key] as SettingRule<SettingKey>).check(given.value);
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

/** The settings a run goes by: each from a flag or input, else RunSettings, else its default. */
export interface ResolvedSettings {
  readonly forge: ForgeName;
  readonly mode: RunMode;
  readonly concurrency: number;
  readonly budget: number;
  /** Removals (delete or orphan) one run may propose; when more are due it proposes none of them. */
  readonly maxRemovals: number;
  readonly branchPrefix: string;
  readonly shard: Shard | undefined;
  /** As given (relative to the working directory); the default is `<config>/proposals`. */
  readonly proposalsDir: string;
  readonly author: { readonly name: string; readonly email: string };
  /** The github forge's pull request options: only those set (the forge has its own defaults). */
  readonly github: {
    readonly labels?: readonly string[];
    readonly assignees?: readonly string[];
    readonly reviewers?: readonly string[];
    readonly teamReviewers?: readonly string[];
    readonly draft?: DraftPolicy;
    readonly autoMerge?: false | AutoMergeMethod;
    readonly signedCommits?: boolean;
  };
  readonly dryRun: boolean;
  readonly allowExec: boolean;
  /** Given by the user (a flag, an input, an option); unset: the render's default, kpt's catalogues. */
  readonly allowedImages: readonly string[] | undefined;
  readonly allowLocalUpstreams: boolean | undefined;
  readonly credentialHosts: readonly string[];
  readonly credentialRepositories: readonly string[];
  /** Where each value came from (`default` for a default). */
  readonly origins: { readonly [K in SettingKey]?: Origin };
}

/** The one precedence: `door` (flags, inputs or options) over `file` (RunSettings) over the defaults. */
export function resolveSettings(door: CheckedSettings, file: CheckedSettings, defaults: { readonly config: string }): ResolvedSettings {
  const origins: { [K in SettingKey]?: Origin } = {};
  function pick<K extends SettingKey>(key: K): SettingValues[K] | undefined;
  function pick<K extends SettingKey>(key: K, fallback: SettingValues[K]): SettingValues[K];
  function pick<K extends SettingKey>(key: K, fallback?: SettingValues[K]): SettingValues[K] | undefined {
    for (const layer of [door, file]) {
      const value = layer.values[key];
      if (value !== undefined) {
        origins[key] = layer.origins[key];
        return value as SettingValues[K];
      }
    }
    if (fallback !== undefined) origins[key] = { type: 'default' };
    return fallback;
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
  };
  return {
    forge: pick('forge', 'local'),
    mode: pick('mode', 'both'),
    concurrency: pick('concurrency', DEFAULT_CONCURRENCY),
    budget: pick('budget', DEFAULT_BUDGET),
    maxRemovals: pick('maxRemovals', DEFAULT_MAX_REMOVALS),
    branchPrefix: pick('branchPrefix', DEFAULT_BRANCH_PREFIX),
    shard: pick('shard'),
    proposalsDir: pick('proposalsDir', join(defaults.config, 'proposals')),
    author: {
      name: authorLayer.values.authorName ?? DEFAULT_AUTHOR.name,
      email: authorLayer.values.authorEmail ?? DEFAULT_AUTHOR.email,
    },
    github: Object.fromEntries(Object.entries(github).filter(([, v]) => v !== undefined)),
    dryRun: pick('dryRun', false),
    allowExec: pick('allowExec', false),
    allowedImages: pick('allowedImages'),
    allowLocalUpstreams: pick('allowLocalUpstreams'),
    credentialHosts: pick('credentialHosts', []),
    credentialRepositories: pick('credentialRepositories', []),
    origins,
  };
}
