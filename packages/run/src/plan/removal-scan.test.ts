import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, packageVariant, repository, tempDir } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Removal } from '../jobs/removal.js';
import { type RemovalScanKey, storedRemovals, storeRemovals } from './removal-scan.js';
import { run } from '../run.js';

const key: RemovalScanKey = {
  repository: 'cluster-01',
  url: 'https://user:s3cret@git.example/org/cluster-01.git',
  branch: 'main',
  directory: 'apps',
  commit: 'a'.repeat(40),
  variants: new Set(['web', 'api']),
  control: 'control-1',
  version: '1.0.0',
};
const removal: Removal = {
  variant: 'old',
  repository: 'cluster-01',
  url: key.url,
  branch: 'main',
  directory: 'apps/old',
  policy: 'orphan',
};

describe('the removals kept between runs', () => {
  it('are read back for the same commit, variants, control repository and version only, and hold no URL', async () => {
    const cache = tempDir();
    await storeRemovals(cache, key, [removal]);
    expect(await storedRemovals(cache, key)).toEqual([removal]);
    expect(await storedRemovals(cache, { ...key, variants: new Set(['api', 'web']) })).toEqual([removal]);
    expect(await storedRemovals(cache, { ...key, commit: 'b'.repeat(40) })).toBeUndefined();
    expect(await storedRemovals(cache, { ...key, variants: new Set(['web']) })).toBeUndefined();
    expect(await storedRemovals(cache, { ...key, control: undefined })).toBeUndefined();
    expect(await storedRemovals(cache, { ...key, version: '1.0.1' })).toBeUndefined();
    const [dir] = readdirSync(cache);
    const [file] = readdirSync(join(cache, dir!));
    const text = readFileSync(join(cache, dir!, file!), 'utf8');
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('git.example');
  });

  it('an unreadable file is no answer: the downstream is scanned again', async () => {
    const cache = tempDir();
    await storeRemovals(cache, key, []);
    const [dir] = readdirSync(cache);
    const [file] = readdirSync(join(cache, dir!));
    writeFileSync(join(cache, dir!, file!), '{"key": ');
    expect(await storedRemovals(cache, key)).toBeUndefined();
  });
});

describe('a run with nothing new', () => {
  it('asks each downstream for its branches and clones none', async () => {
    const f = createFleet(['cluster-01', 'cluster-02']);
    onTestFinished(() => f.cleanup());
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('cluster-01', f.downstream('cluster-01')),
        repository('cluster-02', f.downstream('cluster-02')),
      ].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-02'),
    });
    const cacheDir = tempDir();
    const env = {
      ...process.env,
      KDELTA_CACHE_DIR: cacheDir,
      GIT_AUTHOR_NAME: 'kdelta',
      GIT_AUTHOR_EMAIL: 'kdelta@noreply.invalid',
      GIT_COMMITTER_NAME: 'kdelta',
      GIT_COMMITTER_EMAIL: 'kdelta@noreply.invalid',
    };
    const first = await run({ cwd: f.control, mode: 'variants', cacheDir, env });
    expect(first.results.map((r) => r.action)).toEqual(['proposed', 'proposed']);
    const refs = [f.refs('cluster-01'), f.refs('cluster-02')];

    // every git process of the second run writes what it runs to the trace
    const trace = join(tempDir(), 'trace');
    const before = process.env.GIT_TRACE;
    process.env.GIT_TRACE = trace;
    try {
      const second = await run({ cwd: f.control, mode: 'variants', cacheDir, env: { ...env, GIT_TRACE: trace } });
      expect(second.results.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    } finally {
      if (before === undefined) delete process.env.GIT_TRACE;
      else process.env.GIT_TRACE = before;
    }
    const commands = [...readFileSync(trace, 'utf8').matchAll(/built-in: git (\S+)/g)].map((m) => m[1]);
    expect(commands).not.toContain('clone');
    // at most one look-up per repository (the upstream and the two downstreams); none when their refs are read from their files
    expect(commands.filter((c) => c === 'ls-remote').length).toBeLessThanOrEqual(3);
    expect([f.refs('cluster-01'), f.refs('cluster-02')]).toEqual(refs);
  });
});
