import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { git, gitEnv, tempDir, writeTree } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { mirrorHeads, type Mirror } from '../propose/workspace.js';
import { DOWNSTREAM_POLICY_MAX_BYTES } from './downstream-policy.js';
import { readDownstream, type DownstreamReadInput } from './downstream-state.js';

// A downstream repository on disk: packages merged into main by merge commits, as a forge's
// merge button makes them, and a cluster team's file.

const LOCK_A = 'a'.repeat(40);
const LOCK_B = 'b'.repeat(40);

function kptfile(name: string, ref: string, commit: string): string {
  return `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\nupstreamLock:\n  type: git\n  git:\n    repo: https://example.invalid/blueprints\n    directory: basens\n    ref: ${ref}\n    commit: ${commit}\n`;
}

/** Commit `files` on a branch off main and merge it with a merge commit at `date`. */
function mergeIn(work: string, branch: string, files: Record<string, string>, date: string): string {
  const at = { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  git(work, 'checkout', '-q', '-b', branch, 'main');
  writeTree(work, files);
  git(work, 'add', '-A');
  execWithDate(work, at, 'commit', '-q', '-m', `update ${branch}`);
  git(work, 'checkout', '-q', 'main');
  execWithDate(work, at, 'merge', '-q', '--no-ff', '-m', `merge ${branch}`, branch);
  return git(work, 'rev-parse', 'HEAD');
}

function execWithDate(cwd: string, env: Record<string, string>, ...args: string[]): void {
  // the committer date of a merge is the merge's moment: what a soak time counts from
  execFileSync('git', args, { cwd, env: { ...gitEnv, ...env } });
}

function downstream(): { work: string; bare: string; mirror: Mirror } {
  const root = tempDir();
  const work = join(root, 'work');
  git(root, 'init', '-q', '-b', 'main', work);
  writeTree(work, { 'README.md': 'cluster\n' });
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'init');
  mergeIn(work, 'add-web', { 'apps/web/Kptfile': kptfile('web', 'v1.4.0', LOCK_A) }, '2026-11-01T10:00:00Z');
  mergeIn(work, 'add-api', { 'apps/api/Kptfile': kptfile('api', 'v1.4.0', LOCK_A) }, '2026-11-02T10:00:00Z');
  mergeIn(work, 'web-v1.5', { 'apps/web/Kptfile': kptfile('web', 'v1.5.0', LOCK_B) }, '2026-11-20T08:30:00Z');
  // a later edit of web's Kptfile that keeps its lock: not the merge that brought it
  mergeIn(
    work,
    'web-label',
    { 'apps/web/Kptfile': `${kptfile('web', 'v1.5.0', LOCK_B)}info:\n  description: web\n` },
    '2026-11-25T09:00:00Z',
  );
  mergeIn(work, 'team', { '.kdelta/downstream-policy.yaml': 'kind: DownstreamPolicy\n' }, '2026-11-26T09:00:00Z');
  const bare = join(root, 'cluster.git');
  git(root, 'clone', '-q', '--bare', work, bare);
  return { work, bare, mirror: { dir: bare, heads: new Map() } };
}

async function input(d: { bare: string }, more: Partial<DownstreamReadInput> = {}): Promise<DownstreamReadInput & { mirrors: number }> {
  const heads = await mirrorHeads(d.bare);
  const counted = {
    url: d.bare,
    branch: 'main',
    commit: heads.get('main')!,
    directories: ['apps/web', 'apps/api', 'apps/new'],
    mergedAt: true,
    version: '1.0.0',
    cacheRoot: tempDir(),
    mirrors: 0,
    mirror: async () => {
      counted.mirrors++;
      return { dir: d.bare, heads };
    },
    ...more,
  };
  return counted;
}

describe('the state of a downstream for the policies', () => {
  it("reads each package's lock, when the base took it (the merge), and the team's file", async () => {
    const d = downstream();
    const read = await readDownstream(await input(d));
    const base = git(d.bare, 'rev-parse', 'main');
    expect(read.baseCommit).toBe(base);
    expect(read.states.get('apps/web')).toEqual({
      baseCommit: base,
      ref: 'v1.5.0',
      commit: LOCK_B,
      mergedAt: new Date('2026-11-20T08:30:00Z'),
    });
    expect(read.states.get('apps/api')).toEqual({
      baseCommit: base,
      ref: 'v1.4.0',
      commit: LOCK_A,
      mergedAt: new Date('2026-11-02T10:00:00Z'),
    });
    // a package the base does not have yet
    expect(read.states.get('apps/new')).toEqual({ baseCommit: base });
    expect(read.team).toEqual({ text: 'kind: DownstreamPolicy\n' });
  });

  it('keeps the answer by commit: a second run reads the kept file and asks for no mirror; a moved branch is read again', async () => {
    const d = downstream();
    const first = await input(d);
    const read = await readDownstream(first);
    expect(first.mirrors).toBe(1);
    const second = await input(d, { cacheRoot: first.cacheRoot });
    expect(await readDownstream(second)).toEqual(read);
    expect(second.mirrors).toBe(0);
    const [dir] = readdirSync(first.cacheRoot);
    const [file] = readdirSync(join(first.cacheRoot, dir!));
    expect(readFileSync(join(first.cacheRoot, dir!, file!), 'utf8')).not.toContain(d.bare);
    // the branch moves: read again
    mergeIn(d.work, 'api-v1.5', { 'apps/api/Kptfile': kptfile('api', 'v1.5.0', LOCK_B) }, '2026-11-28T10:00:00Z');
    git(d.work, 'push', '-q', d.bare, 'main');
    const third = await input(d, { cacheRoot: first.cacheRoot });
    expect((await readDownstream(third)).states.get('apps/api')).toMatchObject({
      ref: 'v1.5.0',
      mergedAt: new Date('2026-11-28T10:00:00Z'),
    });
    expect(third.mirrors).toBe(1);
  });

  it("a lock's ref that is no plain ref name, or a commit that is no commit id, is not taken from the downstream's Kptfile", async () => {
    const d = downstream();
    writeTree(d.work, {
      'apps/web/Kptfile': kptfile('web', '"v1 [see](https://evil.example)"', LOCK_B),
      'apps/api/Kptfile': kptfile('api', 'v1.4.0', 'not-a-commit'),
    });
    git(d.work, 'commit', '-q', '-am', 'odd locks');
    git(d.work, 'push', '-q', d.bare, 'main');
    const read = await readDownstream(await input(d, { mergedAt: false }));
    expect(read.states.get('apps/web')).toEqual({ baseCommit: read.baseCommit, commit: LOCK_B });
    expect(read.states.get('apps/api')).toEqual({ baseCommit: read.baseCommit, ref: 'v1.4.0' });
  });

  it("a team's file over the size cap is not read, only its size", async () => {
    const d = downstream();
    writeTree(d.work, { '.kdelta/downstream-policy.yaml': `# ${'x'.repeat(DOWNSTREAM_POLICY_MAX_BYTES)}\n` });
    git(d.work, 'commit', '-q', '-am', 'a large file');
    git(d.work, 'push', '-q', d.bare, 'main');
    const read = await readDownstream(await input(d, { mergedAt: false }));
    expect(read.team).toEqual({ tooLarge: DOWNSTREAM_POLICY_MAX_BYTES + 3 });
    expect(read.states.get('apps/web')?.mergedAt).toBeUndefined();
  });
});
