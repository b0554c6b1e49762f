// Imports point one way (DESIGN.md, "Packages"): each workspace package may depend on the ones
// listed for it, and nothing else of the workspace. Checked three times, since each can drift alone:
// the package.json dependencies, the import statements of every source, test, benchmark and
// script file (a relative path into another package's folder counts as importing that package),
// and the "Imports point one way" paragraph of each package's README.
// A workspace package that shipped code imports must be a runtime dependency, not a dev one.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/**
 * The one table of allowed arrows, by folder: the workspace packages each one may import. It is
 * DESIGN.md's table, plus the leaf `errors` (every package's base error, so every package may
 * import it) and the two test-only packages; each package's README says the same in words.
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

/** The workspace packages, by folder name, as `manifests` of `workspace/packages/*`. */
function workspaceManifests(workspace: string): Map<string, Manifest> {
  const packagesDir = join(workspace, 'packages');
  return new Map(
    readdirSync(packagesDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => [e.name, JSON.parse(readFileSync(join(packagesDir, e.name, 'package.json'), 'utf8')) as Manifest]),
  );
}

const README_IMPORTS = 'Imports point one way: this package may import';

/**
 * Where a package's README and `mayImport` disagree. The README says it in one paragraph that
 * starts "Imports point one way: this package may import" and names each allowed package in
 * backticks (`@kdelta/errors`, `kdelta`); "nothing of the workspace" names none.
 */
export function readmeImportProblems(workspace: string, mayImport: Readonly<Record<string, readonly string[]>>): string[] {
  const manifests = workspaceManifests(workspace);
  const folderOf = new Map([...manifests].map(([folder, m]) => [m.name, folder]));
  const problems: string[] = [];
  for (const folder of manifests.keys()) {
    const file = join(workspace, 'packages', folder, 'README.md');
    const paragraphs = existsSync(file) ? readFileSync(file, 'utf8').split(/\n[ \t]*\n/) : [];
    const paragraph = paragraphs.find((p) => p.trimStart().startsWith(README_IMPORTS));
    if (paragraph === undefined) {
      problems.push(`packages/${folder}/README.md: no paragraph "Imports point one way: this package may import …"`);
      continue;
    }
    const named = [...paragraph.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((name) => folderOf.has(name));
    const said = new Set(named.map((name) => folderOf.get(name)!).filter((f) => f !== folder));
    const allowed = new Set(mayImport[folder] ?? []);
    for (const f of allowed) if (!said.has(f)) problems.push(`packages/${folder}/README.md: does not say it may import ${f}`);
    for (const f of said)
      if (!allowed.has(f)) problems.push(`packages/${folder}/README.md: says it may import ${f}, which the table forbids`);
  }
  return problems;
}

/** The shipped code files under `dir` (not tests, fixtures or declarations) longer than `limit` lines. */
export function filesOver(dir: string, limit: number): Map<string, number> {
  const over = new Map<string, number>();
  for (const file of codeFiles(dir)) {
    const rel = relative(dir, file).split(sep).join('/');
    if (/\.test\.[cm]?[jt]s$/.test(rel) || rel.split('/').includes('__fixtures__')) continue;
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > limit) over.set(rel, lines);
  }
  return over;
}

