import { imagePatternProblem } from '@kdelta/fn-render';
import { parseRepositoryPattern, parseServerTokens, type ServerToken } from '@kdelta/git-source';
import { DEFAULT_BUDGET } from '../forges/budget.js';
import type { AutoMergeMethod, DraftPolicy } from '../forges/github/github.js';
import { shardProblem, type Shard } from '../plan/shard.js';
import { branchPrefixProblem, DEFAULT_BRANCH_PREFIX } from './branch-prefix.js';

/**
 * The table of a run's settings: one row per setting, holding its names in every source (the
 * CLI's flag, the Action's input, the RunSettings field), how its text is read, its one rule, its
 * default and the words that explain it. Everything else is derived from it: the type of the
 * values (`SettingValues`), the CLI's flags and their help lines, the Action's inputs in
 * action.yml and the RunSettings part of the JSON Schema (settings-generated.ts writes both;
 * a test fails when either is stale). A new setting is one row here, plus its use.
 */

export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 64;
/** Removals one run may propose: more is likelier a selector or label typo than a fleet being retired. */
export const DEFAULT_MAX_REMOVALS = 5;
export const DEFAULT_AUTHOR = { name: 'kdelta', email: 'kdelta@noreply.invalid' } as const;

/** How a flag's or an input's text becomes a value, before the rule sees it. */
/** `lines`: one entry a line, blank lines kept in place, so that a problem can name its line. */
export type TextKind = 'word' | 'integer' | 'boolean' | 'list' | 'lines' | 'auto-merge';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** One setting. */
export interface SettingRow<T> {
  /** `kdelta run --<flag>`. */
  readonly flag?: string;
  /** What the flag's value is, in its help line (`<n>`); absent for a flag given alone (a boolean). */
  readonly arg?: string;
  /** The Action's input (action.yml). */
  readonly input?: string;
  /** The field under RunSettings `spec` (`github.labels`). */
  readonly field?: string;
  readonly text: TextKind;
  readonly check: (value: unknown) => Checked<T>;
  /** The value when no source sets it; absent: unset (the forge, the render or the config directory decides). */
  readonly default?: T;
  /** The flag's help line (`kdelta run --help`), wrapped where it is printed. */
  readonly help?: string;
  /** The Action input's description in action.yml. */
  readonly description?: string;
  /** The Action input's default in action.yml ('' when absent: RunSettings, else `default`, decides). */
  readonly inputDefault?: string;
  /** The field's JSON Schema (its `default` is added from `default`). */
  readonly schema?: Readonly<Record<string, unknown>>;
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

/**
 * Tokens per git server (git-source's grammar, `https://host=<token>` a line): lines of text from
 * a flag or an input, or tokens from a library caller. A problem names the line, never a token.
 */
function serverTokens(v: unknown): Checked<readonly ServerToken[]> {
  if (!Array.isArray(v)) return bad('expected <server>=<token> lines');
  const lines = v.map((x: unknown) =>
    typeof x === 'string'
      ? x
      : typeof x === 'object' && x !== null && 'server' in x && 'token' in x
        ? `${String(x.server)}=${String(x.token)}`
        : undefined,
  );
  if (lines.some((x) => x === undefined)) return bad('expected <server>=<token> lines, or {server, token} objects');
  const parsed = parseServerTokens(lines as string[]);
  return 'problem' in parsed ? bad(parsed.problem) : ok(parsed.tokens);
}

const FORGES = ['local', 'github'] as const;
const MODES = ['variants', 'updates', 'both'] as const;
const DRAFTS: readonly DraftPolicy[] = ['always', 'never', 'conflicts'];
const AUTO_MERGE: readonly (false | AutoMergeMethod)[] = [false, 'merge', 'squash', 'rebase'];
const NAMES_SCHEMA = { type: 'array', items: { type: 'string', minLength: 1 } } as const;
const LIST = '(repeatable, or a comma list)';
const INPUT_LIST = 'comma- or newline-separated';

/** Every setting, one row each; the order is the order of the help lines, the inputs and the schema. */
export const SETTING_RULES = {
  forge: {
    flag: 'forge',
    arg: '<forge>',
    input: 'forge',
    field: 'forge',
    text: 'word',
    check: oneOf(FORGES),
    default: 'local',
    help: 'where proposals live: local (default; Markdown files under --proposals-dir) or github (pull requests)',
    description:
      'Where proposals go: github (pull requests) or local (proposal files under <config>/proposals, to try a config against local repositories).',
    // in a workflow, proposals are pull requests
    inputDefault: 'github',
    schema: { enum: FORGES },
  },
  mode: {
    flag: 'mode',
    arg: '<mode>',
    input: 'mode',
    field: 'mode',
    text: 'word',
    check: oneOf(MODES),
    default: 'both',
    help: 'variants, updates or both (default both)',
    description:
      "What to run: variants (fan out to downstream repositories), updates (the workspace's own packages with an upstream), both, or preview (write nothing: comment on the reviewed pull request what the change would propose to every downstream). Default: preview on pull_request events, else the RunSettings' mode, else both.",
    schema: { enum: MODES },
  },
  concurrency: {
    flag: 'concurrency',
    arg: '<n>',
    input: 'concurrency',
    field: 'concurrency',
    text: 'integer',
    check: integer(1, MAX_CONCURRENCY),
    default: DEFAULT_CONCURRENCY,
    help: `variants at a time, 1 to ${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})`,
    description: `Variants run at the same time, 1 to ${MAX_CONCURRENCY}. Default: the RunSettings' concurrency, else ${DEFAULT_CONCURRENCY}.`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_CONCURRENCY },
  },
  budget: {
    flag: 'budget',
    arg: '<n>',
    input: 'budget',
    field: 'budget',
    text: 'integer',
    check: integer(0),
    default: DEFAULT_BUDGET,
    help: `content-creating API requests this run may make, 0 or more (github; default ${DEFAULT_BUDGET}, GitHub allows about 500 an hour)`,
    description: `Content-creating API requests this run may make, 0 or more (GitHub allows about 500 an hour). Variants left over are deferred to the next run. Default: the RunSettings' budget, else ${DEFAULT_BUDGET}.`,
    schema: {
      type: 'integer',
      minimum: 0,
      description: 'content-creating API requests a run may make (github forge); the variants left are deferred to the next run',
    },
  },
  maxRemovals: {
    flag: 'max-removals',
    arg: '<n>',
    input: 'max-removals',
    field: 'maxRemovals',
    text: 'integer',
    check: integer(0),
    default: DEFAULT_MAX_REMOVALS,
    help: `removals (delete or orphan) this run may propose, 0 or more (default ${DEFAULT_MAX_REMOVALS}); when more are due none is proposed, every other job runs, and the run fails naming the variants: a selector or label typo must not delete packages across the fleet`,
    description: `Removals (a gone variant's package deleted, or its ownership dropped) this run may propose, 0 or more. When more are due, none is proposed, every other job runs, and the step fails naming them. Default: the RunSettings' maxRemovals, else ${DEFAULT_MAX_REMOVALS}.`,
    schema: {
      type: 'integer',
      minimum: 0,
      description:
        "removals (a gone variant's package deleted, or its ownership dropped) a run may propose; when more are due it proposes none of them, does every other job and fails naming them",
    },
  },
  branchPrefix: {
    flag: 'branch-prefix',
    arg: '<p>',
    input: 'branch-prefix',
    field: 'branchPrefix',
    text: 'word',
    check: branchPrefix,
    default: DEFAULT_BRANCH_PREFIX,
    help: `proposal branches are <p><variant> (default ${DEFAULT_BRANCH_PREFIX}); not empty, letters, digits, ".", "_", "-" and "/", not starting with "/", "." or "-"`,
    description: `The pull requests' branches are <prefix><variant>. Default: the RunSettings' branchPrefix, else ${DEFAULT_BRANCH_PREFIX}. Not empty; a pull request's branch is never its base branch, and a branch holding commits kdelta did not make is left alone.`,
    schema: {
      type: 'string',
      pattern: '^[A-Za-z0-9_][A-Za-z0-9._/-]*$',
      description:
        'proposal branches are <branchPrefix><variant>; not empty (a variant could then name the base branch), not starting with "/", "." or "-"',
    },
  },
  shard: {
    flag: 'shard',
    arg: 'k/n',
    input: 'shard',
    text: 'word',
    check: shard,
    help: 'only the variants whose name hashes to shard k of n',
    description: "k/n: run only the variants of shard k of n (a hash of the variant's name), for a matrix fan-out.",
  },
  proposalsDir: {
    flag: 'proposals-dir',
    arg: '<dir>',
    field: 'proposalsDir',
    text: 'word',
    check: nonEmpty,
    help: "the local forge's records (default <config>/proposals)",
    schema: { type: 'string', minLength: 1, description: "the local forge's records (default <config>/proposals)" },
  },
  authorName: {
    input: 'commit-author-name',
    field: 'author.name',
    text: 'word',
    check: nonEmpty,
    description: `The commits' author name (set with commit-author-email). Default: the RunSettings' author, else ${DEFAULT_AUTHOR.name}.`,
    schema: { type: 'string', minLength: 1 },
  },
  authorEmail: {
    input: 'commit-author-email',
    field: 'author.email',
    text: 'word',
    check: email,
    description: "The commits' author email (set with commit-author-name).",
    schema: { type: 'string', pattern: EMAIL.source, description: 'an email address' },
  },
  labels: {
    flag: 'label',
    arg: '<name>',
    input: 'labels',
    field: 'github.labels',
    text: 'list',
    check: names,
    help: `labels for new and updated pull requests ${LIST}`,
    description: `Labels for the pull requests (${INPUT_LIST}). Default: the RunSettings' github.labels.`,
    schema: NAMES_SCHEMA,
  },
  assignees: {
    flag: 'assignee',
    arg: '<user>',
    input: 'assignees',
    field: 'github.assignees',
    text: 'list',
    check: names,
    help: `assignees of new pull requests ${LIST}`,
    description: `Users assigned to the pull requests (${INPUT_LIST}). Default: the RunSettings' github.assignees.`,
    schema: NAMES_SCHEMA,
  },
  reviewers: {
    flag: 'reviewer',
    arg: '<user>',
    input: 'reviewers',
    field: 'github.reviewers',
    text: 'list',
    check: names,
    help: `reviewers requested on new pull requests ${LIST}`,
    description: `Users asked to review the pull requests (${INPUT_LIST}). Default: the RunSettings' github.reviewers.`,
    schema: NAMES_SCHEMA,
  },
  teamReviewers: {
    flag: 'team-reviewer',
    arg: '<team>',
    input: 'team-reviewers',
    field: 'github.teamReviewers',
    text: 'list',
    check: names,
    help: `team reviewers requested on new pull requests ${LIST}`,
    description: `Teams (slugs) asked to review the pull requests (${INPUT_LIST}). Default: the RunSettings' github.teamReviewers.`,
    schema: NAMES_SCHEMA,
  },
  draft: {
    flag: 'draft',
    arg: '<when>',
    input: 'draft',
    field: 'github.draft',
    text: 'word',
    check: oneOf(DRAFTS),
    help: 'open pull requests as drafts: always, never or conflicts (default conflicts: only those not ready: conflicts, a failed render, an unmet readiness gate)',
    description:
      "Open pull requests as drafts: always, never, or conflicts (only those not ready: conflicts, a failed render, or an unmet readiness gate such as a required injection point without a source). Default: the RunSettings' github.draft, else conflicts.",
    // the github forge's own default when none is set
    schema: { enum: DRAFTS, default: 'conflicts' },
  },
  autoMerge: {
    flag: 'auto-merge',
    arg: '<method>',
    input: 'auto-merge',
    field: 'github.autoMerge',
    text: 'auto-merge',
    check: oneOf(AUTO_MERGE),
    help: "enable auto-merge (merge, squash or rebase) on pull requests that are ready and hold only kdelta's commits; false leaves it off",
    description:
      "Enable auto-merge with this method (merge, squash or rebase) on pull requests that are ready (no conflicts, the render did not fail, every readiness gate met) and whose branch holds only kdelta's commits; false to leave it off. Default: the RunSettings' github.autoMerge, else false.",
    schema: { enum: AUTO_MERGE, default: false },
  },
  signedCommits: {
    flag: 'signed-commits',
    input: 'signed-commits',
    field: 'github.signedCommits',
    text: 'boolean',
    check: boolean,
    help: 'make commits through the GitHub API (verified) instead of git push',
    description:
      "Create the commits through the GitHub API, so GitHub marks them verified, instead of pushing with git. Default: the RunSettings' github.signedCommits, else false.",
    schema: { type: 'boolean', default: false },
  },
  dryRun: {
    flag: 'dry-run',
    input: 'dry-run',
    text: 'boolean',
    check: boolean,
    default: false,
    help: 'compute everything, push and write nothing',
    description: 'Compute everything and write nothing (no push, no pull request).',
    inputDefault: 'false',
  },
  allowExec: {
    flag: 'allow-exec',
    input: 'allow-exec',
    text: 'boolean',
    check: boolean,
    default: false,
    help: "let the pipelines' exec: functions run (as kpt fn render --allow-exec): each is any program on this machine, named by the package's author. Without it a package with one is proposed unrendered, its render failure saying so",
    description:
      "Let the Kptfile pipelines' exec functions run when a package is rendered. An exec function is any program on the runner, named by the package's author, run with the job's rights (the checkout's credentials included): leave it off unless you trust every upstream. Off, such a package is proposed unrendered and its pull request says its render failed.",
    inputDefault: 'false',
  },
  allowedImages: {
    flag: 'allow-image',
    arg: '<p>',
    input: 'allowed-images',
    text: 'list',
    check: imagePatterns,
    help: `the container images the pipelines may run ${LIST}, in place of the default, kpt's function catalogues (gcr.io/kpt-fn/ and ghcr.io/kptdev/krm-functions-catalog/); patterns as in kdelta fn render --help. A package whose pipeline has another image is proposed unrendered, its render failure naming the image and this flag (a catalogue function kdelta has built in runs built-in instead)`,
    description: `The container images the Kptfile pipelines may run (${INPUT_LIST} patterns): a prefix ending in / (gcr.io/kpt-fn/) allows what starts with it, a name (registry.example/team/fn) that repository at any tag, a tagged name that tag only, * any image. Default: kpt's function catalogues, gcr.io/kpt-fn/ and ghcr.io/kptdev/krm-functions-catalog/. A package whose pipeline has another image is proposed unrendered, its pull request naming the image (a catalogue function kdelta has built in runs built-in instead). In preview of an upstream's pull request the default is none: the reviewed change is anyone's, and its images run only when listed here.`,
  },
  allowLocalUpstreams: {
    flag: 'allow-local-upstreams',
    input: 'allow-local-upstreams',
    text: 'boolean',
    check: boolean,
    help: "let a package's nested Kptfiles name upstream repositories on this machine (a path or file:// URL; also KDELTA_ALLOW_LOCAL_UPSTREAMS=1). Refused by default: their files would be pushed. Repositories of the control resources may always be local",
    description:
      "Let a package's nested Kptfiles name upstream repositories on the runner (a path or file:// URL). Off by default: package content may not copy the runner's files (the workspace, other checkouts) into a pull request. Repositories of the control resources may always be local.",
    inputDefault: 'false',
  },
  credentialHosts: {
    flag: 'credential-host',
    arg: '<h>',
    input: 'credential-hosts',
    text: 'list',
    check: repositoryPatterns,
    default: [],
    help: 'the older form of --credential-repository (also KDELTA_CREDENTIAL_HOSTS)',
    description:
      'The older form of credential-repositories, read by the same rules: a whole host only when written as one (host or host:port).',
  },
  credentialRepositories: {
    flag: 'credential-repository',
    arg: '<p>',
    input: 'credential-repositories',
    text: 'list',
    check: repositoryPatterns,
    default: [],
    help: "more repositories that get the run's credentials when package content names them (repeatable, or a comma list; also KDELTA_CREDENTIAL_REPOSITORIES): owner/repo or owner/* (on the GitHub server), host/path/repo, host/path/*, a URL, or a whole host written as one (host, host:port, https://host). Credentials (KDELTA_GIT_TOKEN, the forge's token, git's credential helpers) go only to the control resources' Repositories and these: a repository that only package content names, even on the forge's server, is read without any, and a private one fails naming the Kptfile and this setting",
    description: `More repositories that get the token when package content names them (${INPUT_LIST}): owner/repo or owner/* on this GitHub, host/path/repo or host/path/* on another server, a URL, or a whole host written as one (host, host:port, https://host). The token (or the App's installation token) goes only to the control resources' Repositories and these: a repository that only a package's Kptfile names, even one of your organisation on this GitHub, is read without it, and a private one fails its variant naming the Kptfile and this input.`,
  },
  serverTokens: {
    flag: 'server-token',
    arg: '<s=t>',
    input: 'server-tokens',
    text: 'lines',
    check: serverTokens,
    default: [],
    help: 'a token for another git server, as <server>=<token> (https://ghes.example.com=$GHES_TOKEN; repeatable; also KDELTA_SERVER_TOKENS, one a line): git reads repositories on that server with it, only those the control resources name or --credential-repository lists there, never another host. The forge keeps its own token for its own server',
    description: `Tokens for git servers other than this workflow's, one \`<server>=<token>\` a line (\`https://ghes.example.com=\${{ secrets.GHES_TOKEN }}\`): an upstream on a GitHub Enterprise Server read from a github.com workflow, or the reverse. A server's token goes only to its repositories that the control resources name or credential-repositories lists, never to another host; each is masked in the log. The runner must reach the server over the network. \`token\` (or the App) stays the credential of this workflow's own server.`,
  },
} as const satisfies { readonly [key: string]: SettingRow<never> | SettingRow<unknown> };

