import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import { copyMaterialize, githubFleets } from './__fixtures__/github-fleet.js';

/**
 * A run on a fresh machine (a new CI runner: an empty cache directory) after a run that kept its
 * dashboard: the removal scan's "no removals here" answers are read from the dashboard, so no
 * downstream that did not move is cloned. What a person edits in the dashboard's data only costs
 * clones.
 */

const hub = githubFleets({ owner: 'scans' });

type Control = Fleet & { controlRepo: string; slug(d: string): string };

async function fleet(downstreams: string[]): Promise<Control> {
  const f = await hub.fleet(downstreams);
  await hub.gh.createRepo(`${f.owner}/control`, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
  f.writeControl(Object.fromEntries(downstreams.map((d) => [`${d}.yaml`, packageVariant(d, d)])));
  return Object.assign(f, { controlRepo: `${f.owner}/control` });
}

const opts = (f: Control, extra: Partial<RunOptions> = {}): RunOptions =>
  hub.runOptions(f, {}, { materialize: copyMaterialize, dashboard: { repository: f.controlRepo }, ...extra });

/** A run with an empty cache directory, and the git commands it ran. */
async function freshRun(f: Control): Promise<{ actions: string[]; commands: string[] }> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-fresh-cache-'));
  onTestFinished(() => rmSync(cacheDir, { recursive: true, force: true }));
  const trace = join(cacheDir, 'trace');
  const before = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    const report = await run(opts(f, { cacheDir, env: hub.cleanEnv({ KDELTA_CACHE_DIR: cacheDir, GIT_TRACE: trace }) }));
    const commands = [...readFileSync(trace, 'utf8').matchAll(/built-in: git (\S+)/g)].map((m) => m[1]!);
    return { actions: report.results.map((r) => `${r.variant} ${r.action}`).sort(), commands };
  } finally {
    if (before === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = before;
  }
}

const downstreams = ['cluster-a', 'cluster-b'];

describe("the removal scan's answers in the dashboard on GitHub", () => {
  it('a run with an empty cache after a run that kept its dashboard clones no downstream and writes nothing', async () => {
    const f = await fleet(downstreams);
    const first = await run(opts(f));
    expect(first.results.map((r) => r.action)).toEqual(['proposed', 'proposed']);
    const [issue] = hub.gh.issues(f.controlRepo);
    // the data block names no downstream: hashes and commits only
    const data = (issue!.body ?? '').split('\n').find((l) => l.startsWith('<!-- kdelta-dashboard-data:'))!;
    expect(data).toContain('"scans"');
    expect(data).not.toContain(hub.gh.serverUrl);
    expect(data).not.toContain('cluster-a');
    hub.gh.clearRequests();
    const { actions, commands } = await freshRun(f);
    expect(actions).toEqual(['cluster-a unchanged', 'cluster-b unchanged']);
    expect(commands).not.toContain('clone');
    expect(hub.gh.writes()).toBe(0);
  });

  it("a person's edit of the data only costs clones: the same results", async () => {
    const f = await fleet(downstreams);
    await run(opts(f));
    const [issue] = hub.gh.issues(f.controlRepo);
    hub.gh.editIssue(f.controlRepo, issue!.number, (issue!.body ?? '').replace(/":"[0-9a-f]{16}"/g, `":"${'1'.repeat(16)}"`));
    const { actions, commands } = await freshRun(f);
    expect(actions).toEqual(['cluster-a unchanged', 'cluster-b unchanged']);
    expect(commands.filter((c) => c === 'clone').length).toBeGreaterThanOrEqual(downstreams.length);
  });
});