/** The code files of the workspace, tests left out, that declare a class named `name`, as paths from `workspace`. */
export function classDeclarations(workspace: string, name: string): string[] {
  const declares = new RegExp(`\\bclass\\s+${name}\\b`);
  return codeFiles(join(workspace, 'packages'))
    .filter((file) => !/\.test\.[cm]?[jt]s$/.test(file) && declares.test(readFileSync(file, 'utf8')))
    .map((file) => relative(workspace, file).split(sep).join('/'))
    .sort();
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
    expect(importsLeaving(runSrc, 'forges')).toEqual([]);
  });

  it('only the GitHub forge imports Octokit', () => {
    const importers = importersOf(runSrc, '@octokit/');
    // the one client (forges/github/client.ts) and the App's token minting (auth.ts)
    expect(importers.filter((f) => !f.endsWith('.test.ts'))).toEqual(['forges/github/auth.ts', 'forges/github/client.ts']);
    expect(importersOf(join(root, 'packages/cli/src'), '@octokit/')).toEqual([]);
    expect(importersOf(join(root, 'packages/action/src'), '@octokit/')).toEqual([]);
  });

  it("the Action reaches GitHub's API through the run's one client: no API version or request of its own", () => {
    const actionSrc = join(root, 'packages/action/src');
    const own = codeFiles(actionSrc).filter(
      (file) => !/\.test\.ts$/.test(file) && /x-github-api-version|\bfetch\(/i.test(readFileSync(file, 'utf8')),
    );
    expect(own.map((file) => relative(actionSrc, file))).toEqual([]);
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

/** The most lines a shipped file of packages/run/src may have: one stage, or one part of one, to a file. */
const RUN_FILE_LINE_LIMIT = 500;

/**
 * Files over the limit today, each to be split by the run-as-stages work (issue 29). No file may
 * join this list, and a file leaves it once split (the check fails while a name here is short).
 */
const RUN_FILES_BEING_SPLIT: ReadonlySet<string> = new Set(['run.ts']);

/** The GitHub forge is a folder of small modules (client, pulls, decorations, statuses, dashboard, commits). */
const GITHUB_FORGE_FILE_LINE_LIMIT = 250;

describe('the run reads as stages (issue 29)', () => {
  const runSrc = join(root, 'packages/run/src');

  it(`no shipped file of packages/run/src is over ${RUN_FILE_LINE_LIMIT} lines, except those being split`, () => {
    const over = filesOver(runSrc, RUN_FILE_LINE_LIMIT);
    expect(
      [...over].filter(([file]) => !RUN_FILES_BEING_SPLIT.has(file)).map(([file, lines]) => `${file}: ${lines} lines`),
      `split these files (at most ${RUN_FILE_LINE_LIMIT} lines each)`,
    ).toEqual([]);
    expect(
      [...RUN_FILES_BEING_SPLIT].filter((file) => !over.has(file)),
      'split already (or gone): take them off RUN_FILES_BEING_SPLIT',
    ).toEqual([]);
  });

  it(`each module of the GitHub forge has at most ${GITHUB_FORGE_FILE_LINE_LIMIT} lines`, () => {
    const over = filesOver(join(runSrc, 'forges/github'), GITHUB_FORGE_FILE_LINE_LIMIT);
    expect([...over].map(([file, lines]) => `${file}: ${lines} lines`)).toEqual([]);
  });

  it('counts the lines of shipped files only, in a small fixture', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdelta-lines-'));
    try {
      mkdirSync(join(dir, 'forge', '__fixtures__'), { recursive: true });
      const lines = (n: number) => 'export const x = 1;\n'.repeat(n);
      const files: [string, string][] = [
        ['short.ts', lines(500)],
        ['long.ts', lines(501)],
        ['no-final-line-break.ts', lines(500) + 'export const y = 2;'],
        ['forge/long.test.ts', lines(900)],
        ['forge/__fixtures__/long.ts', lines(900)],
        ['types.d.ts', lines(900)],
      ];
      for (const [path, text] of files) writeFileSync(join(dir, path), text);
      expect(Object.fromEntries(filesOver(dir, 500))).toEqual({ 'long.ts': 501, 'no-final-line-break.ts': 501 });
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

  it("each package's README says what the table says it may import", () => {
    expect(readmeImportProblems(root, MAY_IMPORT)).toEqual([]);
  });

  it('KdeltaError is declared once, in the leaf package @kdelta/errors, which imports nothing', () => {
    expect(classDeclarations(root, 'KdeltaError')).toEqual(['packages/errors/src/kdelta-error.ts']);
    expect(MAY_IMPORT['errors']).toEqual([]);
  });

  it('finds a README that names a forbidden package, one that leaves an allowed one out, and one that says nothing', () => {
    const ws = mkdtempSync(join(tmpdir(), 'kdelta-readmes-'));
    try {
      const make = (folder: string, name: string, readme?: string) => {
        mkdirSync(join(ws, 'packages', folder), { recursive: true });
        writeFileSync(join(ws, 'packages', folder, 'package.json'), JSON.stringify({ name }));
        if (readme !== undefined) writeFileSync(join(ws, 'packages', folder, 'README.md'), readme);
      };
      const lead = 'Imports point one way: this package may import';
      make('errors', '@kdelta/errors', `# @kdelta/errors\n\n${lead} nothing of the workspace.\n`);
      make(
        'merge-core',
        '@kdelta/merge-core',
        `# m\n\nIntro naming \`@kdelta/run\`.\n\n${lead} \`@kdelta/errors\` and\n\`@kdelta/merge-core\`.\n`,
      );
      make('kptfile-model', '@kdelta/kptfile-model', `${lead} \`@kdelta/errors\`, \`@kdelta/merge-core\`, \`@kdelta/git-source\`.\n`);
      make('git-source', '@kdelta/git-source');
      make('fn-render', '@kdelta/fn-render', `${lead} \`@kdelta/errors\` only.\n`);
      make('run', '@kdelta/run', `# r\n\nIt may import \`@kdelta/errors\`.\n`);
      expect(readmeImportProblems(ws, MAY_IMPORT).sort()).toEqual([
        'packages/fn-render/README.md: does not say it may import kptfile-model',
        'packages/git-source/README.md: no paragraph "Imports point one way: this package may import …"',
        'packages/kptfile-model/README.md: says it may import git-source, which the table forbids',
        'packages/run/README.md: no paragraph "Imports point one way: this package may import …"',
      ]);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('finds every declaration of a class, in a small fixture', () => {
    const ws = mkdtempSync(join(tmpdir(), 'kdelta-classes-'));
    try {
      mkdirSync(join(ws, 'packages', 'a', 'src'), { recursive: true });
      mkdirSync(join(ws, 'packages', 'b', 'src'), { recursive: true });
      writeFileSync(join(ws, 'packages', 'a', 'src', 'e.ts'), 'export class KdeltaError extends Error {}\n');
      writeFileSync(join(ws, 'packages', 'b', 'src', 'mirror.ts'), 'export class   KdeltaError extends Error {}\n');
      writeFileSync(join(ws, 'packages', 'b', 'src', 'mirror.test.ts'), 'class KdeltaError extends Error {}\n');
      writeFileSync(join(ws, 'packages', 'b', 'src', 'sub.ts'), 'export class GitError extends KdeltaError {}\nclass KdeltaErrors {}\n');
      expect(classDeclarations(ws, 'KdeltaError')).toEqual(['packages/a/src/e.ts', 'packages/b/src/mirror.ts']);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
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
