// Bundles the Action into one file, dist/index.js, which is committed: a workflow runs it from
// the repository as it is, with no install step. The bundle is deterministic (same sources and
// lockfile, same bytes), so `--check` can rebuild it to a temporary file and compare.
//   node scripts/build.mjs           write dist/index.js
//   node scripts/build.mjs --check   exit 1 when dist/index.js is not what the sources build to
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../../../scripts/esbuild-node.mjs';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(packageDir, 'dist', 'index.js');
const check = process.argv.includes('--check');

const out = check ? mkdtempSync(join(tmpdir(), 'kdelta-action-build-')) : join(packageDir, 'dist');
try {
  await build(nodeBundleOptions({ packageDir, entry: 'src/index.ts', outfile: join(out, 'index.js') }));
  if (check) {
    const fresh = readFileSync(join(out, 'index.js'));
    let current;
    try {
      current = readFileSync(committed);
    } catch {
      current = undefined;
    }
    if (!current || !fresh.equals(current)) {
      console.error(
        `packages/action/dist/index.js is ${current ? 'stale' : 'missing'}: run \`pnpm --filter @kdelta/action build\` and commit dist/index.js`,
      );
      process.exitCode = 1;
    } else {
      console.log('packages/action/dist/index.js is up to date');
    }
  }
} finally {
  if (check) rmSync(out, { recursive: true, force: true });
}
