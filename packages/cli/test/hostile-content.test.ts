// Hostile inputs: what a package's content or a downstream repository may try against a user who
// runs kdelta with a write token. Each case drives the built CLI in its own process (only PATH,
// a temporary HOME, TMPDIR and cache in its environment) on real git repositories, and a real
// git server over https on 127.0.0.1 for the credential cases.
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

/** A bare repository at `bare` holding `files` on main (`prepare` may add more), tagged `tag` when given. */
function makeRepo(bare: string, files: Readonly<Record<string, string>>, tag?: string, prepare?: (work: string) => void): void {
  const work = fresh('seed');
  git(work, 'init', '--quiet', '--initial-branch=main');
  writeFiles(work, files);
  prepare?.(work);
  git(work, 'add', '--all');
  git(work, 'commit', '--quiet', '-m', 'v1');
  if (tag) git(work, 'tag', tag);
  git(root, 'clone', '--quiet', '--bare', work, bare);
  // what hosted servers allow, and a partial clone needs
  git(bare, 'config', 'uploadpack.allowFilter', 'true');
  git(bare, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  git(bare, 'config', 'http.receivepack', 'true');
}

/** Commit `files` onto main of the bare repository `bare` (`prepare` may change more), and tag it. */
function publish(bare: string, files: Readonly<Record<string, string>>, tag?: string, prepare?: (work: string) => void): void {
  const work = join(fresh('publish'), 'w');
  git(root, 'clone', '--quiet', bare, work);
  writeFiles(work, files);
  prepare?.(work);
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
function makeControl(upstream: string, downstream: string, revision = 'v1', spec = ''): string {
  const control = fresh('control');
  const repository = (name: string, repo: string) =>
    `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  type: git\n  git:\n    repo: ${repo}\n    branch: main\n`;
  writeFiles(join(control, '.kdelta'), {
    'repositories.yaml': `${repository('catalog', upstream)}---\n${repository('cluster', downstream)}`,
    'variant.yaml': `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: web\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: pkg\n    revision: ${revision}\n  downstream:\n    repo: cluster\n    package: web\n${spec}`,
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

describe('a nested package naming a private repository on the same host as the user’s gets none of the user’s credentials', () => {
  // One server: `up.git`, the upstream the user names, and `private.git`, which only a nested
  // Kptfile names and which answers 401 without the token, as a private GitHub repository does.
  let server: RecordingGitServer;
  let upstream: string;
  let privateRepo: string;
  let privateCommit: string;
  beforeAll(async () => {
    const serverRoot = fresh('same-host');
    server = await serveRecordingGit(serverRoot, tls, { paths: ['/private.git'], token: TOKEN });
    makeRepo(join(serverRoot, 'private.git'), { 'sub/Kptfile': kptfile('sub'), 'sub/secret.yaml': configMap('secret', 'org-a-only') });
    privateCommit = git(join(serverRoot, 'private.git'), 'rev-parse', 'main');
    privateRepo = `${server.origin}/private.git`;
    upstream = `${server.origin}/up.git`;
    makeRepo(
      join(serverRoot, 'up.git'),
      {
        'pkg/Kptfile': kptfile('pkg'),
        'pkg/cm.yaml': configMap('app', '1'),
        'pkg/sub/Kptfile': kptfile('sub', { repo: privateRepo, directory: '/sub', ref: 'main' }),
      },
      'pkg/v1',
    );
  });
  afterAll(async () => server?.close());

  const env = () => ({ KDELTA_GIT_TOKEN: TOKEN, GIT_SSL_CAINFO: tls.cert });
  /** The Authorization headers `private.git` was sent since `from` requests. */
  const sentToPrivate = (from = 0) =>
    server.seen
      .slice(from)
      .filter((r) => r.path.startsWith('/private.git/'))
      .map((r) => r.authorization);
  const refusal = (stderr: string) =>
    expect(stderr).toMatch(
      new RegExp(
        `sub/Kptfile: upstream repository "${privateRepo.replace(/[.]/g, '\\.')}" was read without credentials, as package content names it and you did not: if it is private, list it in KDELTA_CREDENTIAL_REPOSITORIES`,
      ),
    );

  it('pkg get fetches it with no credential and fails naming the Kptfile, the repository and the setting; listing it makes it work', async () => {
    const ws = fresh('ws');
    const from = server.seen.length;
    const got = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'app'], env());
    refusal(got.stderr);
    expect(got.code).toBe(1);
    expect(existsSync(join(ws, 'app'))).toBe(false);
    expect(sentToPrivate(from).length).toBeGreaterThan(0);
    expect(sentToPrivate(from)).toEqual(sentToPrivate(from).map(() => undefined));
    expect(server.seen.slice(from).some((r) => /^\/up(\.git)?\//.test(r.path) && r.authorization === `x-access-token:${TOKEN}`)).toBe(true);

    // listed as the user writes it: host, path without `.git`
    for (const listed of [
      `${server.origin.replace('https://', '')}/private`,
      `${server.origin}/PRIVATE.git/`.replace('PRIVATE', 'private'),
    ]) {
      const dir = `app-${listed.length}`;
      const ok = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, dir], { ...env(), KDELTA_CREDENTIAL_REPOSITORIES: listed });
      expect(ok.stderr).toContain('Fetched');
      expect(ok.code).toBe(0);
      expect(readFileSync(join(ws, dir, 'sub', 'secret.yaml'), 'utf8')).toContain('org-a-only');
    }
  });

  it('git’s credential helpers and configured extra headers are off for it', async () => {
    const ws = fresh('ws');
    // what a CI checkout leaves in git's configuration: a header for the whole server, and a helper
    const config = join(fresh('gitconfig'), 'config');
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    writeFileSync(
      config,
      `[http "${server.origin}/"]\n\textraHeader = Authorization: Basic ${basic}\n[credential]\n\thelper = "!f() { echo username=x-access-token; echo password=${TOKEN}; }; f"\n`,
    );
    const from = server.seen.length;
    const got = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'app'], { GIT_SSL_CAINFO: tls.cert, GIT_CONFIG_GLOBAL: config });
    refusal(got.stderr);
    expect(got.code).toBe(1);
    expect(sentToPrivate(from).length).toBeGreaterThan(0);
    expect(sentToPrivate(from)).toEqual(sentToPrivate(from).map(() => undefined));
  });

  it('kdelta run fails the variant, naming the Kptfile, the repository and the setting, and pushes nothing; --credential-repository allows it', async () => {
    const downstream = makeDownstream();
    const control = makeControl(upstream, downstream, 'main');
    const from = server.seen.length;
    const refused = await kdelta(control, ['run', '--mode', 'variants'], env());
    expect(refused.stdout).toMatch(/web\s+cluster\/web\s+failed/);
    refusal(refused.stderr);
    expect(refused.code).toBe(1);
    expect(branches(downstream)).toBe('refs/heads/main');
    expect(sentToPrivate(from)).toEqual(sentToPrivate(from).map(() => undefined));

    const owner = `${server.origin.replace('https://', '')}/*`;
    const allowed = await kdelta(control, ['run', '--mode', 'variants', '--credential-repository', owner], env());
    expect(allowed.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(allowed.code).toBe(0);
    expect(git(downstream, 'show', 'kdelta/web:web/sub/secret.yaml')).toContain('org-a-only');
  });

  it('an adopted copy whose upstreamLock names it: the origin is fetched with no credential, and the variant fails naming that Kptfile field', async () => {
    const downstream = join(fresh('downstream'), 'cluster.git');
    makeRepo(downstream, {
      'web/Kptfile': `${kptfile('web', { repo: upstream, directory: '/pkg', ref: 'main' })}upstreamLock:\n  type: git\n  git:\n    repo: ${privateRepo}\n    directory: /sub\n    ref: main\n    commit: ${privateCommit}\n`,
      'web/cm.yaml': configMap('app', '1'),
    });
    const control = makeControl(upstream, downstream, 'main', '  adoptionPolicy: adoptExisting\n');
    const from = server.seen.length;
    const refused = await kdelta(control, ['run', '--mode', 'variants'], env());
    expect(refused.stdout).toMatch(/web\s+cluster\/web\s+failed/);
    expect(refused.stderr).toContain(`web/Kptfile: upstreamLock.git.repo ${privateRepo}`);
    expect(refused.stderr).toContain('list it in KDELTA_CREDENTIAL_REPOSITORIES');
    expect(refused.code).toBe(1);
    expect(branches(downstream)).toBe('refs/heads/main');
    expect(sentToPrivate(from).length).toBeGreaterThan(0);
    expect(sentToPrivate(from)).toEqual(sentToPrivate(from).map(() => undefined));
  });
});

describe('a nested package naming a repository on this machine', () => {
  // the runner's own files: a repository the user never named
  let secretRepo: string;
  let upstream: string;
  beforeAll(() => {
    secretRepo = join(fresh('runner'), 'secret.git');
    makeRepo(secretRepo, { 'leak/Kptfile': kptfile('leak'), 'leak/token.yaml': configMap('token', 'runner-secret') });
    upstream = join(fresh('up'), 'up.git');
    makeRepo(
      upstream,
      {
        'pkg/Kptfile': kptfile('pkg'),
        'pkg/cm.yaml': configMap('app', '1'),
        'pkg/sub/Kptfile': kptfile('sub', { repo: secretRepo, directory: '/leak', ref: 'main' }),
        'url/Kptfile': kptfile('url'),
        'url/sub/Kptfile': kptfile('sub', { repo: `file://${secretRepo}`, directory: '/leak', ref: 'main' }),
        'plain/Kptfile': kptfile('plain'),
        'plain/cm.yaml': configMap('plain', '1'),
      },
      'pkg/v1',
    );
  });

  it('pkg get refuses it, a path or a file:// URL, naming the Kptfile, and writes nothing', async () => {
    const ws = fresh('ws');
    for (const dir of ['pkg', 'url']) {
      const got = await kdelta(ws, ['pkg', 'get', `${upstream}/${dir}@main`, dir]);
      expect(got.stderr).toMatch(
        new RegExp(`${dir}@main\\): sub/Kptfile: upstream repository "(file://)?${secretRepo}" is on this machine`),
      );
      expect(got.stderr).toContain('KDELTA_ALLOW_LOCAL_UPSTREAMS=1');
      expect(got.code).toBe(1);
      expect(existsSync(join(ws, dir))).toBe(false);
    }
  });

  it('KDELTA_ALLOW_LOCAL_UPSTREAMS=1 or --allow-local-upstreams allows it', async () => {
    const ws = fresh('ws');
    const byEnv = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'a'], { KDELTA_ALLOW_LOCAL_UPSTREAMS: '1' });
    expect(byEnv.code).toBe(0);
    expect(readFileSync(join(ws, 'a', 'sub', 'token.yaml'), 'utf8')).toContain('runner-secret');
    const byFlag = await kdelta(ws, ['pkg', 'get', '--allow-local-upstreams', `${upstream}/url@main`, 'b']);
    expect(byFlag.code).toBe(0);
    expect(existsSync(join(ws, 'b', 'sub', 'token.yaml'))).toBe(true);
  });

  it('pkg update of a package the user got from a local path works; a nested one that upstream adds is refused', async () => {
    const ws = fresh('ws');
    expect((await kdelta(ws, ['pkg', 'get', `${upstream}/plain@main`, 'plain'])).code).toBe(0);
    publish(upstream, { 'plain/cm.yaml': configMap('plain', '2') });
    const updated = await kdelta(ws, ['pkg', 'update', 'plain']);
    expect(updated.code).toBe(0);
    expect(readFileSync(join(ws, 'plain', 'cm.yaml'), 'utf8')).toContain('v: "2"');

    publish(upstream, {
      'plain/cm.yaml': configMap('plain', '3'),
      'plain/sub/Kptfile': kptfile('sub', { repo: secretRepo, directory: '/leak', ref: 'main' }),
    });
    const refused = await kdelta(ws, ['pkg', 'update', 'plain']);
    expect(refused.stderr).toMatch(new RegExp(`plain/sub/Kptfile: upstream repository "${secretRepo}" is on this machine`));
    expect(refused.code).toBe(1);
    expect(readFileSync(join(ws, 'plain', 'cm.yaml'), 'utf8')).toContain('v: "2"');
    expect(existsSync(join(ws, 'plain', 'sub'))).toBe(false);
  });

  it('a nested package the user got into the package themselves is the user’s: its local upstream stays allowed', async () => {
    const ws = fresh('ws');
    const lib = join(fresh('lib'), 'lib.git');
    makeRepo(lib, { 'lib/Kptfile': kptfile('lib'), 'lib/cm.yaml': configMap('lib', '1') });
    const web = join(fresh('web'), 'web.git');
    makeRepo(web, { 'web/Kptfile': kptfile('web'), 'web/cm.yaml': configMap('web', '1') });
    expect((await kdelta(ws, ['pkg', 'get', `${web}/web@main`, 'web'])).code).toBe(0);
    expect((await kdelta(ws, ['pkg', 'get', `${lib}/lib@main`, 'web/lib'])).code).toBe(0);
    publish(lib, { 'lib/cm.yaml': configMap('lib', '2') });
    const updated = await kdelta(ws, ['pkg', 'update', 'web']);
    expect(updated.stderr).toContain('Updated 2 package(s)');
    expect(updated.code).toBe(0);
    expect(readFileSync(join(ws, 'web', 'lib', 'cm.yaml'), 'utf8')).toContain('v: "2"');
  });

  it('kdelta run fails the variant, naming the Kptfile, and pushes nothing; the control resources’ own local repositories stay usable', async () => {
    const downstream = makeDownstream();
    const control = makeControl(upstream, downstream);
    const refused = await kdelta(control, ['run', '--mode', 'variants']);
    expect(refused.stdout).toMatch(/web\s+cluster\/web\s+failed/);
    expect(refused.stderr).toMatch(/sub\/Kptfile: upstream repository ".*secret\.git" is on this machine/);
    expect(refused.code).toBe(1);
    expect(branches(downstream)).toBe('refs/heads/main');

    const allowed = await kdelta(control, ['run', '--mode', 'variants', '--allow-local-upstreams']);
    expect(allowed.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(allowed.code).toBe(0);
  });
});

/** `mode path` of every entry of `branch` under `dir` (`120000 web/link.yaml`), with a symlink's target. */
function entries(bare: string, branch: string, dir: string): string[] {
  return git(bare, 'ls-tree', '-r', branch, '--', dir)
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [meta, path] = line.split('\t') as [string, string];
      const [mode, , sha] = meta.split(' ') as [string, string, string];
      return mode === '120000' ? `${mode} ${path} -> ${git(bare, 'cat-file', 'blob', sha)}` : `${mode} ${path}`;
    });
}

