/**
 * One value of a run setting, given the same way through each source that has the setting: a
 * `kdelta run` flag, an Action input, a RunSettings field. The run's tests (RunSettings), the
 * CLI's (flags) and the Action's (inputs) read this one table, so the three doors are held to the
 * same answers: a refused value is refused by every source with the same rule's message, and an
 * accepted one becomes the same value.
 */
export interface SettingCase {
  /** `kdelta run --<flag>`; absent: the CLI has no such flag (or only a presence flag). */
  readonly flag?: string;
  /** The Action's input; absent: the Action has no such input. */
  readonly input?: string;
  /** The field under RunSettings `spec`; absent: RunSettings cannot set it. */
  readonly field?: string;
  /** As typed on the command line or in a workflow's `with:`. */
  readonly text: string;
  /** As written in RunSettings (a YAML value). */
  readonly yaml: string;
}

export interface BadSettingCase extends SettingCase {
  /** The rule's message, the same from every source (each puts its own name in front). */
  readonly problem: string;
}

export interface GoodSettingCase extends SettingCase {
  /** run()'s option, as every source gives it. */
  readonly option: string;
  readonly value: unknown;
}

const concurrency = { flag: 'concurrency', input: 'concurrency', field: 'concurrency' };
const budget = { flag: 'budget', input: 'budget', field: 'budget' };
const maxRemovals = { flag: 'max-removals', input: 'max-removals', field: 'maxRemovals' };
const branchPrefix = { flag: 'branch-prefix', input: 'branch-prefix', field: 'branchPrefix' };
const credentialRepositories = { flag: 'credential-repository', input: 'credential-repositories' };
// no field: a token has no place in a file of the control repository
const serverTokens = { flag: 'server-token', input: 'server-tokens' };

export const BAD_SETTINGS: readonly BadSettingCase[] = [
  {
    ...serverTokens,
    text: 'https://ghes.example.com=',
    yaml: '',
    problem: 'line 1 gives "https://ghes.example.com" an empty token (is its secret set in this repository?)',
  },
  {
    ...serverTokens,
    text: 'ghes.example.com=secret-1',
    yaml: '',
    problem: 'line 1 has the server "ghes.example.com", which is not a URL: write https://host or https://host:port',
  },
  { ...concurrency, text: '0', yaml: '0', problem: 'must be an integer from 1 to 64 (got 0)' },
  { ...concurrency, text: '65', yaml: '65', problem: 'must be an integer from 1 to 64 (got 65)' },
  { ...concurrency, text: 'many', yaml: 'many', problem: 'must be an integer from 1 to 64 (got "many")' },
  { ...concurrency, text: '2.5', yaml: '2.5', problem: 'must be an integer from 1 to 64 (got 2.5)' },
  { ...budget, text: '-1', yaml: '-1', problem: 'must be a whole number, 0 or more (got -1)' },
  { ...budget, text: '1.5', yaml: '1.5', problem: 'must be a whole number, 0 or more (got 1.5)' },
  { ...maxRemovals, text: '-1', yaml: '-1', problem: 'must be a whole number, 0 or more (got -1)' },
  { ...maxRemovals, text: 'all', yaml: 'all', problem: 'must be a whole number, 0 or more (got "all")' },
  {
    ...branchPrefix,
    text: 'a..b/',
    yaml: 'a..b/',
    problem: '"a..b/" is not the start of a git branch name (no "..", "//", component starting with "." or ending in ".lock")',
  },
  { ...branchPrefix, text: '-x/', yaml: '-x/', problem: '"-x/" must not start with "/", "." or "-"' },
  { ...branchPrefix, text: 'a b/', yaml: '"a b/"', problem: '"a b/" may hold only letters, digits, ".", "_", "-" and "/"' },
  { flag: 'forge', input: 'forge', field: 'forge', text: 'gitlab', yaml: 'gitlab', problem: 'must be one of local, github (got "gitlab")' },
  { flag: 'mode', input: 'mode', field: 'mode', text: 'all', yaml: 'all', problem: 'must be one of variants, updates, both (got "all")' },
  {
    flag: 'draft',
    input: 'draft',
    field: 'github.draft',
    text: 'sometimes',
    yaml: 'sometimes',
    problem: 'must be one of always, never, conflicts (got "sometimes")',
  },
  {
    flag: 'auto-merge',
    input: 'auto-merge',
    field: 'github.autoMerge',
    text: 'squish',
    yaml: 'squish',
    problem: 'must be one of false, merge, squash, rebase (got "squish")',
  },
  { input: 'signed-commits', field: 'github.signedCommits', text: 'yes', yaml: '"yes"', problem: 'expected true or false (got "yes")' },
  { flag: 'shard', input: 'shard', text: '0/3', yaml: '0/3', problem: 'must be k/n with 1 ≤ k ≤ n, e.g. 2/5 (got "0/3")' },
  {
    flag: 'allow-image',
    input: 'allowed-images',
    text: 'gcr.io/kpt-fn/, gcr.io/kpt-fn:v1/',
    yaml: '[gcr.io/kpt-fn/, "gcr.io/kpt-fn:v1/"]',
    problem: '"gcr.io/kpt-fn:v1/" is not a registry or repository prefix (e.g. gcr.io/kpt-fn/, ghcr.io/acme/set-team, or * for any image)',
  },
  { flag: 'proposals-dir', field: 'proposalsDir', text: '', yaml: '""', problem: 'expected a non-empty string (got "")' },
  {
    ...credentialRepositories,
    text: 'org/cat*',
    yaml: '[org/cat*]',
    problem: '"org/cat*" has a "*" that is not its last segment: write owner/* or host/group/*',
  },
  {
    ...credentialRepositories,
    text: 'ftp://host/x',
    yaml: '[ftp://host/x]',
    problem: '"ftp://host/x" has the scheme "ftp": https, http, ssh or git only',
  },
];

