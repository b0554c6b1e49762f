import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, packageVariant, repository, tempDir, type Fleet } from '@kdelta/test-support';
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

/** A package on a downstream's base branch owned by `owner`, as a variant's package records it. */
function ownedKptfile(owner: string): string {
  return `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${owner}\n  annotations:\n    config.porch.kpt.dev/package-variant: ${owner}\n`;
}

const gitEnv = {
  GIT_AUTHOR_NAME: 'kdelta',
  GIT_AUTHOR_EMAIL: 'kdelta@noreply.invalid',
  GIT_COMMITTER_NAME: 'kdelta',
  GIT_COMMITTER_EMAIL: 'kdelta@noreply.invalid',
};

/** A fleet of two downstreams, `web` on cluster-01 and `api` on cluster-02, and more control files. */
function fleet(control: Record<string, string> = {}): Fleet {
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
    ...control,
  });
  return f;
}

/** A run on a fresh machine (an empty cache directory), with the git commands it ran. */
async function freshRun(f: Fleet, shard?: string): Promise<{ report: Awaited<ReturnType<typeof run>>; commands: string[] }> {
  const cacheDir = tempDir();
  const trace = join(tempDir(), 'trace');
  const before = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    const env = { ...process.env, ...gitEnv, KDELTA_CACHE_DIR: cacheDir, GIT_TRACE: trace };
    const report = await run({ cwd: f.control, mode: 'variants', cacheDir, env, shard });
    const commands = [...readFileSync(trace, 'utf8').matchAll(/built-in: git (\S+)/g)].map((m) => m[1]!);
    return { report, commands };
  } finally {
    if (before === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = before;
  }
}

/** The dashboard file the local forge keeps for the run, its text and where it is. */
function dashboardFile(f: Fleet): string {
  const dir = join(f.control, '.kdelta', 'proposals');
  const name = readdirSync(dir).find((n) => n.startsWith('dashboard'));
  if (name === undefined) throw new Error('no dashboard was kept');
  return join(dir, name);
}

const firstRun = (f: Fleet, shard?: string) =>
  run({ cwd: f.control, mode: 'variants', cacheDir: tempDir(), env: { ...process.env, ...gitEnv }, shard });

describe('the removal scans kept in the dashboard', () => {
  it('a run on a fresh machine after a run that kept its dashboard clones nothing and finds the same', async () => {
    const f = fleet();
    const first = await firstRun(f);
    expect(first.results.map((r) => r.action)).toEqual(['proposed', 'proposed']);
    const text = readFileSync(dashboardFile(f), 'utf8');
    expect(text).not.toContain(f.downstream('cluster-01'));

    const { report, commands } = await freshRun(f);
    expect(report.results.map((r) => [r.variant, r.action]).sort()).toEqual([
      ['api', 'unchanged'],
      ['web', 'unchanged'],
    ]);
    expect(commands).not.toContain('clone');
    // nothing new: the dashboard is not written again
    expect(readFileSync(dashboardFile(f), 'utf8')).toBe(text);
  });

  it("sharded: each shard's dashboard keeps what its run scanned (every downstream), and no shard clones on a fresh machine", async () => {
    const f = fleet();
    const shards = ['1/2', '2/2'];
    const proposed: string[] = [];
    for (const shard of shards) proposed.push(...(await firstRun(f, shard)).results.map((r) => `${r.variant} ${r.action}`));
    expect(proposed.sort()).toEqual(['api proposed', 'web proposed']);
    const unchanged: string[] = [];
    for (const shard of shards) {
      const { report, commands } = await freshRun(f, shard);
      unchanged.push(...report.results.map((r) => `${r.variant} ${r.action}`));
      expect(commands).not.toContain('clone');
    }
    expect(unchanged.sort()).toEqual(['api unchanged', 'web unchanged']);
  });

  const gone = { 'gone/Kptfile': ownedKptfile('gone') };
  const none: Record<string, string> = {};
  interface Case {
    readonly when: string;
    readonly control: Record<string, string>;
    before(f: Fleet): void;
    after(f: Fleet): void;
    readonly removed: string;
    readonly action: string;
  }
  it.each<Case>([
    {
      when: 'the downstream moved since',
      control: none,
      before: () => {},
      after: (f) => void f.commitAs('cluster-01', 'main', gone),
      removed: 'gone',
      action: 'removal-proposed',
    },
    {
      when: 'the variant set changed since',
      control: { 'extra.yaml': packageVariant('extra', 'cluster-01') },
      before: (f) => void f.commitAs('cluster-01', 'main', { 'old-extra/Kptfile': ownedKptfile('extra') }),
      after: (f) => f.writeControl({ 'extra.yaml': null }),
      removed: 'extra',
      action: 'removal-proposed',
    },
    {
      when: 'the dashboard has no entry for the downstream (it had removals)',
      control: none,
      before: (f) => void f.commitAs('cluster-01', 'main', gone),
      after: () => {},
      removed: 'gone',
      // proposed by the first run already
      action: 'unchanged',
    },
  ])('a removed variant is still found when $when', async ({ control, before, after, removed, action }) => {
    const f = fleet(control);
    before(f);
    await firstRun(f);
    after(f);
    const { report, commands } = await freshRun(f);
    expect(report.results.filter((r) => r.variant === removed && r.downstream.includes('cluster-01')).map((r) => r.action)).toContain(
      action,
    );
    expect(commands).toContain('clone');
  });

  it.each([
    { what: 'cut short', edit: (text: string) => text.replace(/"scans":\{[^\n]*/, '"scans":{"k":') },
    { what: 'with another hash of the variants', edit: (text: string) => text.replace(/"k":"[0-9a-f]{16}"/, `"k":"${'0'.repeat(16)}"`) },
    { what: 'with other commits', edit: (text: string) => text.replace(/":"([0-9a-f]{16})"/g, `":"${'1'.repeat(16)}"`) },
  ])('a data block $what only costs clones', async ({ edit }) => {
    const f = fleet();
    await firstRun(f);
    const file = dashboardFile(f);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('"scans"');
    writeFileSync(file, edit(text));
    const { report, commands } = await freshRun(f);
    expect(report.results.map((r) => [r.variant, r.action]).sort()).toEqual([
      ['api', 'unchanged'],
      ['web', 'unchanged'],
    ]);
    expect(commands).toContain('clone');
  });
});
