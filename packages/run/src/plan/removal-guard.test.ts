import { packageVariant } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { jobKey, removalSetKey } from '../dashboard/dashboard.js';
import type { Removal } from '../jobs/removal.js';
import type { RetiredDraft } from '../jobs/retire.js';
import { actions, bothForges, type ScenarioFleet } from './__fixtures__/both-forges.js';
import { removalGuard, type RemovalGuardInput } from './removal-guard.js';

const removal = (variant: string, policy: Removal['policy'] = 'delete'): Removal => ({
  variant,
  repository: 'cluster-01',
  url: '/repos/cluster-01.git',
  branch: 'main',
  directory: variant,
  policy,
});
const draft = (variant: string): RetiredDraft => ({
  variant,
  repository: 'cluster-01',
  url: '/repos/cluster-01.git',
  target: { downstream: 'cluster-01', repo: '/repos/cluster-01.git', head: `kdelta/${variant}`, base: 'main' },
  directory: variant,
});

const [web, api, db] = [removal('web'), removal('api', 'orphan'), removal('db')];
const queue = draft('queue');
const keys = (...variants: string[]) => removalSetKey(variants.map((v) => jobKey(v, `cluster-01/${v}`)));
/** Shard 1 of 2 runs web and api (their names' hash), shard 2 db and queue. */
const shard1 = (v: string) => v === 'web' || v === 'api';
const shard2 = (v: string) => !shard1(v);

describe('the removal guard decides on the whole plan', () => {
  const base: RemovalGuardInput = { removals: [], drafts: [], proposed: new Set(), max: 2, allowed: new Set(), mine: () => true };
  it.each<{ name: string; input: Partial<RemovalGuardInput>; count: number; run: string[]; held: string[]; allowedBy?: string }>([
    { name: 'as many as allowed: all run', input: { removals: [web, api] }, count: 2, run: ['web', 'api'], held: [] },
    { name: 'more than allowed: none runs', input: { removals: [web, api, db] }, count: 3, run: [], held: ['web', 'api', 'db'] },
    {
      name: 'in every shard alike: a shard counts the whole plan, and holds its part',
      input: { removals: [web, api, db], mine: shard2 },
      count: 3,
      run: [],
      held: ['db'],
    },
    {
      name: 'removals proposed already are not counted (and run, to keep their proposals current)',
      input: { removals: [web, api, db], proposed: new Set([web, api]) },
      count: 1,
      run: ['web', 'api', 'db'],
      held: [],
    },
    {
      name: 'while it holds, a removal proposed already still runs; nothing new does',
      input: { removals: [web, api, db], drafts: [queue], proposed: new Set([web]) },
      count: 3,
      run: ['web'],
      held: ['api', 'db', 'queue'],
    },
    {
      name: 'closing an open proposal of a gone variant counts, and is held',
      input: { removals: [web, api], drafts: [queue] },
      count: 3,
      run: [],
      held: ['web', 'api', 'queue'],
    },
    {
      name: 'a tick allows the set the dashboard showed',
      input: { removals: [web, api, db], allowed: new Set([keys('web', 'api', 'db')]) },
      count: 3,
      run: ['web', 'api', 'db'],
      held: [],
      allowedBy: keys('web', 'api', 'db'),
    },
    {
      name: "a shard's dashboard shows its part: its tick allows that part",
      input: { removals: [web, api, db], allowed: new Set([keys('web', 'api')]), mine: shard1 },
      count: 3,
      run: ['web', 'api'],
      held: [],
      allowedBy: keys('web', 'api'),
    },
    {
      name: 'a tick of another set allows nothing',
      input: { removals: [web, api, db], allowed: new Set([keys('web', 'api')]) },
      count: 3,
      run: [],
      held: ['web', 'api', 'db'],
    },
  ])('$name', ({ input, count, run, held, allowedBy }) => {
    const decided = removalGuard({ ...base, ...input });
    expect(decided.count).toBe(count);
    expect([...decided.removals, ...decided.drafts].map((r) => r.variant)).toEqual(run);
    expect(decided.held.map((h) => h.variant)).toEqual(held);
    expect(decided.allowedBy).toBe(allowedBy);
    expect(decided.message === undefined).toBe(count <= 2 || allowedBy !== undefined);
  });

  it('a shard with no part of what it holds says so', () => {
    const decided = removalGuard({ ...base, removals: [web, api, db], mine: (v) => v === 'other' });
    expect(decided.held).toEqual([]);
    expect(decided.warning).toMatch(/^the removal guard holds the removals of other shards: 3 removals are due/);
    expect(removalGuard({ ...base, removals: [web, api, db] }).warning).toBeUndefined();
  });

  it('says what it counted, what it did not, and how to allow them', () => {
    const { message } = removalGuard({ ...base, removals: [web, api, db], drafts: [queue], proposed: new Set([db]) });
    expect(message).toBe(
      '3 removals are due (2 packages to remove or orphan, 1 open proposals of gone variants to close), more than max-removals (2): none was proposed. ' +
        '1 removals already proposed are not counted. Variants gone: web (cluster-01/web, delete), api (cluster-01/api, orphan), queue (cluster-01/queue, close its open proposal). ' +
        'If the control resources are wrong (a selector or a label that no longer selects a repository removes its variants), fix them; ' +
        "if these variants were removed on purpose, allow their removal with --max-removals 3 (the Action's input max-removals, RunSettings spec.maxRemovals)",
    );
  });
});

