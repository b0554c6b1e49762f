import { RunError } from '../errors.js';
import { SETTING_KEYS, settingRow } from './setting-table.js';

/**
 * The files whose settings part is derived from the settings' table: action.yml's inputs and the
 * RunSettings `spec` of the JSON Schema. Pure: given what a file holds, the text it should hold.
 * `pnpm generate` (packages/run/scripts/generate-settings.mjs) writes them; a test fails when one
 * is stale, as the bundle check does for the Action's bundle.
 */

/** A file of the repository, by its path from the root. */
export interface GeneratedFile {
  readonly path: string;
  readonly text: string;
}

export const ACTION_YML = 'action.yml';
export const CONFIG_SCHEMA = 'packages/run/schema/kdelta-config.schema.json';

const BEGIN =
  '  # run settings: generated from packages/run/src/settings/setting-table.ts by `pnpm generate`; edit the table, not these lines';
const END = '  # end of the generated run settings';

/** The setting inputs of action.yml, in the table's order: a name, its description, its default. */
export function actionInputsYaml(): string {
  const lines: string[] = [];
  for (const key of SETTING_KEYS) {
    const row = settingRow(key);
    if (row.input === undefined) continue;
    // JSON's double-quoted string is YAML's: no escaping rule of our own
    lines.push(
      `  ${row.input}:`,
      `    description: ${JSON.stringify(row.description ?? '')}`,
      `    default: ${JSON.stringify(row.inputDefault ?? '')}`,
    );
  }
  return lines.join('\n');
}

/** The groups of RunSettings' `spec` (the dotted rows' first part) and what the schema says of each. */
const SPEC_GROUPS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  // an author is a name and an address together (checkSettings refuses a half)
  author: { required: ['name', 'email'] },
  github: { description: "the github forge's pull request options; the run's flags override each one" },
};

type SchemaObject = { type: 'object'; properties: Record<string, unknown>; additionalProperties: false } & Record<string, unknown>;

/** RunSettings' `spec`: one property per row with a field, nested by the field's dotted path. */
export function runSettingsSpecSchema(): SchemaObject {
  const spec: SchemaObject = { type: 'object', properties: {}, additionalProperties: false };
  for (const key of SETTING_KEYS) {
    const row = settingRow(key);
    if (row.field === undefined) continue;
    const parts = row.field.split('.');
    let at = spec;
    for (const group of parts.slice(0, -1)) {
      at.properties[group] ??= { type: 'object', properties: {}, additionalProperties: false, ...SPEC_GROUPS[group] };
      at = at.properties[group] as SchemaObject;
    }
    at.properties[parts.at(-1)!] = { ...row.schema, ...(row.default !== undefined ? { default: row.default } : {}) };
  }
  return spec;
}

/** `text` with the lines between the generated block's markers replaced by `block`. */
function replaceBlock(path: string, text: string, block: string): string {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) {
    // a broken invariant of the repository, not a user's input
    throw new RunError('internal', `the generated run settings' markers are missing ("${BEGIN.trim()}" … "${END.trim()}")`, { file: path });
  }
  return `${text.slice(0, begin + BEGIN.length)}\n${block}\n${text.slice(end)}`;
}

/** Every generated file as it should be, from what it holds now (`read` by path from the repository's root). */
export function generatedSettingsFiles(read: (path: string) => string): GeneratedFile[] {
  const schema = JSON.parse(read(CONFIG_SCHEMA)) as { definitions: { RunSettings: { properties: Record<string, unknown> } } };
  schema.definitions.RunSettings.properties.spec = runSettingsSpecSchema();
  return [
    { path: ACTION_YML, text: replaceBlock(ACTION_YML, read(ACTION_YML), actionInputsYaml()) },
    { path: CONFIG_SCHEMA, text: `${JSON.stringify(schema, null, 2)}\n` },
  ];
}
