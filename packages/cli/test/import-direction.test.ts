// Imports point one way (DESIGN.md, "Packages"): each workspace package may depend on the ones
// listed for it, and nothing else of the workspace. Checked twice, since either can drift alone:
// the package.json dependencies, and the import statements of every source, test, benchmark and
// script file (a relative path into another package's folder counts as importing that package).
// A workspace package that shipped code imports must be a runtime dependency, not a dev one.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/** The DESIGN.md table, by folder: the workspace packages each one may import. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'merge-core': [],
  'git-source': [],
  'kptfile-model': ['merge-core'],
  'package-update': ['merge-core', 'kptfile-model', 'git-source', 'test-support'],
  'variant-engine': ['merge-core', 'kptfile-model'],
  'fn-render': ['kptfile-model'],
  // the run: control resources, plan, jobs, proposals and the forges that hold them
  run: ['merge-core', 'kptfile-model', 'git-source', 'package-update', 'variant-engine', 'fn-render', 'fake-github', 'test-support'],
  // flags → settings → run → print, and the commands on one package
  cli: ['merge-core', 'kptfile-model', 'git-source', 'package-update', 'variant-engine', 'fn-render', 'run', 'fake-github', 'test-support'],
  // inputs → settings → run → outputs
  action: ['merge-core', 'run', 'fake-github', 'test-support'],
  // the tests' fake GitHub: a dev dependency of the CLI and the Action, importing nothing of ours
  'fake-github': [],
  // the tests' shared fixtures (pkg-update conformance, the fleet of repositories): a dev
  // dependency; it takes package-update's entry points as arguments, so it never imports them
  'test-support': ['kptfile-model'],
};

/** Packages that only tests, fixtures and benchmarks may use (never a runtime dependency). */
const TEST_ONLY = new Set(['fake-github', 'test-support']);

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.turbo']);
// `from '…'`, `import '…'`, `import('…')`, `require('…')`
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g;

function codeFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...codeFiles(path));
    else if (CODE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Shipped code: under src/ or bin/, not a test or a fixture. */
function isShipped(packageDir: string, file: string): boolean {
  const rel = relative(packageDir, file).split(sep);
  return (rel[0] === 'src' || rel[0] === 'bin') && !rel.includes('__fixtures__') && !/\.test\.[cm]?[jt]s$/.test(file);
}

export interface Violation {
  readonly package: string;
  readonly file: string;
  readonly imports: string;
  readonly why: string;
}

/** Every breach of `mayImport` in the workspace at `workspace` (its `packages/*` folders). */
export function importViolations(workspace: string, mayImport: Readonly<Record<string, readonly string[]>>): Violation[] {
  const packagesDir = join(workspace, 'packages');
  const folders = readdirSync(packagesDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  const manifests = new Map(folders.map((f) => [f, JSON.parse(readFileSync(join(packagesDir, f, 'package.json'), 'utf8')) as Manifest]));
  const folderOf = new Map([...manifests].map(([folder, m]) => [m.name, folder]));
  const violations: Violation[] = [];
  for (const [folder, manifest] of manifests) {
    const allowed = mayImport[folder];
    if (allowed === undefined) {
      violations.push({ package: folder, file: 'package.json', imports: '', why: 'not in the table of what each package may import' });
      continue;
    }
    const runtime = new Set(
      [manifest.dependencies, manifest.peerDependencies, manifest.optionalDependencies].flatMap((d) => Object.keys(d ?? {})),
    );
    const declared = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {})]);
    for (const name of declared) {
      const target = folderOf.get(name);
      if (target === undefined) continue;
      if (!allowed.includes(target)) {
        violations.push({ package: folder, file: 'package.json', imports: target, why: `${folder} may not depend on ${target}` });
      } else if (TEST_ONLY.has(target) && runtime.has(name)) {
        violations.push({ package: folder, file: 'package.json', imports: target, why: `${target} is for tests: a devDependency only` });
      }
    }
    const packageDir = join(packagesDir, folder);
    for (const file of codeFiles(packageDir)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(SPECIFIER)) {
        const specifier = match[2]!;
        let target: string | undefined;
        let name: string | undefined;
        if (specifier.startsWith('.')) {
          const into = relative(packagesDir, resolve(dirname(file), specifier)).split(sep);
          if (into[0] !== '..' && into[0] !== folder && folders.includes(into[0]!)) target = into[0];
          name = target === undefined ? undefined : manifests.get(target)!.name;
        } else {
          const parts = specifier.split('/');
          name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
          target = folderOf.get(name);
        }
        if (target === undefined || target === folder) continue;
        const where = relative(workspace, file).split(sep).join('/');
        if (!allowed.includes(target)) {
          violations.push({ package: folder, file: where, imports: specifier, why: `${folder} may not import ${target}` });
        } else if (!specifier.startsWith('.') && !declared.has(name!)) {
          violations.push({ package: folder, file: where, imports: specifier, why: `${name} is not in ${folder}'s package.json` });
        } else if (!specifier.startsWith('.') && isShipped(packageDir, file) && !runtime.has(name!)) {
          violations.push({
            package: folder,
            file: where,
            imports: specifier,
            why: `shipped code needs ${name} as a dependency, not a devDependency`,
          });
        }
      }
    }
  }
  return violations;
}

describe('imports point one way (DESIGN.md)', () => {
  it('every package of the workspace is in the table', () => {
    const folders = readdirSync(join(root, 'packages'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(folders).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('no package.json dependency and no import statement breaks the direction', () => {
    expect(importViolations(root, MAY_IMPORT)).toEqual([]);
  });

  it('finds a forbidden import, an undeclared one, a forbidden dependency and a reach into a sibling folder', () => {
    const ws = mkdtempSync(join(tmpdir(), 'kdelta-imports-'));
    try {
      const make = (folder: string, manifest: Manifest, files: Record<string, string>) => {
        mkdirSync(join(ws, 'packages', folder, 'src'), { recursive: true });
        writeFileSync(join(ws, 'packages', folder, 'package.json'), JSON.stringify(manifest));
        for (const [path, text] of Object.entries(files)) writeFileSync(join(ws, 'packages', folder, path), text);
      };
      make('merge-core', { name: '@kdelta/merge-core' }, { 'src/index.ts': "import { x } from '@kdelta/kptfile-model';\n" });
      make(
        'kptfile-model',
        { name: '@kdelta/kptfile-model', dependencies: { '@kdelta/merge-core': 'workspace:*', '@kdelta/git-source': 'workspace:*' } },
        {
          'src/index.ts': "export * from '@kdelta/merge-core';\nconst p = import('../../package-update/src/index.js');\n",
        },
      );
      make('git-source', { name: '@kdelta/git-source' }, { 'src/index.ts': "import 'yaml';\n" });
      make('package-update', { name: '@kdelta/package-update' }, { 'src/index.ts': "import { y } from '@kdelta/merge-core';\n" });
      expect(importViolations(ws, MAY_IMPORT).map((v) => `${v.file}: ${v.why}`)).toEqual([
        'package.json: kptfile-model may not depend on git-source',
        'packages/kptfile-model/src/index.ts: kptfile-model may not import package-update',
        'packages/merge-core/src/index.ts: merge-core may not import kptfile-model',
        "packages/package-update/src/index.ts: @kdelta/merge-core is not in package-update's package.json",
      ]);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
