import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BAD_SETTINGS, GOOD_SETTINGS, tempDir } from '@kdelta/test-support';
import { KdeltaError } from '@kdelta/errors';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ControlError, loadControl } from '../control/control.js';
import { run } from '../run.js';
import {
  checkSettings,
  describeProblem,
  normaliseSettings,
  resolveSettings,
  SETTING_KEYS,
  settingRow,
  MAX_CONCURRENCY,
  SettingsError,
  valueFromText,
  type CheckedSettings,
} from './settings.js';
import { optionSettings, runSettingsSource, settingOptions, textSettings, type SettingOptions } from './settings-sources.js';

/** `github.draft: never` → the nested YAML lines of a RunSettings spec. */
function specYaml(field: string, yaml: string): string {
  const parts = field.split('.');
  return parts.map((p, i) => `${'  '.repeat(i + 1)}${p}:${i === parts.length - 1 ? ` ${yaml}` : ''}`).join('\n');
}

function runSettingsFile(spec: string): string {
  const dir = join(tempDir(), '.kdelta');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'settings.yaml'),
    `apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: settings\nspec:\n${spec}\n`,
  );
  return dir;
}

async function controlError(spec: string): Promise<ControlError> {
  const error = await loadControl({ dir: runSettingsFile(spec), display: '.kdelta' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ControlError);
  return error as ControlError;
}

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), value);

const flags = (given: Record<string, string | boolean>) => textSettings('flag', (name) => given[name]);
const inputs = (given: Record<string, string>) => textSettings('input', (name) => given[name]);

