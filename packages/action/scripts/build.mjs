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

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(packageDir, 'dist', 'index.js');
const check = process.argv.includes('--check');

// The workspace packages read their own package.json next to their sources at run time
// (`readFileSync(new URL('../package.json', import.meta.url))`); in one bundled file that path
// means something else, so the build puts the version there instead.
const inlinePackageJson = {
  name: 'inline-package-json',
  setup(b) {
    b.onLoad({ filter: /[\\/]packages[\\/][^\\/]+[\\/]src[\\/].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const pattern = /readFileSync\(new URL\('((?:\.\.\/)+package\.json)', import\.meta\.url\), 'utf8'\)/g;
      if (!pattern.test(source)) return undefined;
      const contents = source.replace(pattern, (_, rel) => {
        const { version } = JSON.parse(readFileSync(resolve(dirname(args.path), rel), 'utf8'));
        return JSON.stringify(JSON.stringify({ version }));
      });
      return { contents, loader: 'ts' };
    });
  },
};

const out = check ? mkdtempSync(join(tmpdir(), 'kdelta-action-build-')) : join(packageDir, 'dist');
try {
  await build({
    absWorkingDir: packageDir,
    entryPoints: ['src/index.ts'],
    outfile: join(out, 'index.js'),
    bundle: true,
    platform: 'node',
    // Node 20 syntax: the same file runs on the runner's node24 and in the tests on Node 20.
    target: 'node20',
    format: 'esm',
    // Workspace packages from their TypeScript sources: the bundle does not depend on what was built before.
    conditions: ['kdelta-source'],
    mainFields: ['module', 'main'],
    // Some dependencies call require() on Node's built-ins: give the ESM bundle one.
    banner: {
      js: "import { createRequire as __kdeltaCreateRequire } from 'node:module';\nconst require = __kdeltaCreateRequire(import.meta.url);",
    },
    legalComments: 'eof',
    sourcemap: false,
    logLevel: 'warning',
    plugins: [inlinePackageJson],
  });
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