type RowValue<R> = R extends { readonly check: (value: unknown) => Checked<infer T> } ? T : never;

/** Every setting, normalised: the type each row's rule gives. */
export type SettingValues = { readonly [K in keyof typeof SETTING_RULES]: RowValue<(typeof SETTING_RULES)[K]> };
export type SettingKey = keyof SettingValues;
/** One row, typed by its value (for a caller that walks the table). */
export type SettingRule<K extends SettingKey> = SettingRow<SettingValues[K]>;

/** A setting's path in RunSettings' `spec` and in `run()`'s options (`github.labels`), else its key. */
export type SettingPath<K extends SettingKey> = (typeof SETTING_RULES)[K] extends { readonly field: infer F extends string } ? F : K;

export type ForgeName = SettingValues['forge'];
export type RunMode = SettingValues['mode'];

export const SETTING_KEYS = Object.keys(SETTING_RULES) as SettingKey[];

/** A row by its key, typed by its value. */
export const settingRow = <K extends SettingKey>(key: K): SettingRule<K> => SETTING_RULES[key] as SettingRule<K>;

/**
 * Every name a user may give a setting by, for a message that tells them to change it:
 * `--max-removals 7 (the Action's input max-removals, RunSettings spec.maxRemovals)`.
 */
export function settingNames(key: SettingKey, value?: string | number): string {
  const { flag, input, field } = settingRow(key);
  const given = value === undefined ? '' : ` ${value}`;
  const named = [flag && `--${flag}${given}`, input && `the Action's input ${input}`, field && `RunSettings spec.${field}`];
  const [first, ...others] = named.filter((n): n is string => typeof n === 'string' && n !== '');
  return others.length > 0 ? `${first} (${others.join(', ')})` : (first ?? key);
}