describe('symlinks and file modes', () => {
  let upstream: string;
  let outside: string;
  beforeAll(() => {
    // what lies outside every repository: the runner's files
    outside = fresh('runner-files');
    writeFiles(outside, { Kptfile: kptfile('web'), 'token.yaml': configMap('token', 'runner-secret') });
    upstream = join(fresh('up'), 'up.git');
    makeRepo(
      upstream,
      { 'pkg/Kptfile': kptfile('pkg'), 'pkg/cm.yaml': configMap('app', '1'), 'pkg/fn/run.sh': '#!/bin/sh\ncat\n' },
      'pkg/v1',
      (work) => {
        chmodSync(join(work, 'pkg/fn/run.sh'), 0o755);
        symlinkSync('cm.yaml', join(work, 'pkg/link.yaml'));
        symlinkSync('/etc/hostname', join(work, 'pkg/host'));
      },
    );
  });

  it('pkg get and pkg update keep an executable file executable and a symlink a symlink, never resolved', async () => {
    const ws = fresh('ws');
    expect((await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'app'])).code).toBe(0);
    const mode = (p: string) => statSync(join(ws, 'app', p)).mode & 0o777;
    expect(mode('fn/run.sh') & 0o111).not.toBe(0);
    expect(readlinkSync(join(ws, 'app', 'link.yaml'))).toBe('cm.yaml');
    expect(readlinkSync(join(ws, 'app', 'host'))).toBe('/etc/hostname');
    publish(upstream, { 'pkg/fn/run.sh': '#!/bin/sh\ncat -\n' });
    const updated = await kdelta(ws, ['pkg', 'update', 'app']);
    expect(updated.code).toBe(0);
    expect(readFileSync(join(ws, 'app', 'fn/run.sh'), 'utf8')).toBe('#!/bin/sh\ncat -\n');
    expect(mode('fn/run.sh') & 0o111).not.toBe(0);
  });

  it('kdelta run proposes executable files as 100755 and symlinks as 120000, and keeps a downstream file a human replaced by a symlink', async () => {
    const downstream = makeDownstream();
    const control = makeControl(upstream, downstream, 'main');
    const first = await kdelta(control, ['run', '--mode', 'variants']);
    expect(first.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(first.code).toBe(0);
    expect(entries(downstream, 'kdelta/web', 'web')).toEqual([
      '100644 web/Kptfile',
      '100644 web/cm.yaml',
      '100755 web/fn/run.sh',
      '120000 web/host -> /etc/hostname',
      '120000 web/link.yaml -> cm.yaml',
    ]);

    // merged; a human replaces cm.yaml by a symlink; upstream changes the script
    git(downstream, 'branch', '-f', 'main', 'kdelta/web');
    const human = join(fresh('human'), 'w');
    git(root, 'clone', '--quiet', downstream, human);
    rmSync(join(human, 'web', 'cm.yaml'));
    symlinkSync('../README.md', join(human, 'web', 'cm.yaml'));
    git(human, 'add', '--all');
    git(human, 'commit', '--quiet', '-m', 'cm.yaml is the README now');
    git(human, 'push', '--quiet', 'origin', 'main');
    publish(upstream, { 'pkg/fn/run.sh': '#!/bin/sh\nexec cat -\n' });

    const again = await kdelta(control, ['run', '--mode', 'variants']);
    expect(again.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(again.code).toBe(0);
    expect(entries(downstream, 'kdelta/web', 'web')).toEqual([
      '100644 web/Kptfile',
      '120000 web/cm.yaml -> ../README.md',
      '100755 web/fn/run.sh',
      '120000 web/host -> /etc/hostname',
      '120000 web/link.yaml -> cm.yaml',
    ]);
    expect(git(downstream, 'show', 'kdelta/web:web/fn/run.sh')).toBe('#!/bin/sh\nexec cat -');
  });

  it('kdelta run never follows a downstream package directory that is a symlink out of the repository', async () => {
    const downstream = makeDownstream();
    const human = join(fresh('human'), 'w');
    git(root, 'clone', '--quiet', downstream, human);
    symlinkSync(outside, join(human, 'web'));
    git(human, 'add', '--all');
    git(human, 'commit', '--quiet', '-m', 'web lives elsewhere');
    git(human, 'push', '--quiet', 'origin', 'main');
    const control = makeControl(upstream, downstream, 'main', '  adoptionPolicy: adoptExisting\n');
    const refused = await kdelta(control, ['run', '--mode', 'variants']);
    expect(refused.stdout).toMatch(/web\s+cluster\/web\s+failed/);
    expect(refused.stderr).toMatch(
      /web in .*cluster\.git: the package directory is a symlink \(to .*runner-files\): kdelta never follows a symlink/,
    );
    expect(refused.code).toBe(1);
    expect(branches(downstream)).toBe('refs/heads/main');
    expect(readFileSync(join(outside, 'token.yaml'), 'utf8')).toContain('runner-secret');
  });
});

