import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
    const forge = createLocalForge({ dir, displayRoot: root, now: () => new Date('2026-03-02T10:00:00Z') });
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
      '---\ntitle: "kdelta: add web"\nhead: kdelta/web\nbase: main\nstate: open\nfingerprint: abc\ndownstream: cluster-01\nrepo: /r.git\ncreatedAt: 2026-03-02T10:00:00.000Z\n---\n\n## Hello\n',
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
    const { mkdirSync } = await import('node:fs');
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

  it('lists many records in order, and a record a person edits between two reads is read again', async () => {
    const dir = join(root, 'many');
    const forge = createLocalForge({ dir });
    // more records than list() reads at the same time, over several downstreams
    const targets = Array.from({ length: 70 }, (_, i) => ({
      downstream: `cluster-${String(i % 7).padStart(2, '0')}`,
      repo: '/r.git',
      head: `kdelta/web-${String(i).padStart(2, '0')}`,
      base: 'main',
    }));
    for (const t of [...targets].reverse()) await forge.upsert({ ...t, title: `kdelta: ${t.head}`, body: 'v1\n', fingerprint: 'one' });
    const listed = await forge.list();
    const order = (t: { downstream: string; head: string }) => `${t.downstream} ${t.head}`;
    expect(listed.map(order)).toEqual(targets.map(order).sort());
    const first = targets[0]!;
    const file = join(dir, first.downstream, 'web-00.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('fingerprint: one', 'fingerprint: two').replace('v1\n', 'edited\n'));
    expect(await forge.find(first)).toMatchObject({ fingerprint: 'two', body: 'edited\n' });
    expect((await forge.list()).find((p) => p.head === first.head)).toMatchObject({ fingerprint: 'two', body: 'edited\n' });
  });
});
