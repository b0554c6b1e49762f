import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { run } from '../run.js';

const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-settle-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

function fleet(): Fleet {
  const f = createFleet(['cluster-01']);
  fleets.push(f);
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
  });
  return f;
}

const opts = (f: Fleet) => ({ cwd: f.control, cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir } });
const record = (f: Fleet, variant: string) => readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', `${variant}.md`), 'utf8');

/** A reviewer merges the branch into main, as a forge's button does (`squash`: one new commit with the branch's messages). */
function merge(f: Fleet, branch: string, how: 'merge' | 'squash'): void {
  const work = join(f.root, `merge-${branch.replace(/\//g, '-')}-${how}-${Date.now()}`);
  const as = ['-c', 'user.name=r', '-c', 'user.email=r@example.com'];
  execFileSync('git', ['clone', '--quiet', f.downstream('cluster-01'), work]);
  if (how === 'merge') execFileSync('git', [...as, 'merge', '--quiet', '--no-edit', `origin/${branch}`], { cwd: work });
  else {
    execFileSync('git', [...as, 'merge', '--quiet', '--squash', `origin/${branch}`], { cwd: work });
    execFileSync('git', [...as, 'commit', '--quiet', '--no-edit'], { cwd: work });
  }
  execFileSync('git', ['push', '--quiet', 'origin', 'main'], { cwd: work });
  rmSync(work, { recursive: true, force: true });
}

// (merged with a merge commit: packages/cli/test/run/run.test.ts, "a merged removal proposal is recorded as merged")
describe('a merged removal proposal is settled as merged (local forge)', () => {
  it('squash-merged, its branch deleted: recorded as merged once, then left alone', async () => {
    const f = fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await run(opts(f));
    merge(f, 'kdelta/web', 'merge');
    f.writeControl({ 'web.yaml': null });
    const removal = await run(opts(f));
    expect(removal.results.map((r) => [r.variant, r.action])).toEqual([['web', 'removal-proposed']]);
    merge(f, 'kdelta/web', 'squash');
    // the forge deletes the branch on merge, as forges offer to
    execFileSync('git', ['update-ref', '-d', 'refs/heads/kdelta/web'], { cwd: f.downstream('cluster-01') });
    const settled = await run(opts(f));
    expect(settled.results.map((r) => [r.variant, r.action, r.message])).toEqual([['web', 'up-to-date', 'the proposal was merged']]);
    expect(record(f, 'web')).toMatch(/\nstate: merged\n/);
    expect((await run(opts(f))).results).toEqual([]);
  });
});
