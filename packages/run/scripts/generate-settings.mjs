// Writes the files derived from the run settings' table (packages/run/src/settings/setting-table.ts):
// action.yml's setting inputs and the RunSettings spec of the JSON Schema. Reads the built package
// (`pnpm generate` builds it first).
//   node packages/run/scripts/generate-settings.mjs           write the files that are stale
//   node packages/run/scripts/generate-settings.mjs --check   exit 1 naming each stale file
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedSettingsFiles } from '../dist/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const check = process.argv.includes('--check');
const read = (path) => readFileSync(join(root, path), 'utf8');
// JSON is compared as data: the repository's formatter decides its layout
const same = (path, text) =>
  path.endsWith('.json') ? JSON.stringify(JSON.parse(read(path))) === JSON.stringify(JSON.parse(text)) : read(path) === text;

let stale = 0;
for (const file of generatedSettingsFiles(read)) {
  if (same(file.path, file.text)) continue;
  stale++;
  if (check) process.stderr.write(`${file.path} is stale: run pnpm generate\n`);
  else {
    writeFileSync(join(root, file.path), file.text);
    if (file.path.endsWith('.json'))
      execFileSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', file.path], { cwd: root });
    process.stdout.write(`wrote ${file.path}\n`);
  }
}
process.exitCode = check && stale > 0 ? 1 : 0;
