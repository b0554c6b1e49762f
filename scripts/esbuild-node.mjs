// What the bundles of kdelta (the Action's dist/index.js, the CLI's dist/kdelta.js) share: one
// ESM file for Node 20 built from the workspace packages' TypeScript sources.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

// The workspace packages read their own package.json next to their sources at run time
// (`readFileSync(new URL('../package.json', import.meta.url))`); in one bundled file that path
// means something else, so the build puts the version there instead.
export const inlinePackageJson = {
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

/** esbuild's options for one Node bundle of `entry` (relative to `packageDir`) written to `outfile`. */
export function nodeBundleOptions({ packageDir, entry, outfile }) {
  return {
    absWorkingDir: packageDir,
    entryPoints: [entry],
    outfile,
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
  };
}
