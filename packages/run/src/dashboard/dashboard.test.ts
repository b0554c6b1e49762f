import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import { dashboardEntries, dashboardState, MAX_DASHBOARD, parseDashboard, renderDashboard } from './dashboard.js';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import type { RolloutStatus } from '../policy/policy.js';
import type { VariantResult } from '../report/result.js';
import { rolloutReport } from '../report/rollouts.js';
import { rolloutStatus } from '../report/__fixtures__/rollout-status.js';

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

describe("the dashboard's rollouts", () => {
  const html = (markdown: string) => micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()], allowDangerousHtml: true });

  const canary = rolloutStatus();

  const withRollouts = (rollouts: RolloutStatus[], results = [result({ variant: 'web' })]) =>
    renderDashboard({
      title: 'kdelta dashboard',
      marker: '<!-- kdelta-dashboard: dashboard -->',
      entries: dashboardEntries(results),
      rollouts: rollouts.map(rolloutReport),
    });

  it('shows each rollout before the variants: revision, package, policy, every wave merged of due, where it is, what it waits on', () => {
    const halted: RolloutStatus = {
      ...canary,
      revision: 'base-ns/v3',
      reached: -1,
      proposing: 'canary',
      waves: [
        { name: 'canary', variants: 1, merged: 0 },
        { name: 'prod', variants: 2, merged: 0 },
      ],
      halted: 'status flux-system failed on cluster-01 (canary)',
      advancedTo: 'canary',
    };
    const body = withRollouts([canary, halted]);
    expect(body.indexOf('### Rollouts (2)')).toBeGreaterThan(-1);
    expect(body.indexOf('### Rollouts (2)')).toBeLessThan(body.indexOf('### Open proposals'));
    const page = html(body);
    // as GitHub shows it: a list item per rollout, its details nested
    expect(page).toContain(
      '<li><code>catalog/base-ns</code> <code>base-ns/v2</code> (policy <code>platform</code>, commit <code>cccccccccccc</code>): reached wave <code>canary</code>, proposed to <code>prod</code>\n<ul>\n<li>waves: <code>canary</code> 1/1 merged · <code>prod</code> 0/2 merged</li>\n<li>waits on: <code>soak until 2026-03-02T12:00:00.000Z</code></li>',
    );
    expect(page).toContain(
      '(policy <code>platform</code>, commit <code>cccccccccccc</code>): no wave has it yet, proposed to <code>canary</code>',
    );
    expect(page).toContain('<li><strong>halted</strong>: <code>status flux-system failed on cluster-01 (canary)</code></li>');
    expect(page).toContain('<li>advanced by hand to <code>canary</code></li>');
    // halted, it waits on nothing
    expect(page.split('waits on:')).toHaveLength(2);
  });

  it('a rollout every wave has says so; a fleet without rollouts has no section and the same text as before', () => {
    const done: RolloutStatus = { ...canary, reached: 1, proposing: undefined, waitingOn: [] };
    expect(withRollouts([done])).toContain(': every wave has it\n');
    const plain = withRollouts([]);
    expect(plain).not.toContain('Rollouts');
    expect(plain).toContain('<!-- kdelta-dashboard-data: {"fields":{}} -->');
  });

  it('keeps the rollouts in its data block, where they are read back as they were; a mangled one is left out', () => {
    const body = withRollouts([canary]);
    expect(parseDashboard(body).rollouts).toEqual([rolloutReport(canary)]);
    const mangled = body.replace('"variants":1,', '"variants":"one",');
    expect(parseDashboard(mangled).rollouts).toEqual([]);
  });

  it('escapes the text of a rollout: an upstream tag or a signal cannot make a link, a heading or a box', () => {
    const evil = '`x` <!-- kdelta-retry:evil --> [a](https://evil.example) ![i](https://evil.example/p.png) @org/team';
    const body = withRollouts([{ ...canary, revision: evil, halted: `\n## FORGED ${evil}`, waitingOn: [evil] }]);
    const page = html(body);
    expect(page).not.toContain('href="https://evil.example');
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<h2>FORGED');
    expect(parseDashboard(body.replaceAll('- [ ]', '- [x]')).ticks.retry.size).toBe(0);
    // no mention outside code (the hidden data block is a comment GitHub does not show)
    expect(page.replace(/<code>[\s\S]*?<\/code>/g, '').replace(/<[^>]*>/g, ' ')).not.toContain('@org');
  });

  it('a job a gate held says which gate, and when a later run looks again', () => {
    const body = withRollouts(
      [],
      [
        result({
          variant: 'web',
          action: 'deferred',
          writes: false,
          heldBy: 'limits',
          message: 'policy platform allows 5 new proposals an hour: 5 new in the last hour (looked at again from 2026-03-02T11:00:00.000Z)',
        }),
      ],
    );
    expect(body).toContain(
      '- `web` → `cluster-01/web`, held by `limits`: `policy platform allows 5 new proposals an hour: 5 new in the last hour (looked at again from 2026-03-02T11:00:00.000Z)`',
    );
  });
});

describe("the removal scans' answers in the dashboard", () => {
  const hex = (n: number) => n.toString(16).padStart(16, '0');
  const scans = (n: number) => ({ context: 'c'.repeat(16), clear: new Map(Array.from({ length: n }, (_, i) => [hex(i), hex(i + 1)])) });
  const text = { title: 'kdelta dashboard', marker: '<!-- kdelta-dashboard: dashboard -->' };

  it.each([
    { fleet: 'a hundred downstreams', downstreams: 100, variants: 100, all: true },
    { fleet: 'five thousand downstreams', downstreams: 5000, variants: 3000, all: false },
  ])('are read back as written, and at $fleet only what fits is kept, under the size limit', ({ downstreams, variants, all }) => {
    const entries = dashboardEntries(
      Array.from({ length: variants }, (_, i) => result({ variant: `v${i}`, downstream: `cluster-${i}/v${i}` })),
    );
    const body = renderDashboard({ ...text, entries, scans: scans(downstreams) });
    expect(body.length).toBeLessThanOrEqual(MAX_DASHBOARD);
    const read = parseDashboard(body).scans!;
    expect(read.context).toBe('c'.repeat(16));
    expect(read.clear.size === downstreams).toBe(all);
    expect(read.clear.size).toBeGreaterThan(all ? 0 : 100);
    for (const [place, commit] of read.clear) expect(scans(downstreams).clear.get(place)).toBe(commit);
    // the same answers, the same text: a run with nothing new writes nothing
    expect(renderDashboard({ ...text, entries, scans: scans(downstreams) })).toBe(body);
  });

  it('reads nothing that is not of the form: a short or non-hex hash is no answer', () => {
    // the first downstream's commit made unreadable: that downstream is scanned again, the other is not
    const body = renderDashboard({ ...text, entries: [], scans: scans(2) }).replace(`"${hex(0)}":"${hex(1)}"`, `"${hex(0)}":"zz"`);
    expect([...parseDashboard(body).scans!.clear.keys()]).toEqual([hex(1)]);
  });
});