describe('one rule per setting, whatever the source', () => {
  it.each(BAD_SETTINGS.filter((c) => c.field !== undefined))(
    'RunSettings spec.$field: $yaml is refused with the rule of the flag and the input, naming file, document and field',
    async (c) => {
      const error = await controlError(specYaml(c.field!, c.yaml));
      expect(error.message).toContain(`.kdelta/settings.yaml: document 1 (RunSettings "settings"): spec.${c.field}: ${c.problem}`);
      expect(error.issues).toHaveLength(1);
    },
  );

  it.each(BAD_SETTINGS)('$text for --$flag, input $input and spec.$field: the same message, each naming its source', (c) => {
    const seen: string[] = [];
    if (c.flag) seen.push(describeProblem(checkSettings(flags({ [c.flag]: c.text })).problems[0]!));
    if (c.input) seen.push(describeProblem(checkSettings(inputs({ [c.input]: c.text })).problems[0]!));
    if (c.field) {
      const { raw } = runSettingsSource(parse(`spec:\n${specYaml(c.field, c.yaml)}`).spec, '.kdelta/settings.yaml');
      seen.push(describeProblem(checkSettings(raw).problems[0]!));
    }
    expect(seen).toEqual([
      ...(c.flag ? [`--${c.flag}: ${c.problem}`] : []),
      ...(c.input ? [`input "${c.input}": ${c.problem}`] : []),
      ...(c.field ? [`RunSettings spec.${c.field} in .kdelta/settings.yaml: ${c.problem}`] : []),
    ]);
  });

  it.each(GOOD_SETTINGS.filter((c) => c.field !== undefined))(
    'RunSettings spec.$field: $yaml is accepted as the flag and the input are',
    async (c) => {
      const config = await loadControl({ dir: runSettingsFile(specYaml(c.field!, c.yaml)) });
      expect(at(settingOptions(config.settings), c.option)).toEqual(c.value);
      if (c.flag) expect(at(settingOptions(normaliseSettings(flags({ [c.flag]: c.text }))), c.option)).toEqual(c.value);
      if (c.input) expect(at(settingOptions(normaliseSettings(inputs({ [c.input]: c.text }))), c.option)).toEqual(c.value);
    },
  );

  it('a flag and the input of one setting read any text alike: both accept it as the same value, or both refuse it with the same rule', () => {
    const texts = ['', ' ', '0', '1', '8', '64', '65', '-1', '1.5', 'true', 'TRUE', 'yes', 'false', 'local', 'github', 'both', 'never'];
    texts.push('squash', 'a, b', 'a,,b\n', '2/5', '0/3', 'kdelta/', 'a..b/', 'x y');
    for (const key of SETTING_KEYS) {
      const { flag, input } = settingRow(key);
      if (flag === undefined || input === undefined) continue;
      for (const text of texts) {
        const byFlag = checkSettings(flags({ [flag]: text }));
        const byInput = checkSettings(inputs({ [input]: text }));
        expect(byFlag.settings.values, `${key} ${JSON.stringify(text)}`).toEqual(byInput.settings.values);
        expect(byFlag.problems.map((p) => p.message)).toEqual(byInput.problems.map((p) => p.message));
      }
    }
  });

  it("run()'s own options go by the same rules: a library caller's concurrency 65 stops the run before anything is read", async () => {
    const cwd = tempDir();
    const error = await run({ cwd, concurrency: 65, config: 'nowhere' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettingsError);
    expect(error).toBeInstanceOf(KdeltaError);
    expect((error as SettingsError).code).toBe('invalid-option');
    expect((error as Error).message).toBe('run option concurrency: must be an integer from 1 to 64 (got 65)');
    expect(() => normaliseSettings(optionSettings({ shard: { index: 3, count: 2 } }))).toThrow(
      'run option shard: must be k/n with 1 ≤ k ≤ n, e.g. 2/5 (got "3/2")',
    );
  });
});

describe("run()'s setting options are derived from the table", () => {
  it("each sits at its row's path with its rule's type (pnpm typecheck holds the types), and is read from there", () => {
    const options: SettingOptions = {
      budget: 3,
      shard: '1/2',
      github: { labels: ['x'], draft: 'never' },
      author: { name: 'a', email: 'a@b' },
    };
    // @ts-expect-error not a draft policy
    const badDraft: SettingOptions = { github: { draft: 'sometimes' } };
    // @ts-expect-error no setting has this path
    const noSuchPath: SettingOptions = { github: { label: ['x'] } };
    expect([badDraft, noSuchPath]).toHaveLength(2);
    expect(normaliseSettings(optionSettings(options)).values).toEqual({
      budget: 3,
      shard: { index: 1, count: 2 },
      labels: ['x'],
      draft: 'never',
      authorName: 'a',
      authorEmail: 'a@b',
    });
  });
});

describe('an author is a name and an address, from one source', () => {
  it('half an author is refused, naming the half that is missing in that source', async () => {
    expect(() => normaliseSettings(inputs({ 'commit-author-name': 'Bot' }))).toThrow(
      'input "commit-author-email": set both commit-author-name and commit-author-email, or neither',
    );
    const error = await controlError('  author:\n    name: Bot\n');
    expect(error.message).toContain('spec.author.email: set both spec.author.name and spec.author.email, or neither');
  });

  it('an address that is not one is refused alike from the input and RunSettings', async () => {
    expect(() => normaliseSettings(inputs({ 'commit-author-name': 'Bot', 'commit-author-email': 'not an email' }))).toThrow(
      'input "commit-author-email": expected an email address (got "not an email")',
    );
    const error = await controlError('  author:\n    name: Bot\n    email: not an email\n');
    expect(error.message).toContain('spec.author.email: expected an email address (got "not an email")');
  });

  it('a field no setting has, or a group that is not a map, is named with the fields allowed', async () => {
    expect((await controlError('  author: bot\n')).message).toContain('spec.author: expected a map of name, email (got "bot")');
    expect((await controlError('  author:\n    name: a\n    email: a@b\n    login: a\n')).message).toContain(
      'spec.author.login: unknown field (expected one of name, email)',
    );
    expect((await controlError('  github:\n    label: [x]\n')).message).toContain(
      'spec.github.label: unknown field (expected one of labels, assignees, reviewers, teamReviewers, draft, autoMerge, signedCommits)',
    );
    expect((await controlError('  concurency: 3\n')).message).toContain(
      'spec.concurency: unknown field (expected one of forge, mode, concurrency, budget, maxRemovals, branchPrefix, proposalsDir, author, github)',
    );
  });
});

describe('precedence, decided once', () => {
  const file = (spec: Record<string, unknown>): CheckedSettings => {
    const { raw, problems } = runSettingsSource(spec, '.kdelta/settings.yaml');
    expect(problems).toEqual([]);
    return normaliseSettings(raw);
  };

  it('a flag or input over RunSettings over the default, each value naming where it came from', () => {
    const s = resolveSettings(
      normaliseSettings(flags({ concurrency: '8', label: 'x' })),
      file({ concurrency: 2, budget: 10, github: { labels: ['a', 'b'], draft: 'never' } }),
      {
        config: '.kdelta',
      },
    );
    expect(s).toMatchObject({ concurrency: 8, budget: 10, mode: 'both', branchPrefix: 'kdelta/', proposalsDir: '.kdelta/proposals' });
    // a flag's list replaces RunSettings' whole list
    expect(s.github).toEqual({ labels: ['x'], draft: 'never' });
    expect(s.origins.concurrency).toEqual({ type: 'flag', name: 'concurrency' });
    expect(s.origins.budget).toEqual({ type: 'field', field: 'spec.budget', file: '.kdelta/settings.yaml' });
    expect(s.origins.mode).toEqual({ type: 'default' });
  });

  it("the author comes whole from one source: an input pair replaces RunSettings' pair", () => {
    const runSettings = file({ author: { name: 'Fleet', email: 'fleet@example.com' } });
    expect(resolveSettings(normaliseSettings(inputs({})), runSettings, { config: '.kdelta' }).author).toEqual({
      name: 'Fleet',
      email: 'fleet@example.com',
    });
    const door = normaliseSettings(inputs({ 'commit-author-name': 'Bot', 'commit-author-email': 'bot@example.com' }));
    expect(resolveSettings(door, runSettings, { config: '.kdelta' }).author).toEqual({ name: 'Bot', email: 'bot@example.com' });
    expect(resolveSettings(door, file({}), { config: '.kdelta' }).author).toEqual({ name: 'Bot', email: 'bot@example.com' });
    expect(resolveSettings(normaliseSettings(inputs({})), file({}), { config: '.kdelta' }).author).toEqual({
      name: 'kdelta',
      email: 'kdelta@noreply.invalid',
    });
  });
});

describe('text of a flag or an input', () => {
  it('booleans as YAML 1.2 core schema spells them; anything else stays text for the rule to refuse', () => {
    expect(['true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'yes'].map((v) => valueFromText('boolean', v))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      'yes',
    ]);
  });

  it('lists split on commas and lines, blanks dropped', () => {
    expect(valueFromText('list', ' a, b ,\n\nc\n')).toEqual(['a', 'b', 'c']);
    expect(valueFromText('list', '')).toEqual([]);
  });

  it('numbers read as numbers, so that the rule says what it got as RunSettings would', () => {
    expect(['8', ' 8 ', '-1', '1.5', '1e3', 'x'].map((v) => valueFromText('integer', v))).toEqual([8, 8, -1, 1.5, '1e3', 'x']);
  });
});

describe("docs/control-resources.md's RunSettings table", () => {
  it('lists exactly the fields the rules read, and the rules it states for the numbers', () => {
    const doc = readFileSync(new URL('../../../../docs/control-resources.md', import.meta.url), 'utf8');
    const start = doc.indexOf('| `spec.` field |');
    const rows = doc.slice(start).split('\n\n')[0]!.split('\n').slice(2);
    const listed = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([\w.]+)`/g)].map((m) => m[1]!));
    const fields = new Set(SETTING_KEYS.flatMap((k) => settingRow(k).field?.replace(/^author\..*/, 'author') ?? []));
    expect(new Set(listed)).toEqual(fields);
    const row = (field: string) => rows.find((r) => r.startsWith(`| \`${field}\` `)) ?? '';
    expect(row('concurrency')).toContain(`1 to ${MAX_CONCURRENCY}`);
    expect(row('budget')).toContain('0 or more');
  });
});
