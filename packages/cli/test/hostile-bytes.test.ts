// Hostile bytes and sizes in packages: what kdelta reads from upstream and downstream is input
// from strangers. CRLF files work and keep their line endings; a KRM file that is not UTF-8 is an
// error naming it, any other file is carried byte for byte; an alias bomb is refused naming its
// file; a CEL template that does too much work is stopped, naming its field.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, type Fleet, git, packageVariant, repository } from '@kdelta/test-support';
import { main } from '../src/main.js';

const fleets: Fleet[] = [];
const dirs: string[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-hostile-bytes-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

function fleet(): Fleet {
  const f = createFleet(['cluster-01']);
  fleets.push(f);
  f.writeControl({
    'repositories.yaml': `${repository('catalog', f.upstream)}---\n${repository('cluster-01', f.downstream('cluster-01'))}`,
  });
  return f;
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kdelta-hostile-bytes-'));
  dirs.push(d);
  return d;
}

async function kdelta(cwd: string, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd,
    env: { ...process.env, KDELTA_CACHE_DIR: cacheDir },
  });
  return { code, stdout, stderr };
}

/** The bytes of a file on a branch of a bare repository. */
function show(bare: string, branch: string, path: string): Buffer {
  return execFileSync('git', ['show', `${branch}:${path}`], { cwd: bare });
}

const crlf = (text: string): string => text.replace(/\n/g, '\r\n');
const isAllCrlf = (text: string): boolean => !/(^|[^\r])\n/.test(text);

