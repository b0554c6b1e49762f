// What a user gets from the registry: every public package is packed as `pnpm publish` would pack
// it, installed with npm into an empty folder, and used from a strict TypeScript file that imports
// each package's documented API. The file must compile against the published declarations alone
// (`skipLibCheck: false`, `types: []` as `tsc --init` writes it) and run with node.
// Needs the packages built (`pnpm test` builds first).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
}

const workspacePackages = readdirSync(join(root, 'packages')).map((dir) => ({
  dir: join(root, 'packages', dir),
  manifest: readJson<Manifest>(join(root, 'packages', dir, 'package.json')),
}));
const packages = workspacePackages.filter((p) => !p.manifest.private);

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

function run(command: string, args: readonly string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

/** An upstream repository: package `web` at v1, and at v2 with a changed ConfigMap and a render pipeline. */
function makeUpstream(dir: string): void {
  const git = (...args: string[]) => run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], dir);
  mkdirSync(join(dir, 'web'), { recursive: true });
  git('init', '--quiet', '--initial-branch=main');
  const kptfile = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n';
  const cm = (a: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "${a}"\n`;
  writeFileSync(join(dir, 'web', 'Kptfile'), kptfile);
  writeFileSync(join(dir, 'web', 'cm.yaml'), cm('1'));
  git('add', '-A');
  git('commit', '--quiet', '-m', 'v1');
  git('tag', 'v1');
  const pipeline = 'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2.0\n      configMap:\n        tier: web\n';
  writeFileSync(join(dir, 'web', 'Kptfile'), `${kptfile}${pipeline}`);
  writeFileSync(join(dir, 'web', 'cm.yaml'), cm('2'));
  git('commit', '--quiet', '-am', 'v2');
  git('tag', 'v2');
}

const consumerSource = (upstream: string, work: string) => `
import { KdeltaError } from '@kdelta/errors';
import { merge3Text, mergeFiles, type MergeFilesResult } from '@kdelta/merge-core';
import { KptfileError, PackageTree, parseKptfile, type Kptfile } from '@kdelta/kptfile-model';
import { redact, repoLocation, type RepoLocation } from '@kdelta/git-source';
import { decodePackageVariant, validatePackageVariant, type PackageVariant } from '@kdelta/variant-engine';
import { diffPackage, getPackage, updatePackage, UpdateError, type ProgressEvent, type UpdateResult } from '@kdelta/package-update';
import { renderPackage, type RenderOutcome } from '@kdelta/fn-render';
import { ExitCode, main, type Io } from 'kdelta';

const upstreamRepo = ${JSON.stringify(upstream)};
const web = ${JSON.stringify(join(work, 'deploy', 'web'))};
const cacheDir = ${JSON.stringify(join(work, 'cache'))};
const events: ProgressEvent[] = [];
const got = await getPackage({ repo: upstreamRepo, directory: '/web', ref: 'v1', destination: web, cacheDir, progress: (e) => events.push(e) });
let refused = '';
try {
  await getPackage({ repo: upstreamRepo, directory: '/web', ref: 'v1', destination: web, cacheDir });
} catch (error) {
  if (error instanceof UpdateError) refused = error.code;
}
const diff = await diffPackage({ dir: web, ref: 'v2', cacheDir });
const updated: UpdateResult = await updatePackage({ dir: web, ref: 'v2', cacheDir });
const rendered: RenderOutcome = await renderPackage(PackageTree.read(web)!, { runtime: 'builtin' });

const origin = 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: app\\ndata:\\n  a: "1"\\n  b: "1"\\n';
const upstream = origin.replace('a: "1"', 'a: "2"');
const local = origin.replace('b: "1"', 'b: "3"');
const merged: MergeFilesResult = mergeFiles(
  { origin: [{ path: 'cm.yaml', text: origin }], upstream: [{ path: 'cm.yaml', text: upstream }], local: [{ path: 'cm.yaml', text: local }] },
  { strategy: 'upstream-wins' },
);
const value: string = merge3Text({ origin: 'a: 1\\n', upstream: 'a: 2\\n', local: 'a: 1\\nb: 3\\n' }).text;

const kptfile: Kptfile = parseKptfile('apiVersion: kpt.dev/v1\\nkind: Kptfile\\nmetadata:\\n  name: web\\n').kptfile;
let badKptfile = '';
let badKptfileCode = '';
try {
  parseKptfile('apiVersion: kpt.dev/v1\\nkind: Nope\\nmetadata:\\n  name: web\\n', 'web/Kptfile');
} catch (error) {
  if (error instanceof KptfileError) badKptfile = error.message;
  // every package's errors extend the one KdeltaError of @kdelta/errors
  if (error instanceof KdeltaError) badKptfileCode = error.code;
}

const location: RepoLocation = repoLocation('https://github.com/example/blueprints.git');
const redacted: string = redact('fetch https://user:s3cret@example.com/r.git failed', ['s3cret']);

const decoded = decodePackageVariant({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'PackageVariant',
  metadata: { name: 'web-prod' },
  spec: { upstream: { repo: 'blueprints', package: 'web', revision: 'v1' }, downstream: { repo: 'deploy', package: 'web-prod' } },
});
const variant: PackageVariant = decoded.value;

let out = '';
const io: Io = { stdout: (t) => void (out += t), stderr: (t) => void (out += t), cwd: '.', env: {} };
const code: number = await main(['--version'], io);

console.log(JSON.stringify({
  mergedFile: merged.files[0]?.text,
  conflicts: merged.conflicts.length,
  value,
  kptfileName: kptfile.metadata?.name,
  badKptfile,
  badKptfileCode,
  location,
  redacted,
  decodeErrors: decoded.errors,
  validateErrors: validatePackageVariant(variant),
  downstream: variant.spec?.downstream?.package,
  version: out,
  ok: code === ExitCode.ok,
  got: { commit: got.commit.length, nested: got.nested, progress: events.length > 0 },
  refused,
  diff: diff.changes.map((c) => c.kind + ' ' + c.subject + ' ' + c.fields.join(',')),
  written: diff.update.written,
  update: {
    packages: updated.packages.map((p) => p.action + ' ' + p.strategy),
    files: updated.files.map((f) => f.path + ' ' + f.status),
    conflicts: updated.conflicts.length,
    lockRef: updated.lock?.git?.ref,
    written: updated.written,
  },
  rendered: rendered.ok ? rendered.tree.text('cm.yaml') : rendered.error.message,
}));
`;

describe('the packed packages, installed from their tarballs into an empty folder', () => {
  let work = '';
  let consumer = '';
  let upstream = '';
  const tarballOf = new Map<string, string>();

  beforeAll(() => {
    for (const p of packages) {
      if (!existsSync(join(p.dir, 'dist', 'index.js')) || !existsSync(join(p.dir, 'dist', 'index.d.ts'))) {
        throw new Error(`${p.manifest.name}: ${p.dir}/dist is missing; run \`pnpm build\` first (\`pnpm test\` does)`);
      }
    }
    work = mkdtempSync(join(tmpdir(), 'kdelta-packed-'));
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    // Every package is packed, the private ones too: publint checks each as packed.
    for (const p of workspacePackages) {
      const printed = run(bin('pnpm'), ['pack', '--pack-destination', tarballs], p.dir).trim().split('\n');
      tarballOf.set(p.manifest.name, printed[printed.length - 1]!);
    }
    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    upstream = join(work, 'upstream');
    makeUpstream(upstream);
    const files = packages.map((p) => tarballOf.get(p.manifest.name)!);
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...files], consumer);
  }, 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('every package, as packed, passes publint --strict (exports, types and files that resolve)', async () => {
    for (const p of workspacePackages) {
      const tarball = readFileSync(tarballOf.get(p.manifest.name)!);
      // the package's directory is the tarball's own root folder
      const { messages, pkg } = await publint({
        pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
        strict: true,
      });
      expect(
        messages.map((m) => `${m.type}: ${formatMessage(m, pkg) ?? m.code}`),
        p.manifest.name,
      ).toEqual([]);
    }
  });

  it('ships a README, dist and (kdelta) bin only: no sources, tests, fixtures or scripts', () => {
    for (const p of packages) {
      const installed = join(consumer, 'node_modules', p.manifest.name);
      const top = readdirSync(installed);
      expect(top, p.manifest.name).toContain('README.md');
      const allowed = new Set([
        'package.json',
        'README.md',
        'LICENSE',
        'CHANGELOG.md',
        'dist',
        ...(p.manifest.name === 'kdelta' ? ['bin'] : []),
        ...(p.manifest.name === '@kdelta/run' ? ['schema'] : []),
      ]);
      expect(
        top.filter((f) => !allowed.has(f)),
        p.manifest.name,
      ).toEqual([]);
      const shipped = readdirSync(join(installed, 'dist'), { recursive: true }).map(String);
      expect(
        shipped.filter((f) => /\.test\.|__fixtures__/.test(f)),
        p.manifest.name,
      ).toEqual([]);
      // Workspace protocol ranges are rewritten to versions when packed.
      const deps = Object.values(readJson<Manifest>(join(installed, 'package.json')).dependencies ?? {});
      expect(
        deps.filter((v) => v.startsWith('workspace:')),
        p.manifest.name,
      ).toEqual([]);
    }
  });

  it('compiles a strict TypeScript consumer against the published declarations, and runs it', () => {
    writeFileSync(join(consumer, 'index.ts'), consumerSource(upstream, work));
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          types: [],
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['index.ts'],
      }),
    );
    run(bin('tsc'), ['-p', 'tsconfig.json'], consumer);
    const result = JSON.parse(run(process.execPath, [join(consumer, 'out', 'index.js')], consumer));
    expect(result.mergedFile).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "2"\n  b: "3"\n');
    expect(result.conflicts).toBe(0);
    expect(result.value).toBe('a: 2\nb: 3\n');
    expect(result.kptfileName).toBe('web');
    expect(result.badKptfile).toContain('web/Kptfile');
    expect(result.badKptfileCode).toBe('wrong-kind');
    expect(result.location).toEqual({ kind: 'https', url: 'https://github.com/example/blueprints.git' });
    expect(result.redacted).not.toContain('s3cret');
    expect(result.decodeErrors).toEqual([]);
    expect(result.validateErrors).toEqual([]);
    expect(result.downstream).toBe('web-prod');
    expect(result.version).toMatch(/^kdelta \d+\.\d+\.\d+/);
    expect(result.ok).toBe(true);
    expect(result.got).toEqual({ commit: 40, nested: [], progress: true });
    expect(result.refused).toBe('destination-exists');
    expect(result.diff).toContain('changed ConfigMap app .data.a: "1" → "2"');
    expect(result.written).toBe(false);
    expect(result.update).toEqual({
      packages: ['updated resource-merge'],
      files: ['Kptfile changed', 'cm.yaml changed'],
      conflicts: 0,
      lockRef: 'v2',
      written: true,
    });
    expect(result.rendered).toContain('labels:\n    tier: web');
    expect(result.rendered).toContain('a: "2"');
  });

  it('installs the kdelta command, which merges the example package', () => {
    const example = join(root, 'examples', 'web-app');
    const out = run(
      join(consumer, 'node_modules', '.bin', 'kdelta'),
      ['merge3', '--original', join(example, 'original'), '--updated', join(example, 'updated'), '--local', join(example, 'local')],
      consumer,
    );
    expect(out).toContain('image: nginx:1.27 # security fixes'); // upstream's change
    expect(out).toContain('replicas: 6 # Black Friday sizing'); // the local edit, kept
    expect(out).toContain('kind: PodDisruptionBudget'); // the local-only resource, kept
  });
});
