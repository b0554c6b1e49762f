import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, type Fleet, packageVariant, repository, tempDir } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { dashboardEntries, renderDashboard, type RolloutReport } from '@kdelta/run';
import { main } from '../main.js';

const env = {
  ...process.env,
  KDELTA_CACHE_DIR: tempDir(),
  GIT_AUTHOR_NAME: 'kdelta',
  GIT_AUTHOR_EMAIL: 'kdelta@noreply.invalid',
  GIT_COMMITTER_NAME: 'kdelta',
  GIT_COMMITTER_EMAIL: 'kdelta@noreply.invalid',
};

async function kdelta(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const code = await main(args, { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd, env });
  return { code, ...out };
}

function fleet(): Fleet {
  const f = createFleet(['cluster-01']);
  onTestFinished(() => f.cleanup());
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
  });
  return f;
}

const ROLLOUTS: RolloutReport[] = [
  {
    policy: 'platform',
    upstream: 'catalog/base-ns',
    revision: 'base-ns/v2',
    commit: 'c'.repeat(40),
    waves: [
      { name: 'canary', variants: 1, merged: 1 },
      { name: 'prod', variants: 2, merged: 0 },
    ],
    reached: 'canary',
    proposing: 'prod',
    waitingOn: ['soak until 2026-03-02T12:00:00.000Z'],
    soakUntil: '2026-03-02T12:00:00.000Z',
  },
  {
    policy: 'platform',
    upstream: 'catalog/base-ns',
    revision: 'base-ns/v3',
    commit: 'd'.repeat(40),
    waves: [
      { name: 'canary', variants: 1, merged: 0 },
      { name: 'prod', variants: 2, merged: 0 },
    ],
    proposing: 'canary',
    waitingOn: [],
    halted: 'status flux-system failed on cluster-01 (canary)',
  },
];

/** The dashboard as a run with these rollouts keeps it (the run writes the same text: renderDashboard). */
function keepDashboard(f: Fleet, rollouts: RolloutReport[]): void {
  const file = join(f.control, '.kdelta', 'proposals', 'dashboard.md');
  const before = readFileSync(file, 'utf8');
  const marker = /<!-- kdelta-dashboard: [^>]*-->/.exec(before)![0];
  writeFileSync(file, renderDashboard({ title: 'kdelta dashboard', marker, entries: dashboardEntries([]), rollouts }));
}

describe('kdelta proposals shows the rollouts', () => {
  it('one line per rollout under the proposals, from the dashboard the last run kept; --json has them whole', async () => {
    const f = fleet();
    expect((await kdelta(f.control, 'run')).code).toBe(0);
    // a fleet without policies: no rollout, the output as before
    expect((await kdelta(f.control, 'proposals')).stdout).not.toContain('rollout');
    expect(JSON.parse((await kdelta(f.control, 'proposals', '--json')).stdout)).toMatchObject({ rollouts: [] });

    keepDashboard(f, ROLLOUTS);
    const listed = await kdelta(f.control, 'proposals');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/open\s+cluster-01\s+kdelta\/web\s+0\s+kdelta: add web/);
    expect(listed.stdout).toContain(
      [
        '',
        '2 rollout(s):',
        '  rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; reached canary, proposed to prod; the rollout waits on: soak until 2026-03-02T12:00:00.000Z',
        '  rollout of catalog/base-ns base-ns/v3 (policy platform): canary 0/1, prod 0/2 merged; no wave has it yet, proposed to canary; HALTED: status flux-system failed on cluster-01 (canary)',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await kdelta(f.control, 'proposals', '--json')).stdout) as { proposals: unknown[]; rollouts: unknown };
    expect(json.proposals).toHaveLength(1);
    expect(json.rollouts).toEqual(ROLLOUTS);
  });

  it('with no proposal, still shows the rollouts', async () => {
    const f = fleet();
    expect((await kdelta(f.control, 'run')).code).toBe(0);
    rmSync(join(f.control, '.kdelta', 'proposals', 'cluster-01'), { recursive: true });
    keepDashboard(f, ROLLOUTS.slice(0, 1));
    expect((await kdelta(f.control, 'proposals')).stdout).toBe(
      'no proposals\n\n1 rollout(s):\n  rollout of catalog/base-ns base-ns/v2 (policy platform): canary 1/1, prod 0/2 merged; reached canary, proposed to prod; the rollout waits on: soak until 2026-03-02T12:00:00.000Z\n',
    );
  });

  it('--dashboard-repo must be owner/name', async () => {
    const r = await kdelta(tempDir(), 'proposals', '--forge', 'github', '--dashboard-repo', 'not a repo');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--dashboard-repo: the dashboard's repository must be owner/name");
  });
});
