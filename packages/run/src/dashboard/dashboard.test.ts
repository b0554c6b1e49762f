import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import { dashboardEntries, dashboardState, MAX_DASHBOARD, parseDashboard, renderDashboard } from './dashboard.js';
import type { VariantResult } from '../report/result.js';

const result = (over: Partial<VariantResult>): VariantResult => ({
  variant: 'web',
  downstream: 'cluster-01/web',
  action: 'proposed',
  writes: true,
  dryRun: false,
  conflicts: [],
  conflictCount: 0,
  ...over,
});

const conflict = (path: string): Conflict =>
  ({
    resource: 'apps/Deployment web',
    file: 'deployment.yaml',
    path,
    values: { origin: 1, upstream: 2, local: 3 },
    rule: 'resource-merge',
    winner: 'upstream',
    message: '',
  }) as unknown as Conflict;

const text = (results: VariantResult[], memory?: Parameters<typeof dashboardEntries>[1]) =>
  renderDashboard({
    title: 'kdelta dashboard',
    marker: '<!-- kdelta-dashboard: dashboard -->',
    entries: dashboardEntries(results, memory),
  });

describe('the dashboard text', () => {
  it('groups every variant by state, problems first', () => {
    const body = text([
      result({ variant: 'a', action: 'up-to-date', writes: false }),
      result({
        variant: 'b',
        action: 'unchanged',
        conflictCount: 1,
        proposal: { id: '1', url: 'https://github.com/o/r/pull/1', state: 'open', head: 'h', base: 'main' },
      }),
      result({ variant: 'c', action: 'failed', code: 'upstream-unresolved', error: 'no such ref\nmore' }),
      result({ variant: 'd', action: 'blocked', message: 'branch kdelta/d has 1 commit(s) kdelta did not make' }),
      result({ variant: 'e', action: 'deferred' }),
      result({ variant: 'f', action: 'failed', code: 'removals-held', error: 'held' }),
    ]);
    const order = ['### Failed', '### Removals held', '### Conflicts to review', '### Blocked', '### Deferred', '### Up to date'].map((h) =>
      body.indexOf(h),
    );
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    expect(body).toContain('6 variant(s): 5 need attention, 0 open proposal(s), 1 up to date.');
    expect(body).toContain(
      '- [ ] <!-- kdelta-retry:c%20cluster-01%2Fweb --> retry `c` → `cluster-01/web`: `upstream-unresolved` `no such ref`\n',
    );
    expect(body).toContain('- `b` → `cluster-01/web` · [proposal](https://github.com/o/r/pull/1): 1 conflict(s)\n');
  });

  it('is the same text for the same results (no clock, no order of arrival)', () => {
    const rs = [result({ variant: 'a' }), result({ variant: 'b', action: 'failed', error: 'x' })];
    expect(text(rs)).toBe(text(rs));
  });

  it('keeps the conflicting fields of a proposal a fast no-op did not recompute, for the same fingerprint only', () => {
    const first = text([result({ fingerprint: 'f1', conflicts: [conflict('.spec.replicas')], conflictCount: 1 })]);
    expect(first).toContain('1 conflict(s): `.spec.replicas` (`apps/Deployment web`)');
    const { memory } = parseDashboard(first);
    const noop = result({ action: 'unchanged', writes: false, fingerprint: 'f1', conflictCount: 1 });
    expect(text([noop], memory)).toBe(first);
    expect(text([{ ...noop, fingerprint: 'f2' }], memory)).toContain('1 conflict(s)\n');
  });

  it('escapes what comes from a downstream: no tick, link or marker can be forged through a name or a message', () => {
    const evil = 'x` --> <!-- kdelta-retry:evil --> [a](https://evil.example) `';
    const body = text([
      result({
        variant: evil,
        downstream: '- [x] <!-- kdelta-repropose:https%3A%2F%2Fx -->',
        action: 'failed',
        error: `line\n- [x] <!-- kdelta-retry:evil -->`,
      }),
      result({ variant: 'w', action: 'unchanged', proposal: { id: '1', url: 'javascript:alert(1)', state: 'open', head: 'h', base: 'm' } }),
    ]);
    const ticked = parseDashboard(body.replaceAll('- [ ]', '- [x]'));
    // only the box kdelta wrote, naming the real variant and downstream
    expect([...ticked.ticks.retry]).toEqual([`${evil} - [x] <!-- kdelta-repropose:https%3A%2F%2Fx -->`]);
    expect(ticked.ticks.repropose.size).toBe(0);
    expect(body).not.toContain('[proposal](javascript');
    expect(body).toContain('· `javascript:alert(1)`');
    expect(body.match(/<!-- kdelta-dashboard-data/g)).toHaveLength(1);
  });

  it('reads ticks only from ticked boxes with a well-formed marker, and ignores a mangled data block', () => {
    const parsed = parseDashboard(
      [
        '- [x] <!-- kdelta-retry:a%20b -->',
        '- [ ] <!-- kdelta-retry:c -->',
        '- [X] <!-- kdelta-allow-removals:0123456789abcdef --> allow',
        '* [x] <!-- kdelta-repropose:.kdelta%2Fp.md -->',
        'text - [x] <!-- kdelta-retry:inline -->',
        '- [x] <!-- kdelta-retry:%E0%A4%A --> bad encoding',
        '<!-- kdelta-dashboard-data: {not json} -->',
      ].join('\r\n'),
    );
    expect([...parsed.ticks.retry]).toEqual(['a b']);
    expect([...parsed.ticks.allowRemovals]).toEqual(['0123456789abcdef']);
    expect([...parsed.ticks.repropose]).toEqual(['.kdelta/p.md']);
    expect(parsed.memory.size).toBe(0);
  });

  it("stays under GitHub's size limit for a large fleet, problems kept whole first", () => {
    const many = Array.from({ length: 3000 }, (_, i) => result({ variant: `v-${String(i).padStart(4, '0')}`, action: 'up-to-date' }));
    const failed = Array.from({ length: 20 }, (_, i) => result({ variant: `f-${i}`, action: 'failed', error: 'e'.repeat(500) }));
    const body = text([...failed, ...many]);
    expect(body.length).toBeLessThanOrEqual(MAX_DASHBOARD);
    expect(body).toContain('### Failed (20)');
    expect(body.match(/kdelta-retry:/g)).toHaveLength(20);
    expect(body).toContain('### Up to date (3000)');
  });

  it('names each action a state', () => {
    expect(dashboardState(result({ action: 'closed' }))).toBe('up-to-date');
    expect(dashboardState(result({ action: 'updated', renderFailure: { message: 'm' } as never, conflictCount: 2 }))).toBe('render-failed');
    expect(dashboardState(result({ action: 'declined' }))).toBe('declined');
    expect(dashboardState(result({ action: 'not-adopted' }))).toBe('not-adopted');
    expect(dashboardState(result({ action: 'orphan-proposed' }))).toBe('open');
  });
});