export const GOOD_SETTINGS: readonly GoodSettingCase[] = [
  { ...concurrency, text: '1', yaml: '1', option: 'concurrency', value: 1 },
  { ...concurrency, text: '64', yaml: '64', option: 'concurrency', value: 64 },
  { ...budget, text: '0', yaml: '0', option: 'budget', value: 0 },
  { ...budget, text: '120', yaml: '120', option: 'budget', value: 120 },
  { ...maxRemovals, text: '0', yaml: '0', option: 'maxRemovals', value: 0 },
  { ...maxRemovals, text: '12', yaml: '12', option: 'maxRemovals', value: 12 },
  { ...branchPrefix, text: 'fleet/prod-', yaml: 'fleet/prod-', option: 'branchPrefix', value: 'fleet/prod-' },
  { flag: 'forge', input: 'forge', field: 'forge', text: 'local', yaml: 'local', option: 'forge', value: 'local' },
  { flag: 'mode', input: 'mode', field: 'mode', text: 'updates', yaml: 'updates', option: 'mode', value: 'updates' },
  { flag: 'draft', input: 'draft', field: 'github.draft', text: 'never', yaml: 'never', option: 'github.draft', value: 'never' },
  {
    flag: 'auto-merge',
    input: 'auto-merge',
    field: 'github.autoMerge',
    text: 'false',
    yaml: 'false',
    option: 'github.autoMerge',
    value: false,
  },
  {
    flag: 'auto-merge',
    input: 'auto-merge',
    field: 'github.autoMerge',
    text: 'squash',
    yaml: 'squash',
    option: 'github.autoMerge',
    value: 'squash',
  },
  {
    flag: 'label',
    input: 'labels',
    field: 'github.labels',
    text: 'kdelta, deps',
    yaml: '[kdelta, deps]',
    option: 'github.labels',
    value: ['kdelta', 'deps'],
  },
  {
    flag: 'team-reviewer',
    input: 'team-reviewers',
    field: 'github.teamReviewers',
    text: 'platform',
    yaml: '[platform]',
    option: 'github.teamReviewers',
    value: ['platform'],
  },
  { flag: 'shard', input: 'shard', text: '2/5', yaml: '2/5', option: 'shard', value: { index: 2, count: 5 } },
  {
    flag: 'allow-image',
    input: 'allowed-images',
    text: 'gcr.io/kpt-fn/, registry.example/team/fn',
    yaml: '[gcr.io/kpt-fn/, registry.example/team/fn]',
    option: 'allowedImages',
    value: ['gcr.io/kpt-fn/', 'registry.example/team/fn'],
  },
  { flag: 'proposals-dir', field: 'proposalsDir', text: 'records', yaml: 'records', option: 'proposalsDir', value: 'records' },
  {
    ...credentialRepositories,
    text: 'org/catalog, git.corp.example/team/*',
    yaml: '[org/catalog, git.corp.example/team/*]',
    option: 'credentialRepositories',
    value: ['org/catalog', 'git.corp.example/team/*'],
  },
  {
    ...serverTokens,
    text: 'https://GHES.example.com=ghes-1',
    yaml: '',
    option: 'serverTokens',
    value: [{ server: 'https://ghes.example.com', token: 'ghes-1' }],
  },
];
