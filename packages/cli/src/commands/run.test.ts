import { BAD_SETTINGS, GOOD_SETTINGS } from '@kdelta/test-support';
import { settingOptions, settingRow } from '@kdelta/run';
import { FLAG_SETTINGS } from '../setting-flags.js';
import command from './run.js';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { readRunFlags } from './run.js';

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), value);

// The table the Action's inputs and RunSettings are tested against too: the three agree.
describe("kdelta run's flags go by the run's one set of rules", () => {
  it.each(BAD_SETTINGS.filter((c) => c.flag !== undefined))('--$flag "$text" is refused as the input and RunSettings refuse it', (c) => {
    expect(() => readRunFlags([`--${c.flag}=${c.text}`])).toThrow(new UsageError(`--${c.flag}: ${c.problem}`));
  });

  it.each(GOOD_SETTINGS.filter((c) => c.flag !== undefined))('--$flag "$text" is accepted as the input and RunSettings accept it', (c) => {
    expect(at(settingOptions(readRunFlags([`--${c.flag}=${c.text}`]).settings), c.option)).toEqual(c.value);
  });

  it('a repeated list flag and a comma list are one list', () => {
    const { settings } = readRunFlags([
      '--label',
      'a',
      '--label',
      'b,c',
      '--credential-host',
      'git.example',
      '--credential-repository',
      'org/a,org/*',
    ]);
    expect(settings.values.labels).toEqual(['a', 'b', 'c']);
    expect(settings.values.credentialHosts).toEqual(['git.example']);
    expect(settings.values.credentialRepositories).toEqual(['org/a', 'org/*']);
  });

  it('every bad flag is named at once', () => {
    expect(() => readRunFlags(['--concurrency', '65', '--budget=-1'])).toThrow(
      '--concurrency: must be an integer from 1 to 64 (got 65)\n--budget: must be a whole number, 0 or more (got -1)',
    );
  });
});

describe('kdelta run --help', () => {
  it.each(FLAG_SETTINGS)("explains the flag of %s with the settings table's help line", (key) => {
    const row = settingRow(key);
    const help = command.help.replace(/\s+/g, ' ');
    expect(help).toContain(`--${row.flag}${row.arg ? ` ${row.arg}` : ''} ${row.help}`);
  });
});
