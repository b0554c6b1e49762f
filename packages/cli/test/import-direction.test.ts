// Imports point one way (DESIGN.md, "Packages"): each workspace package may depend on the ones
// listed for it, and nothing else of the workspace. Checked twice, since either can drift alone:
// the package.json dependencies, and the import statements of every source, test, benchmark and
// script file (a relative path into another package's folder counts as importing that package).
// A workspace package that shipped code imports must be a runtime dependency, not a dev one.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/**
 * The one table of allowed arrows, by folder: the workspace packages each one may import. It is
 * DESIGN.md's table, plus the leaf `errors` (every package's base error, so every package may
 * import it) and the two test-only packages.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  // KdeltaError: the leaf every package's errors extend
  errors: [],
  'merge-core': ['errors'],
  'git-source': ['errors'],
  'kptfile-model': ['errors', 'merge-core'],
  'package-update': ['errors', 'merge-core', 'kptfile-model', 'git-source', 'test-support'],
  'variant-engine': ['errors', 'merge-core', 'kptfile-model'],
  'fn-render': ['errors', 'kptfile-model'],
  // the run: control resources, plan, jobs, proposals and the forges that hold them
  run: [
    'errors',
    'merge-core',
    'kptfile-model',
    'git-source',
    'package-update',
    'variant-engine',
    'fn-render',
    'fake-github',
    'test-support',
  ],
  // flags → settings → run → print, and the commands on one package
  cli: [
    'errors',
    'merge-core',
    'kptfile-model',
    'git-source',
    'package-update',
    'variant-engine',
    'fn-render',
    'run',
    'fake-github',
    'test-support',
  ],
  // inputs → settings → run → outputs: the libraries only through the run's exports
  action: ['errors', 'run', 'fake-github', 'test-support'],
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

/** A code file's relative imports, resolved to the files they name (`./x.js` is `./x.ts`). */
function relativeImports(file: string): string[] {
  const out: string[] = [];
  for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
    const specifier = match[2]!;
    if (!specifier.startsWith('.')) continue;
    const target = resolve(dirname(file), specifier);
    const candidates = [target, target.replace(/\.[cm]?js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')];
    const found = candidates.find((c) => CODE.test(c) && existsSync(c));
    if (found) out.push(found);
  }
  return out;
}

/**
 * The import cycles among the files under `dir` (relative imports, type-only ones included: a
 * cycle of types is still a knot to read), each as the files of one strongly connected component.
 */
export function importCycles(dir: string): string[][] {
  const files = codeFiles(dir);
  const inside = new Set(files);
  const edges = new Map(files.map((f) => [f, relativeImports(f).filter((t) => inside.has(t))]));
  // Tarjan's strongly connected components
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v))
      cycles.push(component.map((f) => relative(dir, f).split(sep).join('/')).sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return cycles;
}

/** Imports of the files under `dir`/`folder` that leave that folder (relative ones), as `file → import`. */
export function importsLeaving(dir: string, folder: string): string[] {
  const root = join(dir, folder);
  return codeFiles(root).flatMap((file) =>
    relativeImports(file)
      .filter((target) => relative(root, target).startsWith('..'))
      .map((target) => `${relative(dir, file).split(sep).join('/')} → ${relative(dir, target).split(sep).join('/')}`),
  );
}

// static imports only: `from '…'` and `import '…'` (an `import('…')` loads when it runs)
const STATIC_SPECIFIER = /(?:\bfrom\s*|\bimport\s+)(['"])([^'"\n]+)\1/g;

/** The packages `entry` loads as it is imported: the bare specifiers its static imports reach, file by file. */
export function staticallyLoaded(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    // `import type` and `export type` statements are erased: they load nothing
    const text = readFileSync(file, 'utf8').replace(/\b(?:import|export)\s+type\s[^;]*?\bfrom\s*(['"])[^'"\n]+\1/g, '');
    for (const match of text.matchAll(STATIC_SPECIFIER)) {
      const specifier = match[2]!;
      if (!specifier.startsWith('.')) {
        packages.add(specifier);
        continue;
      }
      const target = resolve(dirname(file), specifier);
      const found = [target.replace(/\.[cm]?js$/, '.ts'), `${target}.ts`, target].find((c) => CODE.test(c) && existsSync(c));
      if (found) walk(found);
    }
  };
  walk(entry);
  return packages;
}

/** The files under `dir` that import a package whose name starts with `prefix`. */
export function importersOf(dir: string, prefix: string): string[] {
  return codeFiles(dir)
    .filter((file) => [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].some((m) => m[2]!.startsWith(prefix)))
    .map((file) => relative(dir, file).split(sep).join('/'))
    .sort();
}

describe('the run and the CLI are untied (issue 20)', () => {
  const runSrc = join(root, 'packages/run/src');
  it('no import cycle among the files of packages/run/src and packages/cli/src', () => {
    expect(importCycles(runSrc)).toEqual([]);
    expect(importCycles(join(root, 'packages/cli/src'))).toEqual([]);
  });

  it('the forges import nothing of the rest of the run', () => {
    expect(importsLeaving(runSrc, 'forge')).toEqual([]);
  });

  it('only the GitHub forge imports Octokit', () => {
    const importers = importersOf(runSrc, '@octokit/');
    expect(importers).toContain('forge/github.ts');
    expect(importers.filter((f) => !/^forge\/github[^/]*\.ts$/.test(f))).toEqual([]);
    expect(importersOf(join(root, 'packages/cli/src'), '@octokit/')).toEqual([]);
    expect(importersOf(join(root, 'packages/action/src'), '@octokit/')).toEqual([]);
  });

  it('the main door of @kdelta/run loads no Octokit; @kdelta/run/github does', () => {
    const octokit = (entry: string) => [...staticallyLoaded(join(runSrc, entry))].filter((p) => p.startsWith('@octokit/'));
    expect(octokit('index.ts')).toEqual([]);
    expect(octokit('github.ts')).toContain('@octokit/core');
  });

  it('finds a cycle, a forge import leaving its folder and an Octokit importer in a small fixture', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdelta-cycles-'));
    try {
      mkdirSync(join(dir, 'forge'));
      writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\n");
      writeFileSync(join(dir, 'b.ts'), "import type { C } from './c.js';\n");
      writeFileSync(join(dir, 'c.ts'), "export { a } from './a.js';\n");
      writeFileSync(join(dir, 'd.ts'), "import { a } from './a.js';\n");
      writeFileSync(join(dir, 'forge/local.ts'), "import { d } from '../d.js';\nimport { Octokit } from '@octokit/core';\n");
      expect(importCycles(dir)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
      expect(importsLeaving(dir, 'forge')).toEqual(['forge/local.ts → d.ts']);
      expect(importersOf(dir, '@octokit/')).toEqual(['forge/local.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

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
