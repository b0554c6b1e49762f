import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { cliFleets, mergeBranch as merge } from './__fixtures__/cli-fleet.js';

const { fleet, kdelta } = cliFleets();

const dashboardPath = (f: Fleet) => join(f.control, '.kdelta', 'proposals', 'dashboard.md');
const dashboard = (f: Fleet) => readFileSync(dashboardPath(f), 'utf8');

/** A person ticks the boxes of one kind in the dashboard's file, as its text says to. */
function tick(f: Fleet, kind: 'retry' | 'allow-removals' | 'repropose'): void {
  const before = dashboard(f);
  const after = before.replaceAll(`- [ ] <!-- kdelta-${kind}:`, `- [x] <!-- kdelta-${kind}:`);
  expect(after, `no "${kind}" box to tick:\n${before}`).not.toBe(before);
  writeFileSync(dashboardPath(f), after);
}

describe('the fleet dashboard (local forge)', () => {
  it('is created once, lists every variant by its state with problems first, and is written again only when it changed', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01'), 'bad.yaml': packageVariant('bad', 'cluster-01', '', 'v9') });
    expect((await kdelta(f, 'run')).code).toBe(1);
    const first = dashboard(f);
    expect(first).toContain('## kdelta dashboard\n');
    expect(first).toContain('2 variant(s): 1 need attention, 1 open proposal(s), 0 up to date.');
    expect(first).toMatch(
      /### Failed \(1\)\n\n- \[ \] <!-- kdelta-retry:bad%20cluster-01%2Fbad --> retry `bad` → `cluster-01\/bad`: `[a-z-]+` `/,
    );
    expect(first).toContain('### Open proposals (1)\n\n- `web` → `cluster-01/web` · `.kdelta/proposals/cluster-01/web.md`\n');
    // problems come first
    expect(first.indexOf('### Failed')).toBeLessThan(first.indexOf('### Open proposals'));

    // a run with nothing new writes nothing, the dashboard included
    const { ino, mtimeMs } = statSync(dashboardPath(f));
    const again = await kdelta(f, 'run', '--report', 'again.json');
    expect(again.code).toBe(1);
    expect(statSync(dashboardPath(f))).toMatchObject({ ino, mtimeMs });
    expect(JSON.parse(readFileSync(join(f.control, 'again.json'), 'utf8')).dashboard).toMatchObject({ outcome: 'unchanged' });

    // the fleet changes: the dashboard says so
    merge(f, 'cluster-01', 'kdelta/web');
    f.writeControl({ 'bad.yaml': null });
    expect((await kdelta(f, 'run')).code).toBe(0);
    expect(dashboard(f)).toContain('1 variant(s): 0 need attention, 0 open proposal(s), 1 up to date.');
    expect(dashboard(f)).not.toContain('kdelta-retry');

    // a dry run and --no-dashboard leave it alone
    const kept = statSync(dashboardPath(f));
    f.writeControl({ 'api.yaml': packageVariant('api', 'cluster-01') });
    expect((await kdelta(f, 'run', '--dry-run')).code).toBe(0);
    expect((await kdelta(f, 'run', '--no-dashboard')).code).toBe(0);
    expect(statSync(dashboardPath(f))).toMatchObject({ ino: kept.ino, mtimeMs: kept.mtimeMs });
  });

  it('"retry": the next run runs the ticked failed variant before every other job, then clears the box', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'zz.yaml': packageVariant('zz', 'cluster-01', '', 'v9') });
    expect((await kdelta(f, 'run')).code).toBe(1);
    // the upstream gets the release it waited for, and a new variant sorts before it
    execFileSync('git', ['tag', 'v9', 'base-ns/v1'], { cwd: f.upstream });
    f.writeControl({ 'aa.yaml': packageVariant('aa', 'cluster-01'), 'mm.yaml': packageVariant('mm', 'cluster-01') });
    tick(f, 'retry');
    const retried = await kdelta(f, 'run', '--concurrency', '1', '--report', 'r.json');
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stderr.split('\n')[0]).toMatch(/^\[1\/3\] zz → cluster-01\/zz: proposed/);
    const report = JSON.parse(readFileSync(join(f.control, 'r.json'), 'utf8'));
    expect(report.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['zz cluster-01/zz'] } });
    expect(dashboard(f)).not.toContain('- [x]');
    expect(dashboard(f)).toContain('3 variant(s): 0 need attention, 3 open proposal(s)');

    // without a tick the run goes in its own order
    const plain = await kdelta(f, 'run', '--concurrency', '1');
    expect(plain.stderr.split('\n')[0]).toMatch(/^\[1\/3\] aa → /);
  });

  it('"allow these removals": the removals the removal guard held back are proposed by the next run, that set only', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01'), 'api.yaml': packageVariant('api', 'cluster-01') });
    expect((await kdelta(f, 'run')).code).toBe(0);
    merge(f, 'cluster-01', 'kdelta/web');
    merge(f, 'cluster-01', 'kdelta/api');
    f.writeControl({ 'web.yaml': null, 'api.yaml': null });
    expect((await kdelta(f, 'run', '--max-removals', '1')).code).toBe(1);
    const held = dashboard(f);
    expect(held).toContain('### Removals held by the removal guard (2)');
    expect(held).toMatch(
      /- \[ \] <!-- kdelta-allow-removals:[0-9a-f]{16} --> allow these 2 removals on the next run\n {2}- `api` → `cluster-01\/api`\n {2}- `web` → `cluster-01\/web`\n/,
    );

    // unticked, the guard holds them again (and the dashboard, unchanged, is not written)
    const { mtimeMs } = statSync(dashboardPath(f));
    expect((await kdelta(f, 'run', '--max-removals', '1')).code).toBe(1);
    expect(statSync(dashboardPath(f)).mtimeMs).toBe(mtimeMs);

    tick(f, 'allow-removals');
    const allowed = await kdelta(f, 'run', '--max-removals', '1');
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/web\s+cluster-01\/web\s+removal-proposed/);
    expect(allowed.stdout).toMatch(/api\s+cluster-01\/api\s+removal-proposed/);
    expect(dashboard(f)).not.toContain('kdelta-allow-removals');
    expect(dashboard(f)).toContain('### Open proposals (2)');
  });

  it('a tick of "allow these removals" does not allow another set of removals', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'db.yaml': packageVariant('db', 'cluster-01'),
    });
    expect((await kdelta(f, 'run')).code).toBe(0);
    for (const v of ['web', 'api', 'db']) merge(f, 'cluster-01', `kdelta/${v}`);
    f.writeControl({ 'web.yaml': null, 'api.yaml': null });
    expect((await kdelta(f, 'run', '--max-removals', '1')).code).toBe(1);
    tick(f, 'allow-removals');
    // one more variant goes before the next run: the set ticked is not the set due
    f.writeControl({ 'db.yaml': null });
    const held = await kdelta(f, 'run', '--max-removals', '1');
    expect(held.code).toBe(1);
    expect(held.stdout).toContain('3 removals are due, more than max-removals (1): none was proposed');
    expect(dashboard(f)).toContain('allow these 3 removals on the next run');
  });

  it('"re-propose": a declined proposal is proposed again by the next run', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await kdelta(f, 'run')).code).toBe(0);
    // declined on the local forge: the branch deleted unmerged
    execFileSync('git', ['update-ref', '-d', 'refs/heads/kdelta/web'], { cwd: f.downstream('cluster-01') });
    const declined = await kdelta(f, 'run');
    expect(declined.stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(dashboard(f)).toContain(
      '### Declined (1)\n\n- [ ] <!-- kdelta-repropose:.kdelta%2Fproposals%2Fcluster-01%2Fweb.md --> re-propose `web` → `cluster-01/web` · `.kdelta/proposals/cluster-01/web.md`\n',
    );
    // unticked, the decline holds
    expect((await kdelta(f, 'run')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);

    tick(f, 'repropose');
    const again = await kdelta(f, 'run', '--report', 'r.json');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(JSON.parse(readFileSync(join(f.control, 'r.json'), 'utf8')).dashboard.ticks.repropose).toEqual([
      '.kdelta/proposals/cluster-01/web.md',
    ]);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
    expect(readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8')).toMatch(/\nstate: open\n/);
    expect(dashboard(f)).not.toContain('kdelta-repropose');
    expect(dashboard(f)).toContain('### Open proposals (1)');
  });

  it('--dashboard-repo must be owner/name', async () => {
    const f = fleet(['cluster-01']);
    const bad = await kdelta(f, 'run', '--dashboard-repo', 'not a repo');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--dashboard-repo: the dashboard\'s repository must be owner/name, as GitHub names it (got "not a repo")');
    expect(existsSync(dashboardPath(f))).toBe(false);
  });
});
