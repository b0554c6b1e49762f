import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SETTING_KEYS, settingRow } from './setting-table.js';
import { ACTION_YML, generatedSettingsFiles } from './settings-generated.js';

const root = new URL('../../../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');

// As the bundle check holds dist/index.js to its sources, this holds the files derived from the
// settings' table to the table: a row changed without `pnpm generate` fails here.
describe('the files generated from the settings table', () => {
  it.each(generatedSettingsFiles(read).map((f) => [f.path, f.text] as const))('%s is current (else run pnpm generate)', (path, text) => {
    // JSON as data: the formatter decides its layout
    if (path.endsWith('.json')) expect(JSON.parse(read(path)), `${path} is stale: run pnpm generate`).toEqual(JSON.parse(text));
    else expect(read(path), `${path} is stale: run pnpm generate`).toBe(text);
  });

  it("action.yml has an input for every row that names one, with the row's description and default", () => {
    const inputs = (parse(read(ACTION_YML)) as { inputs: Record<string, { description: string; default: string }> }).inputs;
    for (const key of SETTING_KEYS) {
      const row = settingRow(key);
      if (row.input === undefined) continue;
      expect(inputs[row.input], row.input).toEqual({ description: row.description, default: row.inputDefault ?? '' });
    }
  });

  it('a stale file is found: a row whose words changed makes action.yml differ from what is generated', () => {
    const edited = (path: string) => read(path).replace('Variants run at the same time', 'Variants at once');
    const [actionYml] = generatedSettingsFiles(edited);
    expect(actionYml!.text).not.toBe(edited(ACTION_YML));
  });
});

describe("docs/action.md's inputs table", () => {
  it('names every setting input the table gives action.yml, and no input action.yml lacks', () => {
    const doc = read('docs/action.md');
    const start = doc.indexOf('| input | default |');
    const rows = doc.slice(start).split('\n\n')[0]!.split('\n').slice(2);
    const listed = new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([\w-]+)`/g)].map((m) => m[1]!)));
    const inputs = Object.keys((parse(read(ACTION_YML)) as { inputs: Record<string, unknown> }).inputs);
    const settingInputs = SETTING_KEYS.flatMap((key) => settingRow(key).input ?? []);
    expect(settingInputs.filter((input) => !listed.has(input))).toEqual([]);
    expect([...listed].filter((input) => !inputs.includes(input))).toEqual([]);
  });
});

describe('the table itself', () => {
  it.each(SETTING_KEYS)('%s: a flag has its help line, an input its description, a RunSettings field its schema', (key) => {
    const row = settingRow(key);
    if (row.flag !== undefined) expect(row.help, `${key}.help`).toBeTruthy();
    if (row.input !== undefined) expect(row.description, `${key}.description`).toBeTruthy();
    if (row.field !== undefined) expect(row.schema, `${key}.schema`).toBeDefined();
  });
});
