import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { commands } from './commands/index.js';
import { main } from './main.js';

// The messages a user reads, through the CLI on real directories and git repositories.

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-messages-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

async function run(cwd: string, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd,
    env: { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') },
  });
  return { code, stdout, stderr };
}

const deploy = (replicas: number) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1\n`;

/** Upstream package `web` (deployment.yaml) at v1 (1 replica) and v2 (2 replicas); a workspace that got v1 and scaled to 3. */
async function scaledLocally(name: string) {
  const up = join(root, name, 'upstream');
  mkdirSync(join(up, 'web'), { recursive: true });
  git(up, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(up, 'web', 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n');
  writeFileSync(join(up, 'web', 'deployment.yaml'), deploy(1));
  git(up, 'add', '-A');
  git(up, 'commit', '--quiet', '-m', 'v1');
  git(up, 'tag', 'v1');
  writeFileSync(join(up, 'web', 'deployment.yaml'), deploy(2));
  git(up, 'commit', '--quiet', '-am', 'v2');
  git(up, 'tag', 'v2');
  const ws = join(root, name, 'ws');
  mkdirSync(ws);
  expect((await run(ws, 'pkg', 'get', `${up}.git/web@v1`, 'web')).code).toBe(0);
  const file = join(ws, 'web', 'deployment.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('replicas: 1', 'replicas: 3'));
  return { up, ws };
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out[join(e.parentPath, e.name)] = readFileSync(join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

const line = 'apps/Deployment web [web/deployment.yaml]: local changed .spec.replicas 1→3, upstream 1→2; upstream wins';

describe('conflict lines', () => {
  it('pkg update names the resource and its file, the change of each side and the winner', async () => {
    const { ws } = await scaledLocally('update');
    const r = await run(ws, 'pkg', 'update', 'web@v2');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`1 conflict between local and upstream changes:\n  ${line}\n`);
  });

  it('pkg diff prints the same line, writes nothing and says so', async () => {
    const { ws } = await scaledLocally('diff');
    const before = snapshot(join(ws, 'web'));
    const r = await run(ws, 'pkg', 'diff', 'web@v2');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`! conflict: ${line}\n`);
    expect(r.stderr).not.toMatch(/Updated \d+ package/);
    expect(r.stderr).toContain('Nothing written: "web" is as it was');
    expect(snapshot(join(ws, 'web'))).toEqual(before);
  });

  it('merge3 prints them in the same format; with --on-conflict fail the error comes first and nobody "wins"', async () => {
    const dir = join(root, 'merge3');
    for (const [side, n] of [
      ['o', 1],
      ['u', 2],
      ['l', 3],
    ] as const) {
      mkdirSync(join(dir, side), { recursive: true });
      writeFileSync(join(dir, side, 'deployment.yaml'), deploy(n));
    }
    const args = ['merge3', '--original', 'o', '--updated', 'u', '--local', 'l'];
    const merged = await run(dir, ...args);
    expect(merged.code).toBe(0);
    expect(merged.stderr).toBe(`1 conflict between local and upstream changes:\n  ${line.replace('web/', '')}\n`);
    const failed = await run(dir, ...args, '--on-conflict', 'fail', '--output', 'out');
    expect(failed.code).toBe(3);
    expect(failed.stderr.split('\n')).toEqual([
      'kdelta merge3: 1 conflict between local and upstream changes; nothing written (--on-conflict fail):',
      '  apps/Deployment web [deployment.yaml]: local changed .spec.replicas 1→3, upstream 1→2',
      '',
    ]);
    expect(readdirSync(dir).sort()).toEqual(['l', 'o', 'u']);
  });
});

describe('failures', () => {
  it('the first line on stderr is the error itself (pkg diff, pkg update, pkg get)', async () => {
    const { up, ws } = await scaledLocally('failure');
    const before = snapshot(join(ws, 'web'));
    for (const args of [
      ['pkg', 'diff', 'web@no-such-ref'],
      ['pkg', 'update', 'web@no-such-ref'],
      ['pkg', 'get', `${up}.git/web@no-such-ref`, 'other'],
    ]) {
      const r = await run(ws, ...args);
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^kdelta ${args[0]} ${args[1]}: .*no-such-ref`));
      expect(r.stdout).toBe('');
    }
    expect(snapshot(join(ws, 'web'))).toEqual(before);
    expect(readdirSync(ws)).toEqual(['web']);
  });
});

