// Where `pkg get` puts a package (kpt's rules, tried on kpt 1.0.0-beta.56), that it never writes into
// or over an existing directory, and that no command leaves work directories where users commit.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from './__fixtures__/runner.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-dest-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' });
}

const env = { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') };
const run = (cwd: string, ...args: string[]) => cli(args, cwd, env);

/** Upstream with package `web` (a ConfigMap named cm.yaml, as a user's file may be) at v1 and v2. */
const up = join(root, 'upstream');
mkdirSync(join(up, 'web'), { recursive: true });
git(up, 'init', '--quiet', '--initial-branch=main');
writeFileSync(join(up, 'web', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n');
writeFileSync(join(up, 'web', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: "1"\n');
git(up, 'add', '-A');
git(up, 'commit', '--quiet', '-m', 'v1');
const source = `${up}.git/web`;

let n = 0;
function workspace(): string {
  const ws = join(root, `ws${n++}`);
  mkdirSync(ws);
  return ws;
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(abs, e.name), r);
      else out[r] = readFileSync(join(abs, e.name), 'utf8');
    }
  };
  walk(dir, '');
  return out;
}

describe('pkg get destinations', () => {
  it('`.` in a directory with files of the same names: the package goes into ./web and nothing there is touched', async () => {
    const ws = workspace();
    writeFileSync(join(ws, 'cm.yaml'), 'mine\n');
    writeFileSync(join(ws, 'Kptfile'), 'mine too\n');
    const r = await run(ws, 'pkg', 'get', source, '.');
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(ws, 'cm.yaml'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(ws, 'Kptfile'), 'utf8')).toBe('mine too\n');
    expect(readFileSync(join(ws, 'web', 'cm.yaml'), 'utf8')).toContain('name: web');
    expect(readdirSync(ws).sort()).toEqual(['Kptfile', 'cm.yaml', 'web']);
  });

  it('an existing target gets target/web; a second get there is refused, naming it, and writes nothing', async () => {
    const ws = workspace();
    mkdirSync(join(ws, 'target'));
    const first = await run(ws, 'pkg', 'get', source, 'target');
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(join(ws, 'target', 'web', 'cm.yaml'), 'edited locally\n');
    const before = snapshot(ws);
    const second = await run(ws, 'pkg', 'get', source, 'target');
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('destination directory "target/web" already exists');
    expect(snapshot(ws)).toEqual(before);
  });

  it('a destination that exists is refused too, even when empty of a Kptfile', async () => {
    const ws = workspace();
    mkdirSync(join(ws, 'web'));
    writeFileSync(join(ws, 'web', 'cm.yaml'), 'mine\n');
    const r = await run(ws, 'pkg', 'get', source);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('destination directory "web" already exists');
    expect(snapshot(ws)).toEqual({ 'web/cm.yaml': 'mine\n' });
  });

  it('missing parent directories are created, as git clone does', async () => {
    const ws = workspace();
    const r = await run(ws, 'pkg', 'get', source, 'a/b/c');
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(ws, 'a', 'b', 'c', 'Kptfile'), 'utf8')).toContain('name: c');
  });

  it('a get that fails creates no parent directory', async () => {
    const ws = workspace();
    const r = await run(ws, 'pkg', 'get', `${source}@no-such-ref`, 'a/b/c');
    expect(r.code).toBe(1);
    expect(readdirSync(ws)).toEqual([]);
  });

  it('a destination below a file is refused before anything is fetched', async () => {
    const ws = workspace();
    writeFileSync(join(ws, 'file'), 'x\n');
    const r = await run(ws, 'pkg', 'get', source, 'file/pkg');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not a directory');
    expect(readdirSync(ws)).toEqual(['file']);
  });
});

describe('work directories', () => {
  it('in a git work tree, get and update leave nothing `git add -A` would take, and no work directory', async () => {
    const ws = workspace();
    git(ws, 'init', '--quiet');
    expect((await run(ws, 'pkg', 'get', source, 'web')).code).toBe(0);
    git(ws, 'add', '-A');
    git(ws, 'commit', '--quiet', '-m', 'get');
    writeFileSync(join(up, 'web', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: "2"\n');
    git(up, 'commit', '--quiet', '-am', 'v2');
    const r = await run(ws, 'pkg', 'update', 'web');
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(ws, 'web', 'cm.yaml'), 'utf8')).toContain('v: "2"');
    expect(git(ws, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean)).toEqual([
      ' M web/Kptfile',
      ' M web/cm.yaml',
    ]);
    expect(readdirSync(join(ws, '.git', 'kdelta'))).toEqual([]);
  });
});
