import { join } from 'node:path';
import { packageVariant, repository, tempDir, writeTree } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadControl } from '../control/control.js';
import { jobKey, NO_TICKS, type DashboardTicks } from '../dashboard/dashboard.js';
import type { Forge } from '../forges/forge.js';
import { createLocalForge } from '../forges/local.js';
import { variantTarget } from '../jobs/variant.js';
import type { PlannedJob } from '../plan/jobs-plan.js';
import { planRun, type Plan } from '../plan/plan.js';
import { renderMetadataBlock } from '../propose/proposal-metadata.js';
import type { PolicyPlan, UpdatePolicy, VariantPolicy } from '../policy/policy.js';
import { normaliseSettings, resolveSettings } from '../settings/settings.js';
import { PASS, type Gate, type GateContext } from './gate.js';
import { applyGates } from './gates.js';
import { allotRoom, limits } from './limits.js';
import { rmSync } from 'node:fs';

const NOW = new Date('2026-03-02T10:00:00Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

describe('allotRoom: which new proposals a policy has room for', () => {
  const cases: {
    name: string;
    limits: UpdatePolicy['limits'];
    /** When the open proposals were opened (each counts open). */
    open: (string | undefined)[];
    candidates: string[];
    expected: Record<string, string>;
  }[] = [
    {
      name: 'no limit given: every candidate',
      limits: {},
      open: [minutesAgo(1), minutesAgo(2)],
      candidates: ['a', 'b'],
      expected: { a: 'pass', b: 'pass' },
    },
    {
      name: 'open limit: the first candidates fill the room, the rest wait for merges',
      limits: { openProposals: 3 },
      open: [minutesAgo(120)],
      candidates: ['a', 'b', 'c', 'd'],
      expected: {
        a: 'pass',
        b: 'pass',
        c: 'policy platform allows 3 open proposals: 1 is open, 2 more open this run',
        d: 'policy platform allows 3 open proposals: 1 is open, 2 more open this run',
      },
    },
    {
      name: 'open limit reached: none, and no time to look again',
      limits: { openProposals: 2 },
      open: [minutesAgo(120), minutesAgo(300)],
      candidates: ['a'],
      expected: { a: 'policy platform allows 2 open proposals: 2 are open' },
    },
    {
      name: 'hourly limit: only proposals of the last hour count; the next room when the oldest of them is an hour old',
      limits: { perHour: 2 },
      open: [minutesAgo(10), minutesAgo(50), minutesAgo(61), undefined],
      candidates: ['a', 'b'],
      expected: {
        a: `policy platform allows 2 new proposals an hour: 2 new in the last hour @ ${minutesAgo(50 - 60)}`,
        b: `policy platform allows 2 new proposals an hour: 2 new in the last hour @ ${minutesAgo(50 - 60)}`,
      },
    },
    {
      name: 'both: the tighter one decides, and says which',
      limits: { openProposals: 10, perHour: 1 },
      open: [minutesAgo(90)],
      candidates: ['a', 'b'],
      expected: {
        a: 'pass',
        b: 'policy platform allows 1 new proposal an hour: 0 new in the last hour, 1 more open this run @ 2026-03-02T11:00:00.000Z',
      },
    },
  ];
  it.each(cases)('$name', ({ limits: l, open, candidates, expected }) => {
    const decisions = allotRoom({ policy: 'platform', limits: l, open: open.length, opened: open, candidates }, NOW);
    const seen = Object.fromEntries(
      [...decisions].map(([name, d]) => [name, d.pass ? 'pass' : `${d.reason}${d.lookAgain ? ` @ ${d.lookAgain.toISOString()}` : ''}`]),
    );
    expect(seen).toEqual(expected);
  });
});

function policy(limitsGiven: UpdatePolicy['limits'], name = 'platform'): UpdatePolicy {
  return {
    name,
    source: { file: '.kdelta/policy.yaml', document: 0 },
    selector: {},
    updateTypes: new Set(['patch', 'minor', 'major']),
    ignore: [],
    minimumReleaseAgeMs: 0,
    separateMajor: true,
    freezes: [],
    limits: limitsGiven,
    group: 'none',
  };
}

const revision = (commit: string) => ({ ref: 'v2', commit, reason: 'the latest release' });

/** Four variants, one per downstream, planned from real control resources. */
async function fleetPlan(): Promise<{ plan: Plan; proposals: string }> {
  const dir = tempDir();
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const names = ['web-a', 'web-b', 'web-c', 'web-d', 'other'];
  writeTree(dir, {
    '.kdelta/repositories.yaml': [
      repository('catalog', '/srv/upstream.git'),
      ...names.map((n) => repository(`repo-${n}`, `/srv/${n}.git`)),
    ].join('---\n'),
    ...Object.fromEntries(names.map((n) => [`.kdelta/${n}.yaml`, packageVariant(n, `repo-${n}`)])),
  });
  const control = await loadControl({ dir: join(dir, '.kdelta') });
  return { plan: planRun(control, { cwd: dir }), proposals: join(dir, 'proposals') };
}

/** The local forge, counting what it is asked. */
function counted(forge: Forge): Forge & { finds: string[] } {
  const finds: string[] = [];
  return Object.assign(Object.create(forge) as Forge, {
    finds,
    find: (t: Parameters<Forge['find']>[0]) => {
      finds.push(t.head);
      return forge.find(t);
    },
  });
}

/** No setting given anywhere: the defaults (branch prefix `kdelta/`). */
const none = normaliseSettings({ values: {}, originOf: () => undefined });

function context(
  plan: Plan,
  policies: PolicyPlan,
  forge: Pick<Forge, 'find'>,
  ticks: DashboardTicks = NO_TICKS,
  shard?: string[],
): GateContext {
  const jobs: PlannedJob[] = plan.variants
    .filter((v) => !shard || shard.includes(v.name))
    .map((v) => ({ kind: 'variant', variant: v.name, downstream: `${v.downstream.repository.name}/${v.downstream.package}`, plan: v }));
  return {
    now: NOW,
    dryRun: false,
    settings: resolveSettings(none, none, { config: '.kdelta' }),
    ticks,
    jobs,
    plan,
    policies,
    forge,
  };
}

describe('the limits gate', () => {
  async function setup(limitsGiven: UpdatePolicy['limits']) {
    const { plan, proposals } = await fleetPlan();
    const forge = counted(createLocalForge({ dir: proposals, now: () => new Date(minutesAgo(30)) }));
    const p = policy(limitsGiven);
    const governed = (): VariantPolicy => ({
      policy: p,
      target: revision('c2'),
      current: { baseCommit: 'b', commit: 'c1' },
      autoMerge: false,
    });
    const byVariant = new Map<string, VariantPolicy>(['web-a', 'web-b', 'web-c', 'web-d'].map((n) => [n, governed()]));
    // web-a has an open proposal already
    const a = plan.variants.find((v) => v.name === 'web-a')!;
    await forge.upsert({ ...variantTarget(a, 'kdelta/'), title: 't', body: 'b\n', fingerprint: 'f' });
    forge.finds.length = 0;
    return { plan, forge, policies: { byVariant, rollouts: [], warnings: [] } satisfies PolicyPlan };
  }

  const outcome = (gated: Awaited<ReturnType<typeof applyGates>>) => ({
    proposing: gated.jobs.map((j) => j.variant),
    held: gated.held.map((r) => [r.variant, r.heldBy, r.message]),
  });

  it('a variant with an open proposal updates it; the room goes by name; an ungoverned variant is never read', async () => {
    const { plan, forge, policies } = await setup({ openProposals: 3 });
    const gated = await applyGates([limits], context(plan, policies, forge));
    expect(outcome(gated)).toEqual({
      proposing: ['other', 'web-a', 'web-b', 'web-c'],
      held: [['web-d', 'limits', 'policy platform allows 3 open proposals: 1 is open, 2 more open this run']],
    });
    // one look per governed variant's branch (and its separate major's), once for the whole run; none for `other`
    expect(forge.finds.sort()).toEqual(
      ['web-a', 'web-a-major', 'web-b', 'web-b-major', 'web-c', 'web-c-major', 'web-d', 'web-d-major'].map((b) => `kdelta/${b}`),
    );
  });

  it('a job a person asked to retry gets the room first', async () => {
    const { plan, forge, policies } = await setup({ openProposals: 2 });
    const d = plan.variants.find((v) => v.name === 'web-d')!;
    const ticks: DashboardTicks = { ...NO_TICKS, retry: new Set([jobKey('web-d', `${d.downstream.repository.name}/web-d`)]) };
    const gated = await applyGates([limits], context(plan, policies, forge, ticks));
    expect(outcome(gated).proposing).toEqual(['other', 'web-a', 'web-d']);
  });

  it('alike in every shard: a shard gives the room to the variants the whole plan gives it to', async () => {
    const { plan, forge, policies } = await setup({ openProposals: 3 });
    const shard = await applyGates([limits], context(plan, policies, forge, NO_TICKS, ['web-c', 'web-d']));
    expect(outcome(shard)).toEqual({
      proposing: ['web-c'],
      held: [['web-d', 'limits', 'policy platform allows 3 open proposals: 1 is open, 2 more open this run']],
    });
  });

  it('a variant a gate before it holds takes no room, in this shard or another', async () => {
    const { plan, forge, policies } = await setup({ openProposals: 3 });
    const holdB: Gate = { name: 'wave', decide: (job) => (job.variant === 'web-b' ? { pass: false, reason: 'wave prod waits' } : PASS) };
    const shard = await applyGates([holdB, limits], context(plan, policies, forge, NO_TICKS, ['web-c', 'web-d']));
    expect(outcome(shard)).toEqual({ proposing: ['web-c', 'web-d'], held: [] });
  });

  it('the hourly limit counts the open proposals of the last hour and says when to look again', async () => {
    const { plan, forge, policies } = await setup({ perHour: 2 });
    const gated = await applyGates([limits], context(plan, policies, forge));
    // web-a's proposal was opened 30 minutes ago: room for one more, until 10:30
    expect(outcome(gated)).toEqual({
      proposing: ['other', 'web-a', 'web-b'],
      held: [
        [
          'web-c',
          'limits',
          'policy platform allows 2 new proposals an hour: 1 new in the last hour, 1 more open this run (looked at again from 2026-03-02T10:30:00.000Z)',
        ],
        [
          'web-d',
          'limits',
          'policy platform allows 2 new proposals an hour: 1 new in the last hour, 1 more open this run (looked at again from 2026-03-02T10:30:00.000Z)',
        ],
      ],
    });
  });

  it('a variant whose base has the target already opens nothing new and takes no room; its open proposal (merged) leaves room', async () => {
    const { plan, forge, policies } = await setup({ openProposals: 2 });
    const byVariant = new Map(policies.byVariant);
    const b = byVariant.get('web-b')!;
    byVariant.set('web-b', { ...b, current: { baseCommit: 'b', commit: 'c2' } });
    const gated = await applyGates([limits], context(plan, { ...policies, byVariant }, forge));
    expect(outcome(gated).proposing).toEqual(['other', 'web-a', 'web-b', 'web-c']);
    // web-a's base has what its open proposal proposes (merged, to be closed by this run's job): web-c and web-d get the room
    const a = plan.variants.find((v) => v.name === 'web-a')!;
    const meta = renderMetadataBlock({
      version: '1',
      variant: 'web-a',
      fingerprint: 'f',
      headCommit: 'h'.repeat(40),
      baseCommit: 'b'.repeat(40),
      upstream: { repo: '/srv/upstream.git', ref: 'v2', commit: 'c2' },
      conflicts: 0,
      kind: 'variant',
    });
    await forge.upsert({ ...variantTarget(a, 'kdelta/'), title: 't', body: `b\n${meta}\n`, fingerprint: 'f2' });
    byVariant.set('web-a', { ...byVariant.get('web-a')!, target: undefined, current: { baseCommit: 'b', commit: 'c2' } });
    const merged = await applyGates([limits], context(plan, { ...policies, byVariant }, forge));
    expect(outcome(merged)).toEqual({ proposing: ['other', 'web-a', 'web-b', 'web-c', 'web-d'], held: [] });
    // not merged yet (the base has another commit): it stays open, and keeps its room
    byVariant.set('web-a', { ...byVariant.get('web-a')!, current: { baseCommit: 'b', commit: 'c1' } });
    const stays = await applyGates([limits], context(plan, { ...policies, byVariant }, forge));
    expect(outcome(stays).held.map((h) => h[0])).toEqual(['web-d']);
  });

  it("a separate major's proposal takes room of its own, after its variant's by name; an open one counts", async () => {
    const { plan, forge, policies } = await setup({ openProposals: 3 });
    const byVariant = new Map(policies.byVariant);
    byVariant.set('web-b', { ...byVariant.get('web-b')!, major: { ref: 'v3', commit: 'c3', reason: 'a major release' } });
    const ctx = context(plan, { ...policies, byVariant }, forge);
    const b = ctx.jobs.find((j) => j.variant === 'web-b')!;
    const jobs = [...ctx.jobs, { ...b, downstream: `${b.downstream} (major)`, major: true }];
    const gated = await applyGates([limits], { ...ctx, jobs });
    expect(outcome(gated)).toEqual({
      proposing: ['other', 'web-a', 'web-b', 'web-b'],
      held: [
        ['web-c', 'limits', 'policy platform allows 3 open proposals: 1 is open, 2 more open this run'],
        ['web-d', 'limits', 'policy platform allows 3 open proposals: 1 is open, 2 more open this run'],
      ],
    });
    // the major's proposal open: it counts, and its job updates it
    const d = plan.variants.find((v) => v.name === 'web-b')!;
    await forge.upsert({ ...variantTarget(d, 'kdelta/'), head: 'kdelta/web-b-major', title: 't', body: 'b\n', fingerprint: 'f' });
    const again = await applyGates([limits], { ...ctx, jobs });
    expect(outcome(again).proposing).toEqual(['other', 'web-a', 'web-b', 'web-b']);
    expect(outcome(again).held.map((h) => h[2])).toEqual([
      'policy platform allows 3 open proposals: 2 are open, 1 more open this run',
      'policy platform allows 3 open proposals: 2 are open, 1 more open this run',
    ]);
  });

  it("a policy that groups by repository: a repository's group is one proposal, taking one room for all its members", async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    // web-a and web-b share repo-one (one group), web-c is alone in repo-two (a group of one), web-d in repo-three
    const at = { 'web-a': 'repo-one', 'web-b': 'repo-one', 'web-c': 'repo-two', 'web-d': 'repo-three' };
    writeTree(dir, {
      '.kdelta/repositories.yaml': [
        repository('catalog', '/srv/upstream.git'),
        ...['repo-one', 'repo-two', 'repo-three'].map((r) => repository(r, `/srv/${r}.git`)),
      ].join('---\n'),
      ...Object.fromEntries(Object.entries(at).map(([n, r]) => [`.kdelta/${n}.yaml`, packageVariant(n, r)])),
    });
    const plan = planRun(await loadControl({ dir: join(dir, '.kdelta') }), { cwd: dir });
    const forge = counted(createLocalForge({ dir: join(dir, 'proposals') }));
    const p = { ...policy({ openProposals: 2 }), group: 'repository' as const };
    const byVariant = new Map<string, VariantPolicy>(
      Object.keys(at).map((n) => [n, { policy: p, target: revision('c2'), current: { baseCommit: 'b', commit: 'c1' }, autoMerge: false }]),
    );
    const gated = await applyGates([limits], context(plan, { byVariant, rollouts: [], warnings: [] }, forge));
    // two rooms: repo-one's group (both members) and repo-three's (by its key's order), repo-two's waits
    expect(outcome(gated)).toEqual({
      proposing: ['web-a', 'web-b', 'web-d'],
      held: [['web-c', 'limits', 'policy platform allows 2 open proposals: 0 are open, 2 more open this run']],
    });
    // one look per repository's group branch (and per major branch), never per member
    expect(forge.finds.filter((h) => h.includes('group-')).sort()).toEqual([
      'kdelta/group-platform',
      'kdelta/group-platform',
      'kdelta/group-platform',
    ]);
  });
});
