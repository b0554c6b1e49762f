// Bundles the `kdelta` command into one file, dist/kdelta.js, which bin/kdelta.js runs: node then
// reads and compiles one file instead of resolving and loading some two hundred modules, which
// was a third of a run with nothing new. The library API (dist/index.js, from tsc) is unchanged.
//   node scripts/bundle.mjs
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../../../scripts/esbuild-node.mjs';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
await build(nodeBundleOptions({ packageDir, entry: 'src/main.ts', outfile: join(packageDir, 'dist', 'kdelta.js') }));
