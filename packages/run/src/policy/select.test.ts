import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ControlError, loadControl } from '../control/control.js';
import { planRun, type Plan } from '../plan/plan.js';
import { checkPolicies, policyOf } from './select.js';
import { waveOf } from './waves.js';

const root = mkdtempSync(join(tmpdir(), 'kdelta-policy-select-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const repo = (name: string, labels: Record<string, string> = {}) =>
  `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n${
    Object.keys(labels).length > 0
      ? `  labels:\n${Object.entries(labels)
          .map(([k, v]) => `    ${k}: ${v}\n`)
          .join('')}`
      : ''
  }spec:\n  git:\n    repo: /tmp/${name}.git\n`;

/** blueprints and catalog upstream; three clusters; the set basens-fleet on every env-labelled cluster; web-a and db-a of their own. */
const FLEET = {
  'repos.yaml': [
    repo('blueprints'),
    repo('catalog'),
    repo('cluster-a', { env: 'prod', 'kdelta.dev/wave': 'canary' }),
    repo('cluster-b', { env: 'prod', 'kdelta.dev/wave': 'prod' }),
    repo('cluster-c', { env: 'dev' }),
  ].join('---\n'),
  'set.yaml':
    'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: basens-fleet\nspec:\n  upstream: {repo: blueprints, package: basens}\n  targets:\n  - repositorySelector:\n      matchExpressions: [{key: env, operator: Exists}]\n    template:\n      downstream:\n        packageExpr: "\'basens\'"\n',
  'web.yaml':
    'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: web-a\nspec:\n  upstream: {repo: catalog, package: web}\n  downstream: {repo: cluster-a, package: web}\n---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: db-a\nspec:\n  upstream: {repo: catalog, package: db}\n  downstream: {repo: cluster-c, package: db}\n',
};

const policy = (name: string, spec: string) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;

async function setup(policies: Record<string, string>): Promise<{ plan: Plan; config: Awaited<ReturnType<typeof loadControl>> }> {
  const dir = join(root, `c${++n}`);
  for (const [file, text] of Object.entries({ ...FLEET, ...policies })) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  const config = await loadControl({ dir, display: '.kdelta' });
  return { config, plan: planRun(config, { cwd: root }) };
}

async function planError(policies: Record<string, string>): Promise<string> {
  const error = await setup(policies).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ControlError);
  return (error as Error).message;
}

describe('policyOf: which policy governs a variant', () => {
  it.each([
    [
      'an empty selector: every variant',
      '{}',
      ['basens-fleet-cluster-a-basens', 'basens-fleet-cluster-b-basens', 'basens-fleet-cluster-c-basens', 'db-a', 'web-a'],
    ],
    [
      'the variants of a PackageVariantSet',
      'selector: {packageVariantSets: [basens-fleet]}',
      ['basens-fleet-cluster-a-basens', 'basens-fleet-cluster-b-basens', 'basens-fleet-cluster-c-basens'],
    ],
    ['variant names, * globs', 'selector: {packageVariants: ["web-*", "*-cluster-b-*"]}', ['basens-fleet-cluster-b-basens', 'web-a']],
    ['an upstream Repository', 'selector: {upstream: {repo: catalog}}', ['db-a', 'web-a']],
    ['an upstream Repository and package', 'selector: {upstream: {repo: catalog, package: db}}', ['db-a']],
    [
      'labels of the downstream Repository',
      'selector: {downstreamLabels: {env: prod}}',
      ['basens-fleet-cluster-a-basens', 'basens-fleet-cluster-b-basens', 'web-a'],
    ],
    [
      'every criterion at once',
      'selector: {packageVariantSets: [basens-fleet], downstreamLabels: {env: prod}, packageVariants: ["*-a-*"]}',
      ['basens-fleet-cluster-a-basens'],
    ],
    ['criteria nothing matches together', 'selector: {upstream: {repo: blueprints}, packageVariants: ["web-*"]}', []],
  ])('%s', async (_, selector, want) => {
    const { plan, config } = await setup({ 'policy.yaml': policy('platform', selector) });
    expect(plan.variants.filter((v) => policyOf(v, config.policies)?.name === 'platform').map((v) => v.name)).toEqual(want);
  });

  it('no policy: nothing governs any variant', async () => {
    const { plan, config } = await setup({});
    expect(config.policies).toEqual([]);
    expect(plan.variants.map((v) => policyOf(v, config.policies))).toEqual(plan.variants.map(() => undefined));
  });

  it('a generated variant knows its PackageVariantSet; a variant of its own has none', async () => {
    const { plan } = await setup({});
    expect(plan.variants.map((v) => [v.name, v.set])).toEqual([
      ['basens-fleet-cluster-a-basens', 'basens-fleet'],
      ['basens-fleet-cluster-b-basens', 'basens-fleet'],
      ['basens-fleet-cluster-c-basens', 'basens-fleet'],
      ['db-a', undefined],
      ['web-a', undefined],
    ]);
  });

  it('two policies selecting one variant: the plan is refused, naming both documents and the variants', async () => {
    const message = await planError({
      'a.yaml': policy('platform', 'selector: {packageVariantSets: [basens-fleet]}'),
      'b.yaml': policy('prod-only', 'selector: {downstreamLabels: {env: prod}}'),
    });
    expect(message).toContain(
      '.kdelta/b.yaml: document 1 (UpdatePolicy "prod-only"): spec.selector: selects variants "basens-fleet-cluster-a-basens", "basens-fleet-cluster-b-basens", which UpdatePolicy "platform" (.kdelta/a.yaml: document 1 (UpdatePolicy "platform")) selects too: at most one policy governs a variant (narrow one of the selectors) (line 6)',
    );
  });

  it('and policyOf alone refuses such a variant too', async () => {
    const { plan, config } = await setup({ 'a.yaml': policy('platform', '{}') });
    const twice = [...config.policies, { ...config.policies[0]!, name: 'copy' }];
    expect(() => policyOf(plan.variants[0]!, twice)).toThrow(
      /selects variant "basens-fleet-cluster-a-basens", which UpdatePolicy "platform"/,
    );
    expect(() => checkPolicies(plan, twice)).toThrow(ControlError);
  });
});

describe('waveOf: a variant’s wave, from its downstream Repository’s label', () => {
  it('the label names the wave; an unlabelled downstream is in the last wave; no rollout, no wave', async () => {
    const { plan, config } = await setup({
      'policy.yaml': policy('platform', 'selector: {packageVariantSets: [basens-fleet]}\nrollout: {}'),
    });
    const [a, b, c] = plan.variants;
    const p = config.policies[0]!;
    expect([a, b, c].map((v) => waveOf(v!, p))).toEqual([
      { name: 'canary', index: 0 },
      { name: 'prod', index: 2 },
      { name: 'prod', index: 2 },
    ]);
    expect(waveOf(a!, { ...p, rollout: undefined })).toBeUndefined();
  });

  it('a label the policy names, with its own waves', async () => {
    const { plan, config } = await setup({
      'policy.yaml': policy('platform', 'selector: {packageVariantSets: [basens-fleet]}\nrollout: {label: env, waves: [dev, prod, later]}'),
    });
    expect(plan.variants.slice(0, 3).map((v) => waveOf(v, config.policies[0]!)?.name)).toEqual(['prod', 'prod', 'dev']);
  });

  it.each([
    ['the same wave', 'canary', { name: 'canary', index: 0 }],
    ['a later wave', 'early', { name: 'early', index: 1 }],
    [
      'an earlier wave: the team widens, its file is invalid',
      'canary',
      {
        name: 'prod',
        index: 2,
        invalid:
          'cluster-b:.kdelta/downstream-policy.yaml: spec.wave: "canary" is earlier than wave "prod" of Repository "cluster-b": a team\'s file may only choose the same or a later wave',
      },
    ],
  ])("the team's wave: %s", async (what, wave, want) => {
    const { plan, config } = await setup({
      'policy.yaml': policy('platform', 'selector: {packageVariantSets: [basens-fleet]}\nrollout: {}'),
    });
    const variant = plan.variants[what.startsWith('an earlier') ? 1 : 0]!;
    const file = `${variant.downstream.repository.name}:.kdelta/downstream-policy.yaml`;
    expect(waveOf(variant, config.policies[0]!, { file, wave })).toEqual(want);
  });

  it('a wave label no governing policy lists is refused with the plan, naming the Repository’s label', async () => {
    const message = await planError({ 'policy.yaml': policy('platform', 'rollout: {waves: [early, late]}') });
    expect(message).toContain('invalid control configuration (2 problems)');
    expect(message).toContain(
      '.kdelta/repos.yaml: document 3 (Repository "cluster-a"): metadata.labels.kdelta.dev/wave: "canary" is not a wave of UpdatePolicy "platform", which governs variants of this Repository (its waves: early, late) (line 23)',
    );
    expect(message).toContain(
      '.kdelta/repos.yaml: document 4 (Repository "cluster-b"): metadata.labels.kdelta.dev/wave: "prod" is not a wave',
    );
    // a policy that governs none of its variants leaves a Repository's label alone
    await setup({ 'policy.yaml': policy('platform', 'selector: {downstreamLabels: {env: dev}}\nrollout: {waves: [early, late]}') });
  });
});
