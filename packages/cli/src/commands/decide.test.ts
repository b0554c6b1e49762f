import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { cliFleets, mergeBranch, proposalRecord } from '../../test/run/__fixtures__/cli-fleet.js';

// `kdelta decide` and `kdelta dashboard` on the local forge: the boxes a person would tick by
// editing Markdown, listed and ticked by name; the next run acts on each tick as on a hand-made one.

const { fleet, kdelta } = cliFleets();

const deployment = (replicas: number) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  paused: false\n`;

/** web on cluster-01 merged at v1 (3 replicas), scaled to 6 downstream, upstream v2 scales to 4: one conflict. A second variant names no release: failed. */
async function conflictedFleet(): Promise<Fleet> {
  const f = fleet(['cluster-01']);
  f.publish({ 'base-ns/deploy.yaml': deployment(3) }, 'base-ns/v1');
  f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
  expect((await kdelta(f, 'run')).code).toBe(0);
  mergeBranch(f, 'cluster-01', 'kdelta/web');
  f.commitAs('cluster-01', 'main', {
    'web/deploy.yaml': f.files('cluster-01', 'main', 'web')['deploy.yaml']!.replace('replicas: 3', 'replicas: 6'),
  });
  f.publish({ 'base-ns/deploy.yaml': deployment(4) }, 'base-ns/v2');
  f.writeControl({
    'web.yaml': packageVariant('web', 'cluster-01', '', 'v2'),
    'api.yaml': packageVariant('api', 'cluster-01', '', 'v9'),
  });
  const second = await kdelta(f, 'run');
  expect(second.stdout).toMatch(/web +cluster-01\/web +proposed .* 1$/m);
  expect(second.stdout).toMatch(/api +cluster-01\/api +failed/);
  return f;
}

describe('kdelta decide and kdelta dashboard (local forge)', () => {
  it('lists the open boxes, ticks a conflict by its field and a retry by its variant, and the next run acts on both', async () => {
    const f = await conflictedFleet();

    const dashboard = await kdelta(f, 'dashboard');
    expect(dashboard.code).toBe(0);
    expect(dashboard.stdout).toContain('## kdelta dashboard\n');
    expect(dashboard.stdout).toMatch(/^- \[ \] <!-- kdelta-retry:api%20cluster-01%2Fapi --> retry `api` → `cluster-01\/api`/m);

    const listed = await kdelta(f, 'decide');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /^\.kdelta\/proposals\/cluster-01\/web\.md \(kdelta\/web → main\):\n {2}[0-9a-f]{16} {2}keep local `6` for `\.spec\.replicas` \(apps\/Deployment web\)$/m,
    );
    expect(listed.stdout).toMatch(/^\.kdelta\/proposals\/dashboard\.md:\n {2}retry {2}retry `api` → `cluster-01\/api`/m);

    // the wrong side, an unknown field: exit 1, the choices named, nothing written
    const record = proposalRecord(f, 'cluster-01', 'web');
    const wrong = await kdelta(f, 'decide', 'web', '--take', 'upstream', 'spec.replicas');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/no open box takes upstream on this proposal \(its open boxes:\n {2}[0-9a-f]{16} {2}keep local `6`/);
    expect(proposalRecord(f, 'cluster-01', 'web')).toBe(record);

    const ticked = await kdelta(f, 'decide', 'web', '--take', 'local', 'spec.replicas');
    expect(ticked.code).toBe(0);
    expect(ticked.stdout).toBe(
      'ticked on .kdelta/proposals/cluster-01/web.md: keep local `6` for `.spec.replicas` (apps/Deployment web)\nthe next `kdelta run` rebuilds the proposal with it\n',
    );
    expect(proposalRecord(f, 'cluster-01', 'web')).toMatch(/^- \[x\] <!-- kdelta-decide:[0-9a-f]{16} --> keep local `6`/m);
    const retry = await kdelta(f, 'decide', '--dashboard', 'retry', 'api');
    expect(retry.code).toBe(0);
    expect(retry.stdout).toMatch(/^ticked on \.kdelta\/proposals\/dashboard\.md: retry `api` → `cluster-01\/api`/);
    expect((await kdelta(f, 'decide', '--dashboard')).stdout).toBe('no open box on .kdelta/proposals/dashboard.md\n');

    const next = await kdelta(f, 'run', '--report', 'report.json');
    expect(next.stdout).toMatch(/web +cluster-01\/web +updated .* 0$/m);
    expect(f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']).toMatch(/replicas: 6 # kdelta:local/);
    const report = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(`${f.control}/report.json`, 'utf8'))) as {
      dashboard?: { ticks: { retry: string[] } };
    };
    expect(report.dashboard?.ticks.retry).toEqual(['api cluster-01/api']);
  });

  it('says what is wrong: no such proposal, no dashboard yet, a GitHub forge', async () => {
    const f = fleet(['cluster-01']);
    expect(await kdelta(f, 'dashboard')).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/no dashboard yet .*`kdelta run` writes it/),
    });
    expect(await kdelta(f, 'decide', 'web')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no open proposal is "web" (there is none)'),
    });
    expect(await kdelta(f, 'decide', '--forge', 'github')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('on GitHub, tick the box'),
    });
    expect(await kdelta(f, 'decide', '--dashboard', 'retry', 'a', 'b')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unexpected argument "b"'),
    });
  });
});