const CONFIG_MAP = (value: string) =>
  crlf(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n    app: web\ndata:\n  level: ${value}\n  mode: fast\n`);

describe('CRLF files', () => {
  it('go through kdelta run (new variant, then a 3-way update) with their line endings kept', async () => {
    const f = fleet();
    f.publish({ 'base-ns/settings.yaml': CONFIG_MAP('info') }, 'base-ns/v1');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: blue\n') });
    const first = await kdelta(f.control, 'run', '--report', 'report.json');
    expect(first.stderr).not.toMatch(/error|invalid/i);
    expect(first.code).toBe(0);
    const proposed = show(f.downstream('cluster-01'), 'kdelta/web', 'web/settings.yaml').toString('utf8');
    expect(proposed).toContain('metadata: # kpt-merge: /settings\r\n');
    expect(isAllCrlf(proposed)).toBe(true);

    // merged by a reviewer; a local edit; upstream changes the same file
    const work = join(f.root, 'merge');
    git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), work);
    git(work, 'merge', '--quiet', '--no-edit', 'origin/kdelta/web');
    writeFileSync(join(work, 'web/settings.yaml'), proposed.replace('mode: fast', 'mode: safe'));
    git(work, 'commit', '--quiet', '-am', 'local edit');
    git(work, 'push', '--quiet', 'origin', 'main');
    f.publish({ 'base-ns/settings.yaml': CONFIG_MAP('debug') }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: blue\n', 'v2') });
    const second = await kdelta(f.control, 'run', '--report', 'report.json');
    expect(second.stderr).not.toMatch(/error|invalid/i);
    expect(second.code).toBe(0);
    const updated = show(f.downstream('cluster-01'), 'kdelta/web', 'web/settings.yaml').toString('utf8');
    expect(updated).toContain('level: debug\r\n');
    expect(updated).toContain('mode: safe\r\n');
    expect(isAllCrlf(updated)).toBe(true);
  });

  it('go through pkg get, pkg update and fn render with their line endings kept', async () => {
    const f = fleet();
    f.publish(
      {
        'base-ns/settings.yaml': CONFIG_MAP('info'),
        'base-ns/Kptfile': crlf(
          'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.2.0\n    configMap:\n      team: blue\n',
        ),
      },
      'base-ns/v1',
    );
    const ws = tempDir();
    const get = await kdelta(ws, 'pkg', 'get', `${f.upstream}.git/base-ns@base-ns/v1`, 'pkg');
    expect(get.stderr).not.toMatch(/error|invalid/i);
    expect(get.code).toBe(0);
    const got = readFileSync(join(ws, 'pkg/settings.yaml'), 'utf8');
    expect(got).toContain('metadata: # kpt-merge: /settings\r\n');
    expect(isAllCrlf(got)).toBe(true);

    writeFileSync(join(ws, 'pkg/settings.yaml'), got.replace('mode: fast', 'mode: safe'));
    f.publish({ 'base-ns/settings.yaml': CONFIG_MAP('debug') }, 'base-ns/v2');
    const update = await kdelta(ws, 'pkg', 'update', 'pkg@base-ns/v2');
    expect(update.stderr).not.toMatch(/error|invalid/i);
    expect(update.code).toBe(0);
    const merged = readFileSync(join(ws, 'pkg/settings.yaml'), 'utf8');
    expect(merged).toContain('level: debug\r\n');
    expect(merged).toContain('mode: safe\r\n');
    expect(isAllCrlf(merged)).toBe(true);

    const render = await kdelta(ws, 'fn', 'render', 'pkg', '--runtime', 'builtin');
    expect(render.stderr).not.toMatch(/error|invalid/i);
    expect(render.code).toBe(0);
    const rendered = readFileSync(join(ws, 'pkg/settings.yaml'), 'utf8');
    expect(rendered).toContain('team: blue\r\n');
    expect(isAllCrlf(rendered)).toBe(true);
    // the Kptfile too, though get, update and render each rewrote it (upstream, lock)
    const kptfile = readFileSync(join(ws, 'pkg/Kptfile'), 'utf8');
    expect(kptfile).toContain('upstreamLock:\r\n');
    expect(isAllCrlf(kptfile)).toBe(true);
  });
});

describe('bytes that are not UTF-8', () => {
  const latin1 = Buffer.concat([
    Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\ndata:\n  text: "gr'),
    Buffer.from([0xfc]), // ü in Latin-1: not UTF-8
    Buffer.from('n"\n'),
  ]);
  const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0xc3, 0x28]);

  it('in a KRM file are an error naming the file, in kdelta run and pkg get; nothing is pushed', async () => {
    const f = fleet();
    f.publish({ 'base-ns/greeting.yaml': latin1 }, 'base-ns/v1');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const refs = f.refs('cluster-01');
    const r = await kdelta(f.control, 'run', '--report', 'report.json');
    expect(r.code).not.toBe(0);
    const report = JSON.parse(readFileSync(join(f.control, 'report.json'), 'utf8')) as {
      results: { action: string; error?: string }[];
    };
    expect(report.results[0]?.action).toBe('failed');
    expect(report.results[0]?.error).toMatch(/greeting\.yaml: not UTF-8 text/);
    expect(f.refs('cluster-01')).toBe(refs);

    const ws = tempDir();
    const get = await kdelta(ws, 'pkg', 'get', `${f.upstream}.git/base-ns@base-ns/v1`, 'pkg');
    expect(get.code).toBe(1);
    expect(get.stderr).toMatch(/greeting\.yaml: not UTF-8 text/);
  });

  it('in a file that is not KRM are carried byte for byte by kdelta run and pkg get', async () => {
    const f = fleet();
    f.publish({ 'base-ns/logo.png': binary, 'base-ns/notes.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) }, 'base-ns/v1');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const r = await kdelta(f.control, 'run');
    expect(r.code).toBe(0);
    expect(show(f.downstream('cluster-01'), 'kdelta/web', 'web/logo.png').equals(binary)).toBe(true);
    expect(show(f.downstream('cluster-01'), 'kdelta/web', 'web/notes.txt').equals(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))).toBe(true);

    const ws = tempDir();
    const get = await kdelta(ws, 'pkg', 'get', `${f.upstream}.git/base-ns@base-ns/v1`, 'pkg');
    expect(get.code).toBe(0);
    expect(readFileSync(join(ws, 'pkg/logo.png')).equals(binary)).toBe(true);
  });
});

describe('an alias bomb', () => {
  // nine levels of nine aliases: a few hundred bytes that expand to 9^9 strings
  const bomb = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: bomb',
    'data:',
    '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ...'bcdefghi'.split('').map((n, i) => `  ${n}: &${n} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
    '',
  ].join('\n');

  it('is refused naming the file and the document, in fn render, variant apply and kdelta run', async () => {
    const f = fleet();
    f.publish({ 'base-ns/bomb.yaml': `---\n${bomb}` }, 'base-ns/v1');
    const ws = tempDir();
    const pkg = join(ws, 'local');
    mkdirSync(pkg);
    writeFileSync(join(pkg, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: local\n');
    writeFileSync(join(pkg, 'bomb.yaml'), bomb);
    const render = await kdelta(ws, 'fn', 'render', 'local');
    expect(render.code).toBe(1);
    expect(render.stderr).toMatch(/bomb\.yaml: document 0: .*aliases/);
    writeFileSync(join(ws, 'pv.yaml'), packageVariant('local', 'cluster-01'));
    const apply = await kdelta(ws, 'variant', 'apply', '--variant', 'pv.yaml', '--package', 'local');
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/bomb\.yaml: document 0: .*aliases/);

    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const r = await kdelta(f.control, 'run', '--report', 'report.json');
    expect(r.code).not.toBe(0);
    const report = JSON.parse(readFileSync(join(f.control, 'report.json'), 'utf8')) as { results: { error?: string }[] };
    expect(report.results[0]?.error).toMatch(/bomb\.yaml: document 0: .*aliases/);
  });
});

describe('a CEL template that does too much work', () => {
  it('is stopped early by the budget, naming the PackageVariantSet and the field', async () => {
    const dir = tempDir();
    const thousand = `[${Array.from({ length: 1000 }, (_, i) => i).join(', ')}]`;
    writeFileSync(
      join(dir, 'repos.yaml'),
      'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: cluster-01\n  namespace: default\n  labels: {env: prod}\nspec:\n  git: {repo: https://example.com/c.git, branch: main}\n',
    );
    writeFileSync(
      join(dir, 'set.yaml'),
      `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: x
  namespace: default
spec:
  upstream: {repo: catalog, package: foo, revision: v1}
  targets:
  - repositorySelector:
      matchLabels: {env: prod}
    template:
      labelExprs:
      - key: size
        valueExpr: "string(size(${thousand}.map(a, ${thousand}.map(b, ${thousand}.map(c, [a, b, c])))))"
`,
    );
    const r = await kdelta(dir, 'variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('set.yaml: document 1 (PackageVariantSet "x")');
    expect(r.stderr).toMatch(/spec\.targets\[0\] .*: template\.labelExprs\[0\]\.valueExpr: CEL cost budget exceeded/);
  });
});
