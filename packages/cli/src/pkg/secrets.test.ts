// No credential given in a repository URL may reach any output, file, lock or cache entry: the
// commands run as a user runs them (the built CLI, its own HOME and TMPDIR) against a real
// git server that refuses every request without the credential.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type AuthGitServer, serveGitWithAuth } from './__fixtures__/auth-git-server.js';
import { parseGetArgs } from './args.js';

const bin = fileURLToPath(new URL('../../bin/kdelta.js', import.meta.url));
const username = 'deploy-bot';
const secret = 'S3cr3t-T0ken@kdelta/42';
const urlSecret = encodeURIComponent(secret); // S3cr3t-T0ken%40kdelta%2F42
/** Every form the secret could be written in. */
const forms = [secret, urlSecret, Buffer.from(`${username}:${secret}`).toString('base64'), Buffer.from(secret).toString('base64')];

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-secrets-')));
const dirs = {
  srv: join(root, 'srv'),
  ws: join(root, 'ws'),
  cache: join(root, 'cache'),
  home: join(root, 'home'),
  tmp: join(root, 'tmp'),
  control: join(root, 'control'),
};
const outputs: string[] = [];
let server: AuthGitServer;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built CLI in its own process, with only PATH and the temporary HOME, TMPDIR and cache. */
function kdelta(...args: string[]): Promise<Run> {
  return kdeltaIn(dirs.ws, ...args);
}

