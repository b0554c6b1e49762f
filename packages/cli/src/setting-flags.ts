import {
  type CheckedSettings,
  normaliseSettings,
  SETTING_KEYS,
  type SettingKey,
  SettingsError,
  settingRow,
  textSettings,
} from '@kdelta/run';
import { booleanFlag, type FlagSpec, type ParsedFlags, stringFlag, stringsFlag } from './args.js';
import { UsageError } from './command.js';

/**
 * The flags that carry a run setting, for every command that takes one (`kdelta run`, `preview`,
 * `proposals`): named, read, checked and explained by the run's settings table, so a flag is
 * read as the Action reads its input and RunSettings its field.
 */

/** The settings that have a flag, in the table's order. */
export const FLAG_SETTINGS: readonly SettingKey[] = SETTING_KEYS.filter((key) => settingRow(key).flag !== undefined);

/** The flag specs of `keys`' settings, for parseFlags. */
export function settingFlagSpecs(keys: readonly SettingKey[] = FLAG_SETTINGS): Record<string, FlagSpec> {
  return Object.fromEntries(
    keys.flatMap((key) => {
      const row = settingRow(key);
      if (row.flag === undefined) return [];
      return [
        [
          row.flag,
          row.text === 'boolean' ? { type: 'boolean' } : { type: 'string', multiple: row.text === 'list' || row.text === 'lines' },
        ],
      ];
    }),
  );
}

/** `keys`' settings from parsed flags, checked by the run's rules: every bad one is named in one usage error. */
export function settingsFromFlags(flags: ParsedFlags, keys: readonly SettingKey[] = FLAG_SETTINGS): CheckedSettings {
  const specs = settingFlagSpecs(keys);
  const read = (name: string): string | boolean | undefined => {
    const spec = specs[name];
    if (spec === undefined) return undefined;
    if (spec.type === 'boolean') return booleanFlag(flags, name) ? true : undefined;
    // a repeated flag and a comma list are one list
    if (spec.multiple) {
      const given = stringsFlag(flags, name);
      const lines = FLAG_SETTINGS.some((key) => settingRow(key).flag === name && settingRow(key).text === 'lines');
      return given.length > 0 ? given.join(lines ? '\n' : ',') : undefined;
    }
    return stringFlag(flags, name);
  };
  try {
    return normaliseSettings(textSettings('flag', read));
  } catch (error) {
    if (error instanceof SettingsError) throw new UsageError(error.message);
    throw error;
  }
}

const NAME_WIDTH = 23;
const LINE_WIDTH = 100;

/** `text` in lines of at most `width` characters, broken at spaces. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** The help lines of `keys`' flags: `  --budget <n>           content-creating…`, wrapped under the text's column. */
export function settingFlagsHelp(keys: readonly SettingKey[] = FLAG_SETTINGS): string {
  const indent = ' '.repeat(NAME_WIDTH + 2);
  return keys
    .flatMap((key) => {
      const row = settingRow(key);
      if (row.flag === undefined) return [];
      const name = `--${row.flag}${row.arg ? ` ${row.arg}` : ''}`;
      const text = wrap(row.help ?? '', LINE_WIDTH - indent.length);
      // a name too long for its column puts the text on the next line
      const first = name.length < NAME_WIDTH ? [`  ${name.padEnd(NAME_WIDTH)}${text.shift() ?? ''}`] : [`  ${name}`];
      return [...first, ...text.map((t) => `${indent}${t}`)];
    })
    .join('\n');
}
