import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { memoApplies, rememberUpToDate, upToDateMemo, wasUpToDate, type ContentSettings, type UpToDateKey } from './up-to-date-memo.js';

const settings: ContentSettings = { render: true, allowExec: false, allowedImages: undefined, version: '1.0.0', controlRecord: undefined };
const key: UpToDateKey = {
  change: {
    target: { downstream: 'cluster-01', repo: 'https://user:s3cret@git.example/org/cluster-01.git', head: 'kdelta/web', base: 'main' },
    fingerprint: 'f'.repeat(32),
    kind: 'variant',
    variant: 'web',
    directory: 'web',
  },
  baseCommit: 'b'.repeat(40),
  headCommit: undefined,
};

describe('the up-to-date memo', () => {
  it('answers for exactly the inputs it was found at, and holds no URL', async () => {
    const memo = upToDateMemo(tempDir(), settings);
    expect(await wasUpToDate(memo, key)).toBe(false);
    await rememberUpToDate(memo, key);
    expect(await wasUpToDate(memo, key)).toBe(true);
    // the same repository with other credentials is the same downstream
    const otherCredentials = { ...key.change, target: { ...key.change.target, repo: 'https://git.example/org/cluster-01.git' } };
    expect(await wasUpToDate(memo, { ...key, change: otherCredentials })).toBe(true);
    const text = readFileSync(join(memo.root, 'run-up-to-date', readdirSync(join(memo.root, 'run-up-to-date'))[0]!), 'utf8');
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('git.example');
  });

  it.each<[string, (k: UpToDateKey) => UpToDateKey]>([
    ['the base branch moved', (k) => ({ ...k, baseCommit: 'c'.repeat(40) })],
    ['the proposal branch appeared', (k) => ({ ...k, headCommit: 'h'.repeat(40) })],
    ['another fingerprint (upstream, variant, version)', (k) => ({ ...k, change: { ...k.change, fingerprint: 'e'.repeat(32) } })],
    ['another package directory', (k) => ({ ...k, change: { ...k.change, directory: 'web2' } })],
    ['another base branch', (k) => ({ ...k, change: { ...k.change, target: { ...k.change.target, base: 'prod' } } })],
    ['another repository', (k) => ({ ...k, change: { ...k.change, target: { ...k.change.target, repo: '/repos/cluster-02' } } })],
  ])('is no answer when %s', async (_what, other) => {
    const memo = upToDateMemo(tempDir(), settings);
    await rememberUpToDate(memo, key);
    expect(await wasUpToDate(memo, other(key))).toBe(false);
  });

  it.each<[string, Partial<ContentSettings>]>([
    ['the render is off', { render: false }],
    ['exec functions are allowed', { allowExec: true }],
    ['other images are allowed', { allowedImages: ['*'] }],
    ['another kdelta version', { version: '1.0.1' }],
    ['another control repository is recorded', { controlRecord: 'https://git.example/org/control.git' }],
  ])('is no answer when %s', async (_what, changed) => {
    const root = tempDir();
    await rememberUpToDate(upToDateMemo(root, settings), key);
    expect(await wasUpToDate(upToDateMemo(root, settings), key)).toBe(true);
    expect(await wasUpToDate(upToDateMemo(root, { ...settings, ...changed }), key)).toBe(false);
  });

  it.each(['{"key": ', 'null', '[]', '{"key": 42}', ''])(
    'a corrupt entry (%j) is no answer, and the next write replaces it',
    async (text) => {
      const memo = upToDateMemo(tempDir(), settings);
      await rememberUpToDate(memo, key);
      const dir = join(memo.root, 'run-up-to-date');
      const [file] = readdirSync(dir);
      writeFileSync(join(dir, file!), text);
      expect(await wasUpToDate(memo, key)).toBe(false);
      await rememberUpToDate(memo, key);
      expect(await wasUpToDate(memo, key)).toBe(true);
    },
  );

  it('is written whole: no temporary file is left, and a cache that cannot be written is only a miss', async () => {
    const memo = upToDateMemo(tempDir(), settings);
    await Promise.all(Array.from({ length: 8 }, () => rememberUpToDate(memo, key)));
    expect(readdirSync(join(memo.root, 'run-up-to-date'))).toHaveLength(1);
    expect(await wasUpToDate(memo, key)).toBe(true);

    // a memo directory that is not one (runs as root ignore file modes): nothing can be written
    const broken = tempDir();
    writeFileSync(join(broken, 'run-up-to-date'), 'not a directory');
    const locked = upToDateMemo(broken, settings);
    await expect(rememberUpToDate(locked, key)).resolves.toBeUndefined();
    expect(readdirSync(broken)).toEqual(['run-up-to-date']);
    expect(await wasUpToDate(locked, key)).toBe(false);
  });

  it.each([
    ['variant', true],
    ['update', true],
    ['group', false],
    ['removal', false],
    ['orphan', false],
  ] as const)('answers for a change of kind %s: %s', (kind, applies) => {
    expect(memoApplies({ kind })).toBe(applies);
  });
});
