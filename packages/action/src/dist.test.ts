import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAction } from './__fixtures__/fleet.js';
import { githubFleet, githubInputs, LOCAL, localFleet } from './__fixtures__/fleets.js';

// The committed bundle, started as GitHub's runner starts it (inputs as INPUT_* variables, the
// output and summary files, the control repository as the workspace), once per forge: a first
// run that proposes and a second that writes nothing. What the Action does in each case is tested
// on its sources in this process (local.test.ts, github.test.ts); these show that the bundle is
// that Action and starts as the runner starts it.

describe('the bundled Action (forge local)', () => {
  it('first run proposes every variant (outputs, counts, summary); the second writes nothing', async () => {
    const f = localFleet();
    const first = await runAction(f.control, LOCAL);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.outputs).toMatchObject({
      created: '2',
      updated: '0',
      closed: '0',
      unchanged: '0',
      deferred: '0',
      failed: '0',
      'render-failed': '0',
    });
    const prs = JSON.parse(first.outputs['pull-requests']!) as Record<string, unknown>[];
    expect(prs).toEqual([
      {
        variant: 'api',
        downstream: 'cluster-02/api',
        action: 'proposed',
        url: expect.stringContaining('cluster-02'),
        number: null,
        state: 'open',
        conflicts: 0,
        renderFailed: false,
      },
      {
        variant: 'web',
        downstream: 'cluster-01/web',
        action: 'proposed',
        url: expect.stringContaining('cluster-01'),
        number: null,
        state: 'open',
        conflicts: 0,
        renderFailed: false,
      },
    ]);
    // the branch was pushed to the downstream, the proposal recorded
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
    expect(readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8')).toContain('head: kdelta/web');
    // progress in the log, inside a group
    expect(first.stdout).toContain('::group::Run');
    expect(first.stdout).toMatch(/\[\d\/2\] web → cluster-01\/web: proposed/);
    // the job summary: one row per variant
    expect(first.summary).toContain('| Variant | Downstream | Action | Pull request | Conflicts |');
    expect(first.summary).toMatch(/\| api \| cluster-02\/api \| proposed \| .*cluster-02.* \|/);
    expect(first.summary).toMatch(/\| web \| cluster-01\/web \| proposed \| .*cluster-01.* \|/);

    const refs = [f.refs('cluster-01'), f.refs('cluster-02')];
    const second = await runAction(f.control, LOCAL);
    expect(second.status).toBe(0);
    expect(second.outputs).toMatchObject({ created: '0', updated: '0', unchanged: '2', failed: '0' });
    expect(JSON.parse(second.outputs['pull-requests']!).map((p: { action: string }) => p.action)).toEqual(['unchanged', 'unchanged']);
    expect([f.refs('cluster-01'), f.refs('cluster-02')]).toEqual(refs);
  });
});

describe('the bundled Action against a fake GitHub', () => {
  it('the first run opens the pull requests; the second makes no write request', async () => {
    const s = await githubFleet();
    const first = await runAction(s.f.control, githubInputs(s), s.env);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.outputs).toMatchObject({ created: '2', updated: '0', failed: '0' });
    const prs = JSON.parse(first.outputs['pull-requests']!) as { variant: string; number: number; url: string; state: string }[];
    expect(prs.map((p) => [p.variant, p.number, p.state])).toEqual([
      ['api', 1, 'open'],
      ['web', 1, 'open'],
    ]);
    expect(prs[1]!.url).toBe(`${s.gh.serverUrl}/org/cluster-01/pull/1`);
    const [pull] = s.gh.pulls('org/cluster-01');
    expect(pull).toMatchObject({ state: 'open', head: { ref: 'kdelta/web' }, base: { ref: 'main' }, labels: ['kdelta', 'fleet'] });
    expect(first.summary).toContain(`[#1](${s.gh.serverUrl}/org/cluster-01/pull/1)`);
    expect(s.gh.violations).toEqual([]);

    s.gh.clearRequests();
    const second = await runAction(s.f.control, githubInputs(s), s.env);
    expect(second.status).toBe(0);
    expect(second.outputs).toMatchObject({ created: '0', updated: '0', unchanged: '2' });
    expect(s.gh.writes()).toBe(0);
    expect(s.gh.pulls('org/cluster-01')).toHaveLength(1);
  });
});
