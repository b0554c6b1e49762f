import { packageVariant } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { actions, bothForges } from './__fixtures__/both-forges.js';

/**
 * A proposal's fingerprint covers the variant's own inputs: a control edit that changes no
 * variant's output writes nothing, on any forge; one that changes what a variant injects updates
 * that variant alone.
 */

const forges = bothForges();

/** The upstream package, with a ConfigMap a variant injects into. */
const INJECTION_POINT =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n    kpt.dev/config-injection: optional\ndata:\n  tier: bronze\n';

const configMap = (name: string, tier: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  tier: ${tier}\n`;

/** `web` (declined) writes cluster-01, `api` (open, injecting ConfigMap `api-settings`) cluster-02; cluster-03 is no variant's. */
const DOWNSTREAMS = ['cluster-01', 'cluster-02', 'cluster-03'];

const UNCHANGED = { 'api cluster-02/api': 'unchanged', 'web cluster-01/web': 'declined' };

/** Control edits, one after the other, and what each does to the two proposals. */
const EDITS: readonly {
  readonly edit: string;
  readonly labels?: Record<string, Record<string, string>>;
  readonly control?: Record<string, string>;
  readonly expected: Record<string, string>;
  readonly writes: boolean;
}[] = [
  { edit: 'a label on a Repository no variant targets', labels: { 'cluster-03': { region: 'eu' } }, expected: UNCHANGED, writes: false },
  {
    edit: 'a label on the Repository a variant targets (no template reads it)',
    labels: { 'cluster-03': { region: 'eu' }, 'cluster-02': { tier: 'gold' } },
    expected: UNCHANGED,
    writes: false,
  },
  {
    edit: 'a ConfigMap no variant injects',
    control: { 'other.yaml': configMap('other-settings', 'silver') },
    expected: UNCHANGED,
    writes: false,
  },
  {
    edit: 'the data of the ConfigMap api injects',
    control: { 'api-settings.yaml': configMap('api-settings', 'platinum') },
    expected: { 'api cluster-02/api': 'updated', 'web cluster-01/web': 'declined' },
    writes: true,
  },
];

describe.each(forges)('a decision survives what it is not about ($name forge)', (forge) => {
  it('a control edit that changes no variant’s output keeps every decline and every open proposal, with no write; a changed injected object updates its variant', async () => {
    const f = await forge.fleet(DOWNSTREAMS);
    f.publish({ 'base-ns/settings.yaml': INJECTION_POINT }, 'base-ns/v2');
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01', '', 'v2'),
      'api.yaml': packageVariant('api', 'cluster-02', '  injectors:\n  - name: api-settings\n', 'v2'),
      'api-settings.yaml': configMap('api-settings', 'gold'),
    });
    expect(actions(await f.run())).toEqual({ 'api cluster-02/api': 'proposed', 'web cluster-01/web': 'proposed' });
    expect(f.files('cluster-02', 'kdelta/api', 'api')['settings.yaml']).toContain('tier: gold');
    await f.decline('cluster-01', 'web');
    expect(actions(await f.run())).toEqual(UNCHANGED);

    for (const step of EDITS) {
      f.writeControl({ ...(step.labels ? { 'repositories.yaml': f.repositories(step.labels) } : {}), ...step.control });
      const before = f.snapshot();
      const report = await f.run();
      expect(actions(report), step.edit).toEqual(step.expected);
      if (step.writes) continue;
      const writes = f.apiWrites();
      expect(f.snapshot(), step.edit).toEqual(before);
      expect(writes, step.edit).toBe(0);
    }
    expect(f.files('cluster-02', 'kdelta/api', 'api')['settings.yaml']).toContain('tier: platinum');
  });
});
