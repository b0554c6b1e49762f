// A Kptfile section upstream deleted keeps kpt's shape after pkg update, on real git repositories.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cli } from './__fixtures__/runner.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-kptfile-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

const KPTFILE = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: up\n';
const GATED = `${KPTFILE}info:\n  readinessGates:\n    - conditionType: foo\nstatus:\n  conditions:\n    - type: foo\n      status: "True"\n      reason: reason\n      message: message\n`;

describe('Kptfile sections emptied by upstream', () => {
  it('keeps `info: {}` and `status: {}` when upstream removed their last entries, as kpt does', async () => {
    const up = join(root, 'upstream');
    mkdirSync(up);
    git(up, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(up, 'Kptfile'), GATED);
    writeFileSync(join(up, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n');
    git(up, 'add', '-A');
    git(up, 'commit', '--quiet', '-m', 'v1');
    git(up, 'tag', 'v1');
    writeFileSync(join(up, 'Kptfile'), KPTFILE);
    git(up, 'commit', '--quiet', '-am', 'v2');
    git(up, 'tag', 'v2');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    git(ws, 'init', '--quiet');
    const env = { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') };
    expect((await cli(['pkg', 'get', `${up}.git@v1`, 'pkg'], ws, env)).code).toBe(0);
    git(ws, 'add', '-A');
    git(ws, 'commit', '--quiet', '-m', 'get');
    const update = await cli(['pkg', 'update', 'pkg@v2'], ws, env);
    expect(update.code, update.stderr).toBe(0);
    const text = readFileSync(join(ws, 'pkg', 'Kptfile'), 'utf8');
    // kpt 1.0.0-beta.56 writes the same two lines at the end of this Kptfile
    expect(text).toMatch(/\ninfo: \{\}\nstatus: \{\}\n$/);
    expect(parse(text).upstreamLock.git.ref).toBe('v2');
  });
});