describe('a server token goes to its own server’s named repositories only', () => {
  // `ghes` holds the private upstream the control resources name, and a private repository only a
  // nested Kptfile names; `other` is another server, which a nested Kptfile names too.
  const GHES_TOKEN = 'kdelta-ghes-token-7c2d';
  const OTHER_TOKEN = 'kdelta-other-token-9b4f';
  let ghes: RecordingGitServer;
  let other: RecordingGitServer;
  let upstream: string;
  beforeAll(async () => {
    const ghesRoot = fresh('ghes');
    const otherRoot = fresh('other');
    ghes = await serveRecordingGit(ghesRoot, tls, { paths: ['/up.git'], token: GHES_TOKEN });
    other = await serveRecordingGit(otherRoot, tls);
    makeRepo(join(otherRoot, 'lib.git'), { 'sub/Kptfile': kptfile('sub'), 'sub/cm.yaml': configMap('lib', '1') });
    makeRepo(join(ghesRoot, 'side.git'), { 'side/Kptfile': kptfile('side'), 'side/cm.yaml': configMap('side', '1') });
    upstream = `${ghes.origin}/up.git`;
    makeRepo(
      join(ghesRoot, 'up.git'),
      {
        'pkg/Kptfile': kptfile('pkg'),
        'pkg/cm.yaml': configMap('app', '1'),
        'pkg/sub/Kptfile': kptfile('sub', { repo: `${other.origin}/lib.git`, directory: '/sub', ref: 'main' }),
        'pkg/side/Kptfile': kptfile('side', { repo: `${ghes.origin}/side.git`, directory: '/side', ref: 'main' }),
      },
      'pkg/v1',
    );
  });
  afterAll(async () => {
    await ghes?.close();
    await other?.close();
  });

  it('kdelta run reads the private upstream with its server’s token, another server’s listed repository with that server’s, and a repository only content names with none', async () => {
    const downstream = makeDownstream();
    const control = makeControl(upstream, downstream, 'main');
    const unused = 'https://127.0.0.1:1';
    const flags = [
      `--server-token=${ghes.origin}=${GHES_TOKEN}`,
      `--server-token=${other.origin}=${OTHER_TOKEN}`,
      `--server-token=${unused}=unused-token`,
      `--credential-repository=${other.origin}/lib`,
    ];
    const r = await kdelta(control, ['run', '--mode', 'variants', ...flags], { GIT_SSL_CAINFO: tls.cert });
    expect(r.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(r.code).toBe(0);
    expect(git(downstream, 'show', 'kdelta/web:web/sub/cm.yaml')).toContain('name: lib');
    // the named upstream got its server's token, and no server got another's
    expect(ghes.seen.filter((s) => s.path.startsWith('/up.git')).map((s) => s.authorization)).toContain(`x-access-token:${GHES_TOKEN}`);
    expect(new Set(ghes.authorizations)).toEqual(new Set([`x-access-token:${GHES_TOKEN}`]));
    expect(new Set(other.authorizations)).toEqual(new Set([`x-access-token:${OTHER_TOKEN}`]));
    // a repository of the same server that only a Kptfile names: none
    const side = ghes.seen.filter((s) => s.path.startsWith('/side.git'));
    expect(side.length).toBeGreaterThan(0);
    expect(side.map((s) => s.authorization)).toEqual(side.map(() => undefined));
    expect(r.stderr).toContain(`warning: server-tokens: a token is given for ${unused}, and no Repository`);
    for (const token of [GHES_TOKEN, OTHER_TOKEN, 'unused-token']) expect(`${r.stdout}${r.stderr}`).not.toContain(token);
    other.authorizations.length = 0;
  });

  it('pkg get takes KDELTA_SERVER_TOKENS on the same terms', async () => {
    const ws = fresh('ws');
    const before = other.requests();
    const env = { GIT_SSL_CAINFO: tls.cert, KDELTA_SERVER_TOKENS: `${ghes.origin}=${GHES_TOKEN}\n${other.origin}=${OTHER_TOKEN}` };
    const got = await kdelta(ws, ['pkg', 'get', `${upstream}/pkg@main`, 'app'], env);
    expect(got.code).toBe(0);
    expect(readFileSync(join(ws, 'app', 'sub', 'cm.yaml'), 'utf8')).toContain('name: lib');
    expect(other.requests()).toBeGreaterThan(before);
    expect(other.authorizations).toEqual([]);
  });
});