describe('the Kptfile pkg get writes', () => {
  it('has upstream and upstreamLock right after metadata, as kpt writes them', async () => {
    const up = join(root, 'order', 'upstream');
    mkdirSync(join(up, 'pkg'), { recursive: true });
    git(up, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(
      join(up, 'pkg', 'Kptfile'),
      'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\ninfo:\n  description: a package\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n',
    );
    git(up, 'add', '-A');
    git(up, 'commit', '--quiet', '-m', 'v1');
    const ws = join(root, 'order', 'ws');
    mkdirSync(ws);
    expect((await run(ws, 'pkg', 'get', `${up}.git/pkg@main`, 'app')).code).toBe(0);
    const keys = (text: string) => Object.keys(parseDocument(text).toJS() as object);
    const order = ['apiVersion', 'kind', 'metadata', 'upstream', 'upstreamLock', 'info', 'pipeline'];
    expect(keys(readFileSync(join(ws, 'app', 'Kptfile'), 'utf8'))).toEqual(order);
    const kpt = spawnSync('kpt', ['pkg', 'get', `${up}.git/pkg@main`, 'viaKpt'], {
      cwd: ws,
      env: { ...process.env, KPT_CACHE_DIR: join(root, 'kpt-cache') },
    });
    if (kpt.status === 0) expect(keys(readFileSync(join(ws, 'viaKpt', 'Kptfile'), 'utf8'))).toEqual(order);
  });
});

describe('commands and help', () => {
  it("docs/commands.md's command list is each command's usage from --help, in the CLI's order", async () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'commands.md'), 'utf8');
    const block = /^# Commands\n[\s\S]*?\n```\n([\s\S]*?)```/.exec(doc)![1]!;
    const usages: string[] = [];
    for (const c of commands) {
      const r = await run(root, ...c.path, '--help');
      expect(r.code).toBe(0);
      const usage = /^Usage: ([\s\S]*?)\n\n/m.exec(r.stdout)?.[1];
      expect(usage, `kdelta ${c.path.join(' ')} --help has a Usage line`).toBeDefined();
      usages.push(`${usage}\n`);
    }
    expect(block).toBe(usages.join(''));
  });

  it('`kdelta pkg` alone lists the pkg commands on stderr and exits 1; with --help it succeeds', async () => {
    const alone = await run(root, 'pkg');
    expect(alone.code).toBe(1);
    expect(alone.stdout).toBe('');
    expect(alone.stderr.split('\n')[0]).toBe('kdelta pkg: a subcommand is required');
    for (const name of ['pkg get', 'pkg update', 'pkg diff']) expect(alone.stderr).toContain(`  ${name} `);
    const help = await run(root, 'pkg', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('  pkg update ');
  });
});

describe('test output', () => {
  it('has no colour codes and no git warnings when it goes to a file', () => {
    // `pnpm test` runs vitest through scripts/colour-for-tty.mjs; here one git-heavy test file
    // runs that way with its output piped.
    const env = { ...process.env };
    delete env.FORCE_COLOR;
    delete env.NO_COLOR;
    const vitest = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
    const r = spawnSync(
      process.execPath,
      [join(repoRoot, 'scripts', 'colour-for-tty.mjs'), process.execPath, vitest, 'run', 'packages/git-source/src/write.test.ts'],
      {
        cwd: repoRoot,
        env: { ...env, TERM: 'xterm-256color' },
        encoding: 'utf8',
      },
    );
    const output = r.stdout + r.stderr;
    expect(r.status, output).toBe(0);
    expect(output).toContain('passed');
    expect(output).not.toContain('\x1b[');
    expect(output).not.toMatch(/warning|re-init/i);
  });

  it('keeps colour when the caller asks for it (FORCE_COLOR)', () => {
    const noColourSeen = (extra: Record<string, string>) => {
      const env: Record<string, string | undefined> = { ...process.env, ...extra };
      delete env.NO_COLOR;
      if (!('FORCE_COLOR' in extra)) delete env.FORCE_COLOR;
      const script = join(repoRoot, 'scripts', 'colour-for-tty.mjs');
      return spawnSync(process.execPath, [script, process.execPath, '-e', 'console.log(process.env.NO_COLOR ?? "unset")'], {
        env,
        encoding: 'utf8',
      }).stdout;
    };
    expect(noColourSeen({ FORCE_COLOR: '1' })).toBe('unset\n');
    expect(noColourSeen({})).toBe('1\n');
  });
});
