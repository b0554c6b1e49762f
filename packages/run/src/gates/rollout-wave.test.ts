import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../plan/jobs-plan.js';
import type { Plan, VariantPlan } from '../plan/plan.js';
import type { PolicyPlan, RolloutStatus, UpdatePolicy, VariantPolicy } from '../policy/policy.js';
import type { GateContext } from './gate.js';
import { rolloutWave } from './rollout-wave.js';

// The rollout-wave gate on the jobs a run plans: which of a governed variant's jobs propose
// something new of a rollout (its policy's revision, its separate major release), and which never
// are held (a job staying at what its base has, a variant no rollout governs, a removal).

const V2 = { ref: 'base-ns/v2', commit: '2'.repeat(40), reason: 'newest release' };
const V3 = { ref: 'base-ns/v3', commit: '3'.repeat(40), reason: 'newest major' };

const policy = {
  name: 'platform',
  rollout: { label: 'kdelta.dev/wave', waves: ['canary', 'prod'], soakMs: 0, halted: [], advanced: [] },
} as unknown as UpdatePolicy;

const variantPlan = (name: string) =>
  ({
    name,
    upstream: { repository: { name: 'catalog' }, package: 'base-ns' },
    downstream: { repository: { name: 'repo-c' } },
  }) as unknown as VariantPlan;

/** Both rollouts stand at canary: prod waits. */
const standing = (revision: typeof V2): RolloutStatus => ({
  policy: 'platform',
  upstream: 'catalog/base-ns',
  revision: revision.ref,
  commit: revision.commit,
  waves: [
    { name: 'canary', variants: 1, merged: 0 },
    { name: 'prod', variants: 1, merged: 0 },
  ],
  reached: -1,
  proposing: 'canary',
  waitingOn: ['merge of web-a in repo-a'],
});

const prod = (over: Partial<VariantPolicy> = {}): VariantPolicy => ({
  policy,
  wave: { name: 'prod', index: 1 },
  autoMerge: false,
  ...over,
});

function context(byVariant: Record<string, VariantPolicy>): GateContext {
  const policies: PolicyPlan = { byVariant: new Map(Object.entries(byVariant)), rollouts: [standing(V2), standing(V3)], warnings: [] };
  const plan = { variants: Object.keys(byVariant).map(variantPlan), downstreams: [], warnings: [] } as Plan;
  return { now: new Date(), dryRun: false, policies, plan } as unknown as GateContext;
}

const job = (variant: string, major = false): PlannedJob =>
  ({ kind: 'variant', variant, downstream: 'repo-c/web', plan: variantPlan(variant), ...(major ? { major } : {}) }) as PlannedJob;

describe('the rollout-wave gate', () => {
  it.each([
    ['a prod variant due the revision is held', job('web-c'), { 'web-c': prod({ target: V2 }) }, 'base-ns v2'],
    [
      'its separate major job is held by the major release’s rollout',
      job('web-c', true),
      { 'web-c': prod({ target: V2, major: V3 }) },
      'base-ns v3',
    ],
    ['a job staying at what its base has is not held', job('web-c'), { 'web-c': prod({ why: 'nothing due' }) }, undefined],
    ['a variant no policy governs is not held', job('web-x'), {}, undefined],
    ['a variant without a wave is not held', job('web-c'), { 'web-c': prod({ target: V2, wave: undefined }) }, undefined],
    [
      'a removal is never held',
      { kind: 'removal', variant: 'web-c', downstream: 'repo-c/web', removal: {} } as unknown as PlannedJob,
      { 'web-c': prod({ target: V2 }) },
      undefined,
    ],
  ])('%s', async (_name, j, byVariant, heldFor) => {
    const decision = await rolloutWave.decide(j, context(byVariant));
    if (heldFor === undefined) expect(decision).toEqual({ pass: true });
    else
      expect(decision).toEqual({
        pass: false,
        reason: `rollout of ${heldFor} (policy platform): wave canary has 0 of 1 merged (waits on merge of web-a in repo-a)`,
      });
  });
});
