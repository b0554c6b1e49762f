import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import type { RunReport } from '../../src/index.js';
import { describeScenarios } from './harness.js';

/**
 * An update policy's limits, on every forge: at most so many open proposals of its variants, and
 * so many new ones an hour. The rest waits, held by the `limits` gate, and the report and the
 * dashboard say why and when to look again; a variant with an open proposal keeps updating it.
 */

const policy = (limits: string) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  limits:\n${limits}`;

/** Three variants following the upstream's releases, one per downstream. */
const VARIANTS = {
  'web-1.yaml': packageVariant('web-1', 'cluster-01', '', '""'),
  'web-2.yaml': packageVariant('web-2', 'cluster-02', '', '""'),
  'web-3.yaml': packageVariant('web-3', 'cluster-03', '', '""'),
};
const DOWNSTREAMS = ['cluster-01', 'cluster-02', 'cluster-03'];

const outcome = (report: RunReport) => report.results.map((r) => [r.variant, r.action, r.heldBy ?? '-']);

describeScenarios('update policy limits', {}, ({ fleet }) => {
  it('at most N open proposals: the first by name are proposed, the rest held until one is merged', async () => {
    const f = await fleet(DOWNSTREAMS, { ...VARIANTS, 'policy.yaml': policy('    openProposals: 2\n') }, { dashboard: true });

    const first = await f.run();
    expect(outcome(first)).toEqual([
      ['web-1', 'proposed', '-'],
      ['web-2', 'proposed', '-'],
      ['web-3', 'deferred', 'limits'],
    ]);
    expect(first.failed).toBe(0);
    expect(first.results[2]!.message).toBe('policy platform allows 2 open proposals: 0 are open, 2 more open this run');
    expect(f.tip('cluster-03', 'kdelta/web-3')).toBeUndefined();
    expect(f.dashboard()).toContain(
      '- `web-3` → `cluster-03/web-3`, held by `limits`: `policy platform allows 2 open proposals: 0 are open, 2 more open this run`',
    );

    // the two open ones keep their room (and are updated, not held); the third still waits
    const second = await f.run();
    expect(outcome(second)).toEqual([
      ['web-1', 'unchanged', '-'],
      ['web-2', 'unchanged', '-'],
      ['web-3', 'deferred', 'limits'],
    ]);
    expect(second.results[2]!.message).toBe('policy platform allows 2 open proposals: 2 are open');

    // a reviewer merges one: its room goes to the one that waited
    await f.merge('cluster-01', 'kdelta/web-1');
    const third = await f.run();
    expect(outcome(third)).toEqual([
      ['web-1', 'up-to-date', '-'],
      ['web-2', 'unchanged', '-'],
      ['web-3', 'proposed', '-'],
    ]);
    expect(f.proposal('cluster-03', 'kdelta/web-3').state).toBe('open');
  });

  it('at most M new an hour: the rest held until the oldest of the hour is an hour old', async () => {
    const f = await fleet(DOWNSTREAMS.slice(0, 2), {
      'web-1.yaml': VARIANTS['web-1.yaml'],
      'web-2.yaml': VARIANTS['web-2.yaml'],
      'policy.yaml': policy('    perHour: 1\n'),
    });
    const first = await f.run();
    expect(outcome(first)).toEqual([
      ['web-1', 'proposed', '-'],
      ['web-2', 'deferred', 'limits'],
    ]);
    expect(first.results[1]!.message).toMatch(
      /^policy platform allows 1 new proposal an hour: 0 new in the last hour, 1 more open this run \(looked at again from \d{4}-.*Z\)$/,
    );

    // the next run within the hour: the forge says when web-1's proposal was opened
    const second = await f.run();
    const held = /^policy platform allows 1 new proposal an hour: 1 new in the last hour \(looked at again from (.*)\)$/.exec(
      second.results[1]!.message ?? '',
    );
    expect(held, second.results[1]!.message).not.toBeNull();
    const next = new Date(held![1]!);
    expect(next.getTime() - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(60 * 60_000);

    // an hour after it: room again
    const later = await f.run({ now: () => next });
    expect(outcome(later)).toEqual([
      ['web-1', 'unchanged', '-'],
      ['web-2', 'proposed', '-'],
    ]);
  });

  it("a policy that groups by repository: a repository's group takes one room, for all its packages", async () => {
    const f = await fleet(['cluster-01', 'cluster-02'], {
      'web.yaml': packageVariant('web', 'cluster-01', '', '""'),
      'api.yaml': packageVariant('api', 'cluster-01', '', '""'),
      'db.yaml': packageVariant('db', 'cluster-02', '', '""'),
      'policy.yaml': `${policy('    openProposals: 1\n')}  group: repository\n`,
    });
    const first = await f.run();
    expect(outcome(first)).toEqual([
      ['api', 'proposed', '-'],
      ['db', 'deferred', 'limits'],
      ['web', 'proposed', '-'],
    ]);
    expect(first.results.find((r) => r.variant === 'db')!.message).toBe(
      'policy platform allows 1 open proposal: 0 are open, 1 more open this run',
    );
    expect(f.proposals('cluster-01', 'kdelta/group-platform')).toHaveLength(1);
    // the group's proposal is open: its members update it; the other repository's still waits
    const second = await f.run();
    expect(outcome(second)).toEqual([
      ['api', 'unchanged', '-'],
      ['db', 'deferred', 'limits'],
      ['web', 'unchanged', '-'],
    ]);
    expect(second.results.find((r) => r.variant === 'db')!.message).toBe('policy platform allows 1 open proposal: 1 is open');
  });
});
