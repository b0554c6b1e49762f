import type { RolloutStatus } from '../../policy/policy.js';

/** A rollout part way: its canary merged, prod waiting on the soak time (the report's and the dashboard's tests). */
export const rolloutStatus = (over: Partial<RolloutStatus> = {}): RolloutStatus => ({
  policy: 'platform',
  upstream: 'catalog/base-ns',
  revision: 'base-ns/v2',
  commit: 'c'.repeat(40),
  waves: [
    { name: 'canary', variants: 1, merged: 1 },
    { name: 'prod', variants: 2, merged: 0 },
  ],
  reached: 0,
  proposing: 'prod',
  waitingOn: ['soak until 2026-03-02T12:00:00.000Z'],
  soakUntil: new Date('2026-03-02T12:00:00Z'),
  ...over,
});
