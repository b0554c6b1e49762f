import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { cliFleets } from './__fixtures__/cli-fleet.js';

const { fleet, kdelta } = cliFleets({ labels: { env: 'prod' }, downstreams: ['cluster-01', 'cluster-02'] });

const policy = (name: string, spec: string) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;

describe('kdelta run: a bad UpdatePolicy stops the run before anything is written', () => {
  it.each([
    [
      'a field of a policy',
      { 'policy.yaml': policy('platform', 'rollout:\n  waves: [canary, prod]\n  soak: two hours') },
      [
        'kdelta run: invalid control configuration: .kdelta/policy.yaml: document 1 (UpdatePolicy "platform"): spec.rollout.soak: expected a duration like 30s, 15m, 2h, 3d, 1w or 1h30m, got "two hours" (line 8)',
      ],
    ],
    [
      'several problems at once',
      {
        'policy.yaml': policy(
          'platform',
          'schedule: {timeZone: Europe/Berln, windows: ["Mon-Fri 9-17"]}\nautoMerge: {updateTypes: [patch], upstreams: [catalogue]}',
        ),
      },
      [
        'invalid control configuration (3 problems)',
        '.kdelta/policy.yaml: document 1 (UpdatePolicy "platform"): spec.schedule.timeZone: unknown time zone "Europe/Berln" (expected an IANA name like Europe/Berlin or UTC) (line 6)',
        '.kdelta/policy.yaml: document 1 (UpdatePolicy "platform"): spec.schedule.windows[0]: expected a window like',
        '.kdelta/policy.yaml: document 1 (UpdatePolicy "platform"): spec.autoMerge.upstreams[0]: Repository "catalogue" does not exist (the Repositories are catalog, cluster-01, cluster-02) (line 7)',
      ],
    ],
    [
      'two policies governing one variant',
      { 'a.yaml': policy('everything', '{}'), 'b.yaml': policy('prod', 'selector: {downstreamLabels: {env: prod}}') },
      [
        '.kdelta/b.yaml: document 1 (UpdatePolicy "prod"): spec.selector: selects variants "a", "b", which UpdatePolicy "everything" (.kdelta/a.yaml: document 1 (UpdatePolicy "everything")) selects too',
      ],
    ],
    [
      'a wave label the policy does not list',
      {
        'policy.yaml': policy('platform', 'rollout: {label: env, waves: [canary, staging]}'),
      },
      [
        'invalid control configuration (2 problems)',
        '.kdelta/repositories.yaml: document 2 (Repository "cluster-01"): metadata.labels.env: "prod" is not a wave of UpdatePolicy "platform", which governs variants of this Repository (its waves: canary, staging) (line 18)',
        '.kdelta/repositories.yaml: document 3 (Repository "cluster-02"): metadata.labels.env: "prod" is not a wave',
      ],
    ],
    [
      "a team's file in the control repository",
      { 'team.yaml': 'apiVersion: kdelta.dev/v1alpha1\nkind: DownstreamPolicy\nmetadata:\n  name: payments\nspec:\n  pause: true\n' },
      [
        '.kdelta/team.yaml: document 1 (DownstreamPolicy "payments"): kind: DownstreamPolicy belongs in a downstream repository at .kdelta/downstream-policy.yaml',
      ],
    ],
  ])('%s: exit 1, naming file and field, nothing written', async (_, files, want) => {
    const f = fleet();
    f.writeControl({ 'a-variant.yaml': packageVariant('a', 'cluster-01'), 'b-variant.yaml': packageVariant('b', 'cluster-02'), ...files });
    const refs = [f.refs('cluster-01'), f.refs('cluster-02')];
    const r = await kdelta(f, 'run');
    expect(r.code).toBe(1);
    for (const w of want) expect(r.stderr).toContain(w);
    expect([f.refs('cluster-01'), f.refs('cluster-02')]).toEqual(refs);
    expect(existsSync(join(f.control, '.kdelta', 'proposals'))).toBe(false);
  });

  it('a good policy: the run goes on', async () => {
    const f = fleet();
    f.writeControl({
      'a-variant.yaml': packageVariant('a', 'cluster-01'),
      'policy.yaml': policy('platform', 'updateTypes: [patch, minor]\nrollout: {waves: [canary, prod]}'),
    });
    const r = await kdelta(f, 'run');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('a → cluster-01/a: proposed');
  });
});