function kdeltaIn(cwd: string, ...args: string[]): Promise<Run> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dirs.home, TMPDIR: dirs.tmp, KDELTA_CACHE_DIR: dirs.cache };
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      outputs.push(stdout, stderr);
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  v: "${v}"\n`;

function commitUpstream(v: string): void {
  const repo = join(dirs.srv, 'repo');
  writeFileSync(join(repo, 'pkg', 'cm.yaml'), cm(v));
  git(repo, 'add', '-A');
  git(repo, 'commit', '--quiet', '-m', `v${v}`);
}

/** Every file (and file name) under `dir` whose bytes hold a form of the secret. */
function leaks(dir: string): string[] {
  const found: string[] = [];
  const walk = (abs: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      const path = join(abs, e.name);
      if (forms.some((f) => e.name.includes(f))) found.push(`${path} (name)`);
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) {
        const bytes = readFileSync(path);
        for (const f of forms) if (bytes.includes(f)) found.push(`${path}: ${f}`);
      }
    }
  };
  walk(dir);
  return found;
}

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL('../../dist/main.js', import.meta.url)))) {
    throw new Error('packages/cli is not built: run `pnpm build` (pnpm test does) before this test');
  }
  for (const d of Object.values(dirs)) mkdirSync(d);
  const repo = join(dirs.srv, 'repo');
  mkdirSync(join(repo, 'pkg'), { recursive: true });
  git(repo, 'init', '--quiet', '--initial-branch=main');
  // what hosted servers allow, and a partial clone needs
  git(repo, 'config', 'uploadpack.allowFilter', 'true');
  git(repo, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  writeFileSync(join(repo, 'pkg', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n');
  commitUpstream('1');
  server = await serveGitWithAuth(dirs.srv, username, secret);
});

afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('credentials in a repository URL', () => {
  it('are used for get, update and diff, and never printed, stored in the Kptfile, the cache or anywhere else', async () => {
    const clean = `${server.origin}/repo`;
    const withSecret = `http://${username}:${urlSecret}@${server.origin.slice('http://'.length)}/repo`;

    // The server really refuses a client without the credential.
    const anonymous = await kdelta('pkg', 'get', `${clean}.git/pkg`, 'anonymous');
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/asked for credentials/);
    expect(server.seen.refused).toBeGreaterThan(0);
    expect(existsSync(join(dirs.ws, 'anonymous'))).toBe(false);

    // get: the credential reaches git (the server answers), the Kptfile records the clean URL.
    const got = await kdelta('pkg', 'get', `${withSecret}.git/pkg`, 'app');
    expect(got.stderr).toContain(`Fetched ${clean}/pkg@main`);
    expect(got.code).toBe(0);
    expect(server.seen.authorized).toBeGreaterThan(0);
    const app = join(dirs.ws, 'app');
    const kptfile = parse(readFileSync(join(app, 'Kptfile'), 'utf8'));
    expect(kptfile.upstream.git.repo).toBe(clean);
    expect(kptfile.upstreamLock.git.repo).toBe(clean);
    expect(parse(readFileSync(join(app, 'cm.yaml'), 'utf8')).data.v).toBe('1');
    const caches = readdirSync(dirs.cache);
    expect(caches).toHaveLength(1);
    const cacheGit = join(dirs.cache, caches[0]!, 'git');
    expect(git(dirs.ws, '--git-dir', cacheGit, 'config', 'remote.origin.url')).toBe(clean);

    // A Kptfile written by an older tool, and a cache made by an older version, with the
    // credential in the URL: used for the fetch, never printed, written back without it.
    kptfile.upstream.git.repo = withSecret;
    kptfile.upstreamLock.git.repo = withSecret;
    writeFileSync(join(app, 'Kptfile'), stringify(kptfile));
    git(dirs.ws, '--git-dir', cacheGit, 'config', 'remote.origin.url', withSecret);
    commitUpstream('2');

    const diff = await kdelta('pkg', 'diff', 'app');
    expect(diff.stderr).toContain(`Fetching upstream from ${clean}@main`);
    expect(diff.stdout).toContain('.data.v: "1" → "2"');
    expect(diff.stdout).not.toContain('.upstream.git.repo');
    expect(diff.code).toBe(0);
    expect(git(dirs.ws, '--git-dir', cacheGit, 'config', 'remote.origin.url')).toBe(clean);

    const updated = await kdelta('pkg', 'update', 'app');
    expect(updated.stderr).toContain(`Fetching origin from ${clean}@main`);
    expect(updated.code).toBe(0);
    expect(parse(readFileSync(join(app, 'cm.yaml'), 'utf8')).data.v).toBe('2');
    const after = parse(readFileSync(join(app, 'Kptfile'), 'utf8'));
    expect([after.upstream.git.repo, after.upstreamLock.git.repo]).toEqual([clean, clean]);

    // Without the credential (it was never stored) the next update fails, says why, changes nothing.
    commitUpstream('3');
    const before = readFileSync(join(app, 'cm.yaml'), 'utf8');
    const refused = await kdelta('pkg', 'update', 'app');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/asked for credentials/);
    expect(readFileSync(join(app, 'cm.yaml'), 'utf8')).toBe(before);

    // Failing fetches with the credential: the URL in the error is the clean one.
    const missing = await kdelta('pkg', 'get', `http://${username}:${urlSecret}@${server.origin.slice(7)}/missing.git/pkg`, 'missing');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`${server.origin}/missing`);
    const noHost = await kdelta('pkg', 'get', `http://${username}:${urlSecret}@127.0.0.1:1/repo.git/pkg`, 'nohost');
    expect(noHost.code).toBe(1);
    expect(noHost.stderr).toContain('http://127.0.0.1:1/repo');
    const badArg = await kdelta('pkg', 'get', `http://${username}:${urlSecret}@127.0.0.1:1/repo`, 'ambiguous');
    expect(badArg.code).toBe(1);
    expect(badArg.stderr).toContain('"http://127.0.0.1:1/repo"');

    // Every byte kdelta wrote or printed.
    expect(outputs.filter((o) => forms.some((f) => o.includes(f)))).toEqual([]);
    expect(outputs.join('')).not.toContain(username);
    for (const dir of [dirs.ws, dirs.cache, dirs.home, dirs.tmp]) expect(leaks(dir)).toEqual([]);
    // nothing was left behind in TMPDIR either
    expect(readdirSync(dirs.tmp)).toEqual([]);
  });

  it('in the Repositories of kdelta run are used, and never printed, reported, proposed, committed or pushed', async () => {
    const host = server.origin.slice('http://'.length);
    const withSecret = (repo: string) => `http://${username}:${urlSecret}@${host}/${repo}`;
    // upstream: package base-ns at tag v1; downstream: a repository with a main branch
    const catalog = join(dirs.srv, 'catalog');
    mkdirSync(join(catalog, 'base-ns'), { recursive: true });
    git(catalog, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(catalog, 'base-ns', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\n');
    writeFileSync(join(catalog, 'base-ns', 'ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n');
    git(catalog, 'add', '-A');
    git(catalog, 'commit', '--quiet', '-m', 'v1');
    git(catalog, 'tag', 'v1');
    const seed = join(root, 'seed');
    mkdirSync(seed);
    git(seed, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(seed, 'README.md'), 'cluster\n');
    git(seed, 'add', '-A');
    git(seed, 'commit', '--quiet', '-m', 'init');
    const cluster = join(dirs.srv, 'cluster.git');
    git(root, 'clone', '--quiet', '--bare', seed, cluster);
    git(cluster, 'config', 'http.receivepack', 'true');
    // a repository that cannot be reached: its warning names it
    const repository = (name: string, repo: string) =>
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  git:\n    repo: ${repo}\n    branch: main\n`;
    mkdirSync(join(dirs.control, '.kdelta'), { recursive: true });
    git(dirs.control, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(
      join(dirs.control, '.kdelta', 'repositories.yaml'),
      [
        repository('catalog', withSecret('catalog')),
        repository('cluster', withSecret('cluster.git')),
        repository('unreachable', `http://${username}:${urlSecret}@127.0.0.1:1/unreachable.git`),
      ].join('---\n'),
    );
    const variant = (name: string, downstream: string) =>
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: v1\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n`;
    writeFileSync(join(dirs.control, '.kdelta', 'web.yaml'), variant('web', 'cluster'));
    writeFileSync(join(dirs.control, '.kdelta', 'api.yaml'), variant('api', 'unreachable'));
    git(dirs.control, 'add', '-A');
    git(dirs.control, 'commit', '--quiet', '-m', 'control');
    const userFiles = new Set([join(dirs.control, '.kdelta', 'repositories.yaml')]);

    const r = await kdeltaIn(dirs.control, 'run', '--mode', 'variants', '--report', 'report.json');
    expect(r.code).toBe(1); // the unreachable repository's variant fails alone
    expect(r.stdout).toMatch(/web\s+cluster\/web\s+proposed/);
    expect(r.stderr).toContain('http://127.0.0.1:1/unreachable.git');
    expect(git(cluster, 'ls-tree', '-r', '--name-only', 'kdelta/web')).toContain('web/ns.yaml');

    const found = [...forms.filter((f) => r.stdout.includes(f) || r.stderr.includes(f)).map((f) => `output: ${f}`)];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.name === '.git' || userFiles.has(path)) continue;
        if (e.isDirectory()) walk(path);
        else for (const f of forms) if (readFileSync(path).includes(f)) found.push(`${path}: ${f}`);
      }
    };
    walk(dirs.control);
    // what was pushed: every commit message and file of the downstream
    const pushed = git(cluster, 'log', '--all', '-p', '--format=%B');
    for (const f of forms) if (pushed.includes(f)) found.push(`pushed to cluster.git: ${f}`);
    expect(found).toEqual([]);
    for (const dir of [dirs.cache, dirs.home, dirs.tmp]) expect(leaks(dir)).toEqual([]);
  });

  it('are split off the pkg get argument before anything else reads it', async () => {
    const unused = () => Promise.reject(new Error('the ref was given'));
    const args = await parseGetArgs([`https://u:${urlSecret}@git.example.com/o/r.git/blueprints/web@v1`, 'web'], {
      cwd: dirs.ws,
      defaultBranch: unused,
    });
    expect(args).toMatchObject({
      repo: 'https://git.example.com/o/r',
      credentials: { username: 'u', password: secret },
      directory: '/blueprints/web',
      ref: 'v1',
      destination: join(dirs.ws, 'web'),
    });
    // ssh keeps its user, which is no credential; a lone user name in https is treated as one
    const ssh = await parseGetArgs(['ssh://git@host/o/r.git/p@v2'], { cwd: dirs.ws, defaultBranch: unused });
    expect([ssh.repo, ssh.credentials]).toEqual(['ssh://git@host/o/r', undefined]);
    const lone = await parseGetArgs([`https://${urlSecret}@host/o/r.git@main`], { cwd: dirs.ws, defaultBranch: unused });
    expect([lone.repo, lone.credentials]).toEqual(['https://host/o/r', { username: secret, password: '' }]);
    const error = await parseGetArgs([`https://u:${urlSecret}@host/o/r`], { cwd: dirs.ws, defaultBranch: unused }).catch((e: Error) => e);
    expect(String(error)).toContain('"https://host/o/r"');
  });
});
