import { describe, expect, it } from 'vitest';
import { repository, type Fleet } from '@kdelta/test-support';
import { cliFleets } from '../../test/run/__fixtures__/cli-fleet.js';

// `kdelta rollout` on the local forge: a person advances, halts or resumes a rollout by ticking
// its box on the dashboard file; the next `kdelta run` acts on it.

const { fleet, kdelta } = cliFleets({ downstreams: ['repo-a', 'repo-c'] });

const variant = (name: string, downstream: string) =>
  `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n  downstream:\n    repo: ${downstream}\n    package: web\n`;

function rolloutFleet(): Fleet {
  const f = fleet();
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      repository('repo-a', f.downstream('repo-a'), { 'kdelta.dev/wave': 'canary' }),
      repository('repo-c', f.downstream('repo-c'), { 'kdelta.dev/wave': 'prod' }),
    ].join('---\n'),
    'web-a.yaml': variant('web-a', 'repo-a'),
    'web-c.yaml': variant('web-c', 'repo-c'),
    'policy.yaml':
      'apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  rollout:\n    waves: [canary, prod]\n',
  });
  return f;
}

describe('kdelta rollout (local forge)', () => {
  it('advance proposes the next wave on the next run; halt holds the rollout until resume', async () => {
    const f = rolloutFleet();
    const first = await kdelta(f, 'run');
    expect(first.stdout).toMatch(/web-c +repo-c\/web +deferred \(rollout-wave\)/);
    expect(first.stdout).toContain(
      '  rollout-wave: rollout of base-ns v1 (policy platform): wave canary has 0 of 1 merged (waits on merge of web-a in repo-a)\n    web-c → repo-c/web\n',
    );

    const advance = await kdelta(f, 'rollout', 'advance', 'platform', 'v1');
    expect(advance).toMatchObject({ code: 0, stderr: '' });
    expect(advance.stdout).toBe(
      'ticked on .kdelta/proposals/dashboard.md: advance `base-ns v1` (policy `platform`) to prod now\nthe next `kdelta run` acts on it\n',
    );
    expect((await kdelta(f, 'run')).stdout).toMatch(/web-c +repo-c\/web +proposed/);

    expect((await kdelta(f, 'rollout', 'halt', 'platform', 'base-ns/v1')).code).toBe(0);
    const halted = (await kdelta(f, 'run')).stdout;
    expect(halted).toMatch(/web-a +repo-a\/web +deferred \(rollout-wave\)/);
    expect(halted).toContain(
      '  rollout-wave: rollout of base-ns v1 (policy platform): halted: by hand on the dashboard\n    web-a → repo-a/web\n',
    );
    // nothing to halt twice; resume lifts it
    const again = await kdelta(f, 'rollout', 'halt', 'platform', 'v1');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the dashboard has no rollout to halt/);
    expect((await kdelta(f, 'rollout', 'resume', 'platform', 'v1')).code).toBe(0);
    expect((await kdelta(f, 'run')).stdout).toMatch(/web-a +repo-a\/web +unchanged/);
  });

  it.each([
    [['advance', 'platform', 'v9'], /no rollout of v9 under policy platform can advance; the rollouts that can:\n {2}advance `base-ns v1`/],
    [['advance', 'other', 'v1'], /no rollout of v1 under policy other can advance/],
    [['promote', 'platform', 'v1'], /unknown action "promote": advance, halt or resume/],
    [['halt', 'platform'], /halt needs <policy> <revision>/],
    [['halt', 'platform', 'v1', '--forge', 'github'], /on GitHub, tick the box on the dashboard issue/],
  ])('refuses %j, saying what is wrong, and ticks nothing', async (args, message) => {
    const f = rolloutFleet();
    expect((await kdelta(f, 'run')).code).toBe(0);
    const before = (await kdelta(f, 'dashboard')).stdout;
    const r = await kdelta(f, 'rollout', ...args);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect((await kdelta(f, 'dashboard')).stdout).toBe(before);
  });

  it('without a dashboard yet: says a run writes it', async () => {
    const f = rolloutFleet();
    const r = await kdelta(f, 'rollout', 'halt', 'platform', 'v1');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no dashboard yet/);
  });
});
