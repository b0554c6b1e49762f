import { describe, expect, it } from 'vitest';
import type { CommitSignal } from '../forges/forge.js';
import type { RolloutSpec, UpdatePolicy, VariantPolicy } from './policy.js';
import {
  NO_HAND,
  rolloutKey,
  rolloutSignalReads,
  rolloutStatuses,
  signalKey,
  waveAllows,
  type RolloutHand,
  type RolloutVariant,
} from './rollout.js';

// A fleet of one policy (platform) rolling basens v1.5.0 out over canary → early → prod, as the
// plan stage hands it over: per variant its wave, what its base has, and the revision it is due.

const V150 = { ref: 'basens/v1.5.0', commit: 'c150'.padEnd(40, '0'), reason: 'newest release' };
const V140 = { ref: 'basens/v1.4.0', commit: 'c140'.padEnd(40, '0'), reason: 'newest release' };
const WAVES = ['canary', 'early', 'prod'];
const NOW = new Date('2026-12-01T10:00:00Z');
const HOUR = 3_600_000;

function policy(rollout: Partial<RolloutSpec> = {}): UpdatePolicy {
  return {
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
    rollout: { label: 'kdelta.dev/wave', waves: WAVES, soakMs: 0, halted: [], advanced: [], ...rollout },
  };
}

/** A variant: its downstream repository `repo-<x>`, wave, and whether its base has v1.5.0 (merged at) or is due it. */
interface Row {
  readonly name: string;
  readonly wave: string;
  /** merged: the base has v1.5.0 since then; due: it is proposed v1.5.0; ignores: its team ignores it (no target, base at v1.4.0). */
  readonly has: { merged: Date } | 'due' | 'ignores' | 'paused';
}

function fleet(rows: readonly Row[], p: UpdatePolicy): { byVariant: Map<string, VariantPolicy>; variants: RolloutVariant[] } {
  const byVariant = new Map<string, VariantPolicy>();
  const variants: RolloutVariant[] = [];
  for (const r of rows) {
    const repo = `repo-${r.name.split('-')[1]}`;
    variants.push({
      name: r.name,
      upstream: { repository: { name: 'blueprints' }, package: 'basens' },
      downstream: { repository: { name: repo }, url: `https://example.com/${repo}.git` },
    });
    const merged = typeof r.has === 'object';
    byVariant.set(r.name, {
      policy: p,
      wave: { name: r.wave, index: WAVES.indexOf(r.wave) },
      current: {
        baseCommit: `base-${repo}`,
        ref: merged ? V150.ref : V140.ref,
        commit: merged ? V150.commit : V140.commit,
        mergedAt: merged ? (r.has as { merged: Date }).merged : undefined,
      },
      target: r.has === 'due' || r.has === 'paused' ? V150 : undefined,
      why: r.has === 'ignores' ? 'basens/v1.5.0 is ignored by repo team' : undefined,
      downstream: r.has === 'paused' ? { file: 'x', ignore: [], pause: { reason: 'migration week' } } : undefined,
      autoMerge: false,
    });
  }
  return { byVariant, variants };
}

const ok: CommitSignal = { state: 'success' };
const signals = (map: Record<string, CommitSignal>) =>
  new Map(Object.entries(map).map(([repo, s]) => [signalKey(`https://example.com/${repo}.git`, `base-${repo}`, 'flux-system'), s]));

interface Case {
  readonly name: string;
  readonly rows: readonly Row[];
  readonly rollout?: Partial<RolloutSpec>;
  readonly signals?: Record<string, CommitSignal>;
  readonly hand?: RolloutHand;
  /** What the rollout shows. */
  readonly status: Record<string, unknown>;
  /** Which due variants may be proposed now, and the held ones' reason. */
  readonly allows: Record<string, true | string>;
  readonly lookAgain?: Date;
  /** The signals it asks to read (repositories). */
  readonly reads?: readonly string[];
}

const earlier = (hours: number) => ({ merged: new Date(NOW.getTime() - hours * HOUR) });
const ROLLOUT = 'rollout of basens v1.5.0 (policy platform)';

