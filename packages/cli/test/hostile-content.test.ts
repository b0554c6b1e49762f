// Hostile inputs: what a package's content or a downstream repository may try against a user who
// runs kdelta with a write token. Each case drives the built CLI in its own process (only PATH,
// a temporary HOME, TMPDIR and cache in its environment) on real git repositories, and a real
// git server over https on 127.0.0.1 for the credential cases.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingGitServer, type TlsFiles, makeCertificate, serveRecordingGit } from './fixtures/https-git-server.js';

const bin = fileURLToPath(new URL('../bin/kdelta.js', import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-hostile-')));
const TOKEN = 'kdelta-test-token-5a1e';
let n = 0;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built CLI in its own process, with only PATH, a fresh HOME, TMPDIR and cache, and `env`. */
function kdelta(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const home = join(root, 'home');
  const tmp = join(root, 'tmp');
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  const fullEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: tmp, KDELTA_CACHE_DIR: join(root, 'cache'), ...env };
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env: fullEnv, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** A fresh directory under the test's root. */
function fresh(name: string): string {
  const dir = join(root, `${++n}-${name}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** A bare repository at `bare` holding `files` on main, tagged `tag` when given. */
function makeRepo(bare: string, files: Readonly<Record<string, string>>, tag?: string): void {
  const work = fresh('seed');
  git(work, 'init', '--quiet', '--initial-branch=main');
  writeFiles(work, files);
  git(work, 'add', '--all');
  git(work, 'commit', '--quiet', '-m', 'v1');
  if (tag) git(work, 'tag', tag);
  git(root, 'clone', '--quiet', '--bare', work, bare);
  // what hosted servers allow, and a partial clone needs
  git(bare, 'config', 'uploadpack.allowFilter', 'true');
  git(bare, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  git(bare, 'config', 'http.receivepack', 'true');
}

/** Commit `files` onto main of the bare repository `bare` (and tag it). */
function publish(bare: string, files: Readonly<Record<string, string>>, tag?: string): void {
  const work = join(fresh('publish'), 'w');
  git(root, 'clone', '--quiet', bare, work);
  writeFiles(work, files);
  git(work, 'add', '--all');
  git(work, 'commit', '--quiet', '-m', 'publish');
  if (tag) git(work, 'tag', tag);
  git(work, 'push', '--quiet', 'origin', 'main', ...(tag ? [tag] : []));
}

const kptfile = (name: string, upstream?: { repo: string; directory: string; ref: string }) =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n${
    upstream
      ? `upstream:\n  type: git\n  git:\n    repo: ${upstream.repo}\n    directory: ${upstream.directory}\n    ref: ${upstream.ref}\n  updateStrategy: resource-merge\n`
      : ''
  }`;
const configMap = (name: string, v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  v: "${v}"\n`;

/** A control repository: the upstream `catalog`, the downstream `cluster`, one variant `web` of package `pkg`. */
function makeControl(upstream: string, downstream: string, revision = 'v1'): string {
  const control = fresh('control');
  const repository = (name: string, repo: string) =>
    `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  type: git\n  git:\n    repo: ${repo}\n    branch: main\n`;
  writeFiles(join(control, '.kdelta'), {
    'repositories.yaml': `${repository('catalog', upstream)}---\n${repository('cluster', downstream)}`,
    'variant.yaml': `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: web\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: pkg\n    revision: ${revision}\n  downstream:\n    repo: cluster\n    package: web\n`,
  });
  return control;
}

/** A bare downstream repository with a README on main. */
function makeDownstream(): string {
  const bare = join(fresh('downstream'), 'cluster.git');
  makeRepo(bare, { 'README.md': '# cluster\n' });
  return bare;
}

const branches = (bare: string) => git(bare, 'for-each-ref', '--format=%(refname)', 'refs/heads');

let tls: TlsFiles;
beforeAll(() => {
  if (!existsSync(fileURLToPath(new URL('../dist/main.js', import.meta.url)))) {
    throw new Error('packages/cli is not built: run `pnpm build` (pnpm test does) before this test');
  }
  tls = makeCertificate(fresh('tls'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a nested package naming another host gets none of the user’s credentials', () => {
  // `ours` serves the package the user asked for; `foreign` is a host only a nested Kptfile names.
  let ours: RecordingGitServer;
  let foreign: RecordingGitServer;
  let upstream: string;
  let upstreamBare: string;
  let foreignBare: string;
  beforeAll(async () => {
    const oursRoot = fresh('ours');
    const foreignRoot = fresh('foreign');
    ours = await serveRecordingGit(oursRoot, tls);
    foreign = await serveRecordingGit(foreignRoot, tls);
    foreignBare = join(foreignRoot, 'lib.git');
    makeRepo(foreignBare, { 'sub/Kptfile': kptfile('sub'), 'sub/cm.yaml': configMap('lib', '1') });
    upstream = `${ours.origin}/up.git`;
    upstreamBare = join(oursRoot, 'up.git');
    makeRepo(
      upstreamBare,
      {
        'pkg/Kptfile': kptfile('pkg'),
        'pkg/cm.yaml': configMap('app', '1'),
        'pkg/sub/Kptfile': kptfile('sub', { repo: `${foreign.origin}/lib.git`, directory: '/sub', ref: 'main' }),
      },
      'pkg/v1',
    );
  });
  afterAll(async () => {
    await ours?.close();
    await foreign?.close();
  });

  const env = () => ({ KDELTA_GIT_TOKEN: TOKEN, GIT_SSL_CAINFO: tls.cert });

  it('pkg get and pkg update send the token to the package’s own host, never to the nested package’s', async () => {
    const ws = fresh('ws');
    const got = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'app'], env());
    expect(got.stderr).toContain('Fetched');
    expect(got.code).toBe(0);
    expect(readFileSync(join(ws, 'app', 'sub', 'cm.yaml'), 'utf8')).toContain('name: lib');
    expect(ours.authorizations).toContain(`x-access-token:${TOKEN}`);
    expect(foreign.requests()).toBeGreaterThan(0);
    expect(foreign.authorizations).toEqual([]);

    publish(foreignBare, { 'sub/cm.yaml': configMap('lib', '2') });
    const updated = await kdelta(ws, ['pkg', 'update', 'app'], env());
    expect(updated.stderr).toContain('Updated 2 package(s)');
    expect(updated.code).toBe(0);
    expect(readFileSync(join(ws, 'app', 'sub', 'cm.yaml'), 'utf8')).toContain('v: "2"');
    expect(foreign.authorizations).toEqual([]);
  });

  it('a host the user lists in KDELTA_CREDENTIAL_HOSTS gets them', async () => {
    const ws = fresh('ws');
    const listed = { ...env(), KDELTA_CREDENTIAL_HOSTS: foreign.origin.replace('https://', '') };
    const got = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'app'], listed);
    expect(got.code).toBe(0);
    expect(foreign.authorizations).toContain(`x-access-token:${TOKEN}`);
    foreign.authorizations.length = 0;
  });

  it('kdelta run sends the token to the control resources’ hosts only, on the first proposal and after it is merged', async () => {
    const downstream = makeDownstream();
    const control = makeControl(upstream, downstream, 'main');
    const seenByOurs = ours.authorizations.length;
    const first = await kdelta(control, ['run', '--mode', 'variants'], env());
    expect(first.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(first.code).toBe(0);
    expect(ours.authorizations.length).toBeGreaterThan(seenByOurs);
    expect(foreign.authorizations).toEqual([]);

    // the proposal is merged; the nested package's upstream moves; the next run updates from it
    git(downstream, 'branch', '-f', 'main', 'kdelta/web');
    publish(foreignBare, { 'sub/cm.yaml': configMap('lib', '3') });
    publish(upstreamBare, { 'pkg/cm.yaml': configMap('app', '3') });
    const requests = foreign.requests();
    const again = await kdelta(control, ['run', '--mode', 'variants'], env());
    expect(again.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(again.code).toBe(0);
    expect(foreign.requests()).toBeGreaterThan(requests);
    expect(foreign.authorizations).toEqual([]);
  });
});
