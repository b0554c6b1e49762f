import type { Shard } from '../plan/shard.js';
import {
  SETTING_KEYS,
  settingRow,
  valueFromText,
  type CheckedSettings,
  type Origin,
  type RawSetting,
  type RawSettings,
  type SettingKey,
  type SettingPath,
  type SettingValues,
} from './settings.js';

/**
 * The sources of a run's settings, each turned into raw values with their origin for
 * `checkSettings`: text by flag or input name (the CLI, the Action), a RunSettings `spec` (the
 * control resources), `run()`'s options (a library caller). No rule lives here.
 */

/**
 * A flag's or an input's value by its name (SETTING_RULES' `flag` or `input`): text, `true` for
 * a boolean flag given, undefined when not set. The Action's inputs cannot be set to '': its
 * reader returns undefined for one left blank.
 */
export type TextReader = (name: string) => string | boolean | undefined;

/** `kdelta run`'s flags (`type: 'flag'`) or the Action's inputs (`type: 'input'`). */
export function textSettings(type: 'flag' | 'input', read: TextReader): RawSettings {
  const values: { [K in SettingKey]?: RawSetting } = {};
  for (const key of SETTING_KEYS) {
    const rule = settingRow(key);
    const name = rule[type];
    if (name === undefined) continue;
    const given = read(name);
    if (given === undefined) continue;
    values[key] = { value: typeof given === 'string' ? valueFromText(rule.text, given) : given, origin: { type, name } };
  }
  return {
    values,
    originOf: (key) => {
      const name = settingRow(key)[type];
      return name === undefined ? undefined : { type, name };
    },
  };
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A problem with the shape of a RunSettings `spec` (a field no setting has, a group that is not a map). */
export interface ShapeProblem {
  readonly field: string;
  readonly message: string;
}

/**
 * RunSettings' `spec` → raw values named by their field, with the problems of its shape. The
 * fields allowed are SETTING_RULES' `field`s: `spec.github.labels` is a setting's row, not a list
 * kept here.
 */
export function runSettingsSource(spec: unknown, file: string): { raw: RawSettings; problems: ShapeProblem[] } {
  const problems: ShapeProblem[] = [];
  const values: { [K in SettingKey]?: RawSetting } = {};
  const originOf = (key: SettingKey): Origin | undefined => {
    const field = settingRow(key).field;
    return field === undefined ? undefined : { type: 'field', field: `spec.${field}`, file };
  };
  const raw = { values, originOf };
  if (spec === undefined || spec === null) return { raw, problems };
  if (!isMap(spec)) return { raw, problems: [{ field: 'spec', message: 'expected a map' }] };

  // the fields a map may hold, from the rows' dotted paths: '' → forge, …, github; 'github' → labels, …
  const allowed = new Map<string, string[]>();
  for (const key of SETTING_KEYS) {
    const parts = settingRow(key).field?.split('.') ?? [];
    for (let i = 0; i < parts.length; i++) {
      const group = parts.slice(0, i).join('.');
      const list = allowed.get(group) ?? [];
      if (!list.includes(parts[i]!)) list.push(parts[i]!);
      allowed.set(group, list);
    }
  }
  const readMap = (group: string, map: Record<string, unknown>) => {
    const fields = allowed.get(group) ?? [];
    for (const k of Object.keys(map)) {
      const path = group ? `${group}.${k}` : k;
      if (!fields.includes(k)) problems.push({ field: `spec.${path}`, message: `unknown field (expected one of ${fields.join(', ')})` });
      else if (allowed.has(path)) {
        const inner = map[k];
        if (isMap(inner)) readMap(path, inner);
        else
          problems.push({
            field: `spec.${path}`,
            message: `expected a map of ${allowed.get(path)!.join(', ')} (got ${JSON.stringify(inner)})`,
          });
      }
    }
  };
  readMap('', spec);

  for (const key of SETTING_KEYS) {
    const field = settingRow(key).field;
    if (field === undefined) continue;
    let at: unknown = spec;
    for (const part of field.split('.')) at = isMap(at) ? at[part] : undefined;
    if (at !== undefined) values[key] = { value: at, origin: originOf(key)! };
  }
  return { raw, problems };
}

type Paths = { [K in SettingKey]: SettingPath<K> }[SettingKey];
type Group = Paths extends infer P ? (P extends `${infer G}.${string}` ? G : never) : never;
type TopLevel = {
  readonly [K in SettingKey as SettingPath<K> extends `${string}.${string}` ? never : SettingPath<K>]?: SettingValues[K] | undefined;
};
type Grouped<G extends string> = {
  readonly [K in SettingKey as SettingPath<K> extends `${G}.${infer L}` ? L : never]?: SettingValues[K] | undefined;
};

/**
 * The settings among `run()`'s options, as a library caller gives them: the table's paths
 * (`budget`, `github.labels`, `author.name`), each of its row's type; a shard may be given as text.
 */
export type SettingOptions = Omit<TopLevel, 'shard'> & { readonly shard?: Shard | string | undefined } & {
  readonly [G in Group]?: Grouped<G> | undefined;
};

/** Where a setting sits in `run()`'s options: RunSettings' path (`github.labels`), else its key. */
const optionPath = (key: SettingKey): string => settingRow(key).field ?? key;

/** `run()`'s options → raw values named `run option <path>`, checked by the same rules as a flag. */
export function optionSettings(options: SettingOptions): RawSettings {
  const values: { [K in SettingKey]?: RawSetting } = {};
  for (const key of SETTING_KEYS) {
    let at: unknown = options;
    for (const part of optionPath(key).split('.')) at = isMap(at) ? at[part] : undefined;
    if (at !== undefined) values[key] = { value: at, origin: { type: 'option', name: optionPath(key) } };
  }
  return { values, originOf: (key) => ({ type: 'option', name: optionPath(key) }) };
}

/** Checked settings → `run()`'s options: what a door (the CLI, the Action) passes on, only the values set. */
export function settingOptions(settings: CheckedSettings): SettingOptions {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = settings.values[key];
    if (value === undefined) continue;
    const parts = optionPath(key).split('.');
    let at = out;
    for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    at[parts.at(-1)!] = value;
  }
  return out as SettingOptions;
}
