import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../plan/jobs-plan.js';
import type { VariantPlan } from '../plan/plan.js';
import { pinOf, withPolicies } from './policy-jobs.js';
import { currentProposalOf } from './variant-pin.js';
import type { PolicyPlan, UpdatePolicy, VariantPolicy } from './policy.js';

const POLICY: UpdatePolicy = {
  name: 'platform',
  source: { file: '.kdelta/policy.yaml', document: 1, kind: 'UpdatePolicy', name: 'platform' },
  selector: {},
  updateTypes: new Set(['patch', 'minor', 'major']),
  ignore: [],
  minimumReleaseAgeMs: 0,
  separateMajor: true,
  freezes: [],
  limits: {},
  group: 'none',
  autoMerge: { updateTypes: new Set(['patch', 'major']) },
};

const C = (n: number) => String(n).repeat(40);
const V15 = { ref: 'basens/v1.5.0', commit: C(1), reason: 'release v1.5.0', updateType: 'minor' as const };
const V2 = { ref: 'basens/v2.0.0', commit: C(2), reason: 'major release v2.0.0', updateType: 'major' as const };
const CURRENT = { baseCommit: C(9), ref: 'basens/v1.4.0', commit: C(4) };

function job(variant: string): PlannedJob {
  const plan = { name: variant, upstream: { repository: { name: 'blueprints' } } } as unknown as VariantPlan;
  return { kind: 'variant', variant, downstream: `cluster-01/${variant}`, plan };
}

describe('a governed job proposes what its policy decided', () => {
  it.each([
    [
      'a target: that revision, with the policy’s auto-merge',
      { target: V15, autoMerge: true },
      { kind: 'revision', ref: 'basens/v1.5.0', commit: C(1), autoMerge: true },
    ],
    [
      'no target, a package on the base: stays at its revision (mutations and render still apply), never auto-merged',
      { current: CURRENT, why: 'v1.5.0 is 2h old' },
      {
        kind: 'revision',
        ref: 'basens/v1.4.0',
        commit: C(4),
        reason: 'stays at basens/v1.4.0 (policy platform): v1.5.0 is 2h old',
        autoMerge: false,
      },
    ],
    [
      'no target, no package yet: waits, and says why',
      { why: 'v1.0.0 is 2h old' },
      { kind: 'wait', why: 'policy platform: v1.0.0 is 2h old' },
    ],
    [
      "a team's file that widens: fails with downstream-policy-invalid",
      { target: V15, downstream: { invalid: 'c:.kdelta/downstream-policy.yaml: spec.updateTypes[0]: widens' } },
      { kind: 'fail', code: 'downstream-policy-invalid', message: 'c:.kdelta/downstream-policy.yaml: spec.updateTypes[0]: widens' },
    ],
  ] as const)('%s', (_name, decided, pin) => {
    expect(pinOf({ policy: POLICY, autoMerge: false, ...decided } as VariantPolicy)).toMatchObject(pin);
  });

  it('a separate major gets a job of its own after the variant’s, on the major branch, with its own auto-merge; ungoverned jobs are untouched', () => {
    const policies: PolicyPlan = {
      byVariant: new Map([['web', { policy: POLICY, target: V15, major: V2, autoMerge: false }]]),
      rollouts: [],
      warnings: [],
    };
    const jobs = withPolicies([job('api'), job('web')], policies, new Set(['api', 'web']));
    expect(
      jobs.map((j) => [
        j.variant,
        j.downstream,
        j.kind === 'variant' ? j.pin?.kind : undefined,
        j.kind === 'variant' ? j.major : undefined,
      ]),
    ).toEqual([
      ['api', 'cluster-01/api', undefined, undefined],
      ['web', 'cluster-01/web', 'revision', undefined],
      ['web', 'cluster-01/web (major)', 'revision', true],
    ]);
    expect(jobs[2]).toMatchObject({ pin: { ref: 'basens/v2.0.0', autoMerge: true } });
  });

  it('a variant named like the major branch makes the major job fail alone, saying why', () => {
    const policies: PolicyPlan = {
      byVariant: new Map([['web', { policy: POLICY, major: V2, current: CURRENT, autoMerge: false }]]),
      rollouts: [],
      warnings: [],
    };
    const jobs = withPolicies([job('web'), job('web-major')], policies, new Set(['web', 'web-major']));
    expect(jobs[1]).toMatchObject({
      downstream: 'cluster-01/web (major)',
      pin: { kind: 'fail', code: 'name-collision' },
    });
    expect(jobs[1]!.kind === 'variant' && jobs[1]!.pin?.kind === 'fail' && jobs[1]!.pin.message).toContain(
      'branch "web-major", which variant "web-major" has',
    );
  });

  it.each([
    ['web', true],
    ['web-major', true],
    ['gone', false],
    ['gone-major', false],
    ['-major', false],
  ])('branch %j is a current variant’s: %s', (name, current) => {
    expect(currentProposalOf(name, new Set(['web']))).toBe(current);
  });
});