const forges = bothForges();

/** web, api and db proposed and merged into cluster-01, then gone from the control resources (queue's proposal, if any, left open). */
async function goneFleet(f: ScenarioFleet, open: readonly string[] = []): Promise<void> {
  const merged = ['web', 'api', 'db'];
  f.writeControl(Object.fromEntries([...merged, ...open].map((v) => [`${v}.yaml`, packageVariant(v, 'cluster-01')])));
  expect((await f.run()).failed).toBe(0);
  for (const v of merged) await f.merge('cluster-01', v);
  f.writeControl(Object.fromEntries([...merged, ...open].map((v) => [`${v}.yaml`, null])));
}

const held = (...variants: string[]) => Object.fromEntries(variants.map((v) => [`${v} cluster-01/${v}`, 'failed removals-held']));

describe.each(forges)('removals are guarded ($name forge)', (forge) => {
  it('counts the whole plan in every shard: 3 due with max 2 hold both shards of --shard k/2, as they hold an unsharded run', async () => {
    const f = await forge.fleet(['cluster-01']);
    await goneFleet(f);
    const before = f.snapshot();
    const unsharded = await f.run({ maxRemovals: 2 });
    expect(actions(unsharded)).toEqual(held('web', 'api', 'db'));
    // web and api are shard 1's, db shard 2's: neither part alone is more than 2
    const first = await f.run({ maxRemovals: 2, shard: '1/2' });
    expect(actions(first)).toEqual(held('web', 'api'));
    const second = await f.run({ maxRemovals: 2, shard: '2/2' });
    expect(actions(second)).toEqual(held('db'));
    for (const report of [unsharded, first, second]) {
      expect(report.results[0]?.error).toMatch(/^3 removals are due, more than max-removals \(2\): none was proposed/);
    }
    expect(f.snapshot()).toEqual(before);
  });

  it('after "allow these removals", the next run with nothing changed passes: removal proposals already open are not counted', async () => {
    const f = await forge.fleet(['cluster-01']);
    await goneFleet(f);
    expect(actions(await f.runWithDashboard({ maxRemovals: 2 }))).toEqual(held('web', 'api', 'db'));
    f.tickAllowRemovals();
    const allowed = await f.runWithDashboard({ maxRemovals: 2 });
    expect(actions(allowed)).toEqual({
      'api cluster-01/api': 'removal-proposed',
      'db cluster-01/db': 'removal-proposed',
      'web cluster-01/web': 'removal-proposed',
    });
    const again = await f.runWithDashboard({ maxRemovals: 2 });
    expect(again.failed).toBe(0);
    expect(actions(again)).toEqual({
      'api cluster-01/api': 'unchanged',
      'db cluster-01/db': 'unchanged',
      'web cluster-01/web': 'unchanged',
    });
  });

  it('closing the open proposal of a gone variant is guarded too: held, it stays open with its branch', async () => {
    const f = await forge.fleet(['cluster-01']);
    await goneFleet(f, ['queue']);
    const report = await f.run({ maxRemovals: 3 });
    expect(actions(report)).toEqual(held('web', 'api', 'db', 'queue'));
    expect(report.results[0]?.error).toMatch(
      /^4 removals are due \(3 packages to remove or orphan, 1 open proposals of gone variants to close\), more than max-removals \(3\)/,
    );
    expect(f.hasBranch('cluster-01', 'queue')).toBe(true);
    // allowed, it is closed and its branch deleted
    const allowed = await f.run({ maxRemovals: 4 });
    expect(actions(allowed)).toMatchObject({ 'queue cluster-01/queue': 'closed', 'web cluster-01/web': 'removal-proposed' });
    expect(f.hasBranch('cluster-01', 'queue')).toBe(false);
  });
});
