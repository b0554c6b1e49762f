import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forgeSuite } from './forge-suite.js';
import { createLocalForge } from './local.js';

const root = mkdtempSync(join(tmpdir(), 'kdelta-forge-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

forgeSuite('local', async () => createLocalForge({ dir: join(root, `suite-${++n}`) }));

describe('local forge records', () => {
  it('writes <downstream>/<variant>.md: a YAML header over the body', async () => {
    const dir = join(root, 'records');
    const forge = createLocalForge({ dir, displayRoot: root });
    const { proposal } = await forge.upsert({
      downstream: 'cluster-01',
      repo: '/r.git',
      head: 'kdelta/web',
      base: 'main',
      title: 'kdelta: add web',
      body: '## Hello\n',
      fingerprint: 'abc',
    });
    const file = join(dir, 'cluster-01', 'web.md');
    expect(proposal.url).toBe('records/cluster-01/web.md');
    expect(readFileSync(file, 'utf8')).toBe(
      '---\ntitle: "kdelta: add web"\nhead: kdelta/web\nbase: main\nstate: open\nfingerprint: abc\ndownstream: cluster-01\nrepo: /r.git\n---\n\n## Hello\n',
    );
    const mtime = statSync(file).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    await forge.upsert({
      downstream: 'cluster-01',
      repo: '/r.git',
      head: 'kdelta/web',
      base: 'main',
      title: 'kdelta: add web',
      body: '## Hello\n',
      fingerprint: 'abc',
    });
    expect(statSync(file).mtimeMs).toBe(mtime);
  });

  it('refuses names that are not plain file names, and reports a broken record with its path', async () => {
    const forge = createLocalForge({ dir: join(root, 'bad') });
    await expect(forge.find({ downstream: '../x', repo: '', head: 'kdelta/a', base: 'main' })).rejects.toThrow(
      /downstream "\.\.\/x" cannot name a file/,
    );
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(join(root, 'bad', 'c1'), { recursive: true });
    writeFileSync(join(root, 'bad', 'c1', 'v.md'), 'no header\n');
    await expect(forge.list()).rejects.toThrow(/c1\/v\.md: not a kdelta proposal record/);
    // errors a caller can tell apart by code, as every package's errors
    await expect(forge.find({ downstream: '../x', repo: '', head: 'kdelta/a', base: 'main' })).rejects.toMatchObject({
      name: 'ForgeError',
      code: 'invalid-name',
    });
    await expect(forge.list()).rejects.toMatchObject({ name: 'ForgeError', code: 'invalid-proposal-record' });
  });
});