const CASES: readonly Case[] = [
  {
    name: 'nothing merged yet: canary proposed first, early and prod held',
    rows: [
      { name: 'web-a', wave: 'canary', has: 'due' },
      { name: 'web-b', wave: 'canary', has: 'due' },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    status: {
      waves: [
        { name: 'canary', variants: 2, merged: 0 },
        { name: 'early', variants: 0, merged: 0 },
        { name: 'prod', variants: 1, merged: 0 },
      ],
      reached: -1,
      proposing: 'canary',
      waitingOn: ['merge of web-a in repo-a', 'merge of web-b in repo-b'],
    },
    allows: {
      'web-a': true,
      'web-b': true,
      'web-c': `${ROLLOUT}: wave canary has 0 of 2 merged (waits on merge of web-a in repo-a, merge of web-b in repo-b)`,
    },
  },
  {
    name: 'one canary merged: prod waits on the other',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-b', wave: 'canary', has: 'due' },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    status: { reached: -1, proposing: 'canary', waitingOn: ['merge of web-b in repo-b'] },
    allows: { 'web-b': true, 'web-c': `${ROLLOUT}: wave canary has 1 of 2 merged (waits on merge of web-b in repo-b)` },
  },
  {
    name: 'a paused canary is waited for, and says so',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-b', wave: 'canary', has: 'paused' },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    status: { proposing: 'canary', waitingOn: ['merge of web-b in repo-b (paused: migration week)'] },
    allows: { 'web-c': `${ROLLOUT}: wave canary has 1 of 2 merged (waits on merge of web-b in repo-b (paused: migration week))` },
  },
  {
    name: 'a canary whose team ignores the revision is not waited for',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-b', wave: 'canary', has: 'ignores' },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    status: {
      waves: [
        { name: 'canary', variants: 1, merged: 1 },
        { name: 'early', variants: 0, merged: 0 },
        { name: 'prod', variants: 1, merged: 0 },
      ],
      reached: 1,
      proposing: 'prod',
    },
    allows: { 'web-c': true },
  },
  {
    name: 'canary merged, soak not passed: held until the soak ends',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-b', wave: 'canary', has: earlier(1) },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { soakMs: 2 * HOUR },
    status: {
      reached: 1,
      proposing: 'canary',
      soakUntil: new Date('2026-12-01T11:00:00Z'),
      waitingOn: ['soak until 2026-12-01T11:00:00.000Z'],
    },
    allows: { 'web-c': `${ROLLOUT}: wave canary merged; soak until 2026-12-01T11:00:00.000Z` },
    lookAgain: new Date('2026-12-01T11:00:00Z'),
    reads: [],
  },
  {
    name: 'soak passed, no signal named: prod proposed',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { soakMs: 2 * HOUR },
    status: { proposing: 'prod', waitingOn: ['merge of web-c in repo-c'] },
    allows: { 'web-c': true },
    reads: [],
  },
  {
    name: 'soak passed, signal green on every canary: prod proposed',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-b', wave: 'canary', has: earlier(3) },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { soakMs: 2 * HOUR, health: { name: 'flux-system', kind: 'any' } },
    signals: { 'repo-a': ok, 'repo-b': ok },
    status: { proposing: 'prod' },
    allows: { 'web-c': true },
    reads: ['repo-a', 'repo-b'],
  },
  {
    name: 'signal pending on one canary, missing on another: prod waits',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-b', wave: 'canary', has: earlier(3) },
      { name: 'web-d', wave: 'canary', has: earlier(3) },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { health: { name: 'flux-system', kind: 'status' } },
    signals: { 'repo-a': ok, 'repo-b': { state: 'pending' } },
    status: { proposing: 'canary', waitingOn: ['status flux-system on repo-b (pending)', 'status flux-system on repo-d (missing)'] },
    allows: {
      'web-c': `${ROLLOUT}: wave canary merged (waits on status flux-system on repo-b (pending), status flux-system on repo-d (missing))`,
    },
    reads: ['repo-a', 'repo-b', 'repo-d'],
  },
  {
    name: 'signal failed on a canary: halted, and which downstream, which signal, why',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(3) },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { health: { name: 'flux-system', kind: 'check-run' } },
    signals: { 'repo-a': { state: 'failure', description: 'kustomization failed', url: 'https://ci.example.com/1' } },
    status: {
      halted: 'check run flux-system failed on repo-a (canary): kustomization failed https://ci.example.com/1',
      proposing: 'canary',
    },
    allows: {
      'web-c': `${ROLLOUT}: halted: check run flux-system failed on repo-a (canary): kustomization failed https://ci.example.com/1`,
    },
  },
  {
    name: 'halted by hand in the policy: nothing more proposed, not even the canary',
    rows: [
      { name: 'web-a', wave: 'canary', has: 'due' },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { halted: [{ revision: 'v1.5.0', reason: 'paging alert on canary' }] },
    status: { halted: 'by hand (policy platform): paging alert on canary' },
    allows: {
      'web-a': `${ROLLOUT}: halted: by hand (policy platform): paging alert on canary`,
      'web-c': `${ROLLOUT}: halted: by hand (policy platform): paging alert on canary`,
    },
  },
  {
    name: 'a halt of another revision halts nothing here',
    rows: [{ name: 'web-a', wave: 'canary', has: 'due' }],
    rollout: { halted: [{ revision: 'v1.4.0', reason: 'old news' }] },
    status: { halted: undefined },
    allows: { 'web-a': true },
  },
  {
    name: 'halted on the dashboard',
    rows: [{ name: 'web-a', wave: 'canary', has: 'due' }],
    hand: {
      halted: new Set([rolloutKey({ policy: 'platform', upstream: 'blueprints/basens', revision: 'basens/v1.5.0' })]),
      advanced: new Map(),
    },
    status: { halted: 'by hand on the dashboard' },
    allows: { 'web-a': `${ROLLOUT}: halted: by hand on the dashboard` },
  },
  {
    name: 'advanced by hand in the policy to early: early proposed while the canary waits, prod still held',
    rows: [
      { name: 'web-a', wave: 'canary', has: 'due' },
      { name: 'web-e', wave: 'early', has: 'due' },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { advanced: [{ revision: 'basens/v1.5.0', wave: 'early' }] },
    status: { advancedTo: 'early', proposing: 'canary' },
    allows: { 'web-a': true, 'web-e': true, 'web-c': `${ROLLOUT}: wave canary has 0 of 1 merged (waits on merge of web-a in repo-a)` },
  },
  {
    name: 'advanced on the dashboard past a soak',
    rows: [
      { name: 'web-a', wave: 'canary', has: earlier(1) },
      { name: 'web-c', wave: 'prod', has: 'due' },
    ],
    rollout: { soakMs: 24 * HOUR },
    hand: {
      halted: new Set(),
      advanced: new Map([[rolloutKey({ policy: 'platform', upstream: 'blueprints/basens', revision: 'basens/v1.5.0' }), 'prod']]),
    },
    status: { advancedTo: 'prod' },
    allows: { 'web-c': true },
  },
  {
    name: 'an advance never lifts a halt',
    rows: [{ name: 'web-c', wave: 'prod', has: 'due' }],
    rollout: { halted: [{ revision: 'c150000', reason: 'bad commit' }], advanced: [{ revision: 'v1.5.0', wave: 'prod' }] },
    status: { halted: 'by hand (policy platform): bad commit', advancedTo: 'prod' },
    allows: { 'web-c': `${ROLLOUT}: halted: by hand (policy platform): bad commit` },
  },
];

describe('rolloutStatuses and waveAllows', () => {
  it.each(CASES)('$name', (c) => {
    const p = policy(c.rollout);
    const { byVariant, variants } = fleet(c.rows, p);
    const reads = rolloutSignalReads({ byVariant, variants, now: NOW });
    if (c.reads) expect(reads.map((r) => r.downstream)).toEqual(c.reads);
    const rollouts = rolloutStatuses({ byVariant, variants, signals: signals(c.signals ?? {}), hand: c.hand ?? NO_HAND, now: NOW });
    expect(rollouts).toHaveLength(1);
    expect(rollouts[0]).toMatchObject({
      policy: 'platform',
      upstream: 'blueprints/basens',
      revision: 'basens/v1.5.0',
      commit: V150.commit,
    });
    for (const [field, value] of Object.entries(c.status)) expect(rollouts[0]![field as keyof (typeof rollouts)[0]], field).toEqual(value);
    for (const [variant, expected] of Object.entries(c.allows)) {
      const decision = waveAllows({ policy: byVariant.get(variant)!, upstream: 'blueprints/basens', revision: V150, rollouts });
      if (expected === true) expect(decision, variant).toEqual({ pass: true });
      else expect(decision, variant).toEqual({ pass: false, reason: expected, ...(c.lookAgain ? { lookAgain: c.lookAgain } : {}) });
    }
  });

  it('reads no signal, and has no rollout, where no variant of a rollout policy is due a revision', () => {
    const p = policy({ health: { name: 'flux-system', kind: 'any' } });
    const { byVariant, variants } = fleet([{ name: 'web-a', wave: 'canary', has: earlier(3) }], p);
    expect(rolloutSignalReads({ byVariant, variants, now: NOW })).toEqual([]);
    expect(rolloutStatuses({ byVariant, variants, signals: new Map(), now: NOW })).toEqual([]);
  });

  it("a failed signal's description is a stranger's text: one line, control characters as spaces, bounded", () => {
    const p = policy({ health: { name: 'flux-system', kind: 'any' } });
    const { byVariant, variants } = fleet(
      [
        { name: 'web-a', wave: 'canary', has: earlier(3) },
        { name: 'web-c', wave: 'prod', has: 'due' },
      ],
      p,
    );
    const description = `bad\n## FORGED\r\u001b[31mred\u2028${'x'.repeat(500)}`;
    const [r] = rolloutStatuses({ byVariant, variants, signals: signals({ 'repo-a': { state: 'failure', description } }), now: NOW });
    expect(r!.halted).toMatch(/^status flux-system failed on repo-a \(canary\): bad ## FORGED {2}\[31mred x+…$/);
    expect(r!.halted!.length).toBeLessThan(260);
  });

  it('a variant without a rollout (a policy without one) is always allowed', () => {
    const p = { ...policy(), rollout: undefined };
    const { byVariant, variants } = fleet([{ name: 'web-c', wave: 'prod', has: 'due' }], p);
    const rollouts = rolloutStatuses({ byVariant, variants, signals: new Map(), now: NOW });
    expect(rollouts).toEqual([]);
    expect(waveAllows({ policy: byVariant.get('web-c')!, upstream: 'blueprints/basens', revision: V150, rollouts })).toEqual({
      pass: true,
    });
  });
});
