import { describe, expect, it } from 'vitest';
import type { RolloutStatus } from '../policy/policy.js';
import { NO_HAND, rolloutKey } from '../policy/rollout.js';
import { dashboardBoxes, selectRolloutBox } from './dashboard-boxes.js';
import { parseDashboard, renderDashboard } from './dashboard.js';
import { tickLine } from '../propose/decide-boxes.js';
import { rolloutReport } from '../report/rollouts.js';

// The dashboard's rollout boxes: advance a rollout to its next wave, halt it, resume it; the
// dashboard keeps a box's halt (and advance) for the runs after the one that read the tick.

const rollout = (over: Partial<RolloutStatus> = {}): RolloutStatus => ({
  policy: 'platform',
  upstream: 'blueprints/basens',
  revision: 'basens/v1.5.0',
  commit: 'c'.repeat(40),
  waves: [
    { name: 'canary', variants: 2, merged: 1 },
    { name: 'early', variants: 0, merged: 0 },
    { name: 'prod', variants: 3, merged: 0 },
  ],
  reached: -1,
  proposing: 'canary',
  waitingOn: ['merge of web-b in repo-b'],
  ...over,
});
const KEY = rolloutKey(rollout());

const render = (rollouts: RolloutStatus[], hand = NO_HAND) =>
  renderDashboard({
    title: 'kdelta dashboard',
    marker: '<!-- kdelta-dashboard: dashboard -->',
    entries: [],
    rollouts: rollouts.map(rolloutReport),
    hand,
  });

/** Tick the open box of that kind for v1.5.0 of policy platform, as `kdelta rollout` does. */
const tick = (text: string, kind: 'advance-rollout' | 'halt-rollout' | 'resume-rollout') =>
  tickLine(text, selectRolloutBox(dashboardBoxes(text), kind, 'platform', 'v1.5.0').line);

describe('rollouts on the dashboard', () => {
  it('shows each rollout, what it waits on, and its advance and halt boxes', () => {
    const text = render([rollout()]);
    expect(text).toContain('### Rollouts (1)');
    expect(text).toContain('  - waits on: `merge of web-b in repo-b`\n  - [ ] <!-- kdelta-advance-rollout:');
    expect(text).toMatch(
      /^ {2}- \[ \] <!-- kdelta-advance-rollout:platform%20blueprints%2Fbasens%20basens%2Fv1\.5\.0%20early --> advance `basens v1\.5\.0` \(policy `platform`\) to early now$/m,
    );
    expect(text).toMatch(/^ {2}- \[ \] <!-- kdelta-halt-rollout:[^ ]+ --> halt `basens v1\.5\.0` \(policy `platform`\)$/m);
    expect(parseDashboard(text).ticks.rollouts).toEqual(NO_HAND);
  });

  it('a halt box halts until the resume box is ticked; the halt is kept by the runs in between', () => {
    const halted = parseDashboard(tick(render([rollout()]), 'halt-rollout')).ticks.rollouts;
    expect([...halted.halted]).toEqual([KEY]);
    // the next run writes it back: no halt box, a resume box, and the halt kept in the hidden data
    const after = render([rollout({ halted: 'by hand on the dashboard' })], halted);
    expect(after).toContain('**halted**: `by hand on the dashboard`');
    expect(after).not.toContain('kdelta-halt-rollout');
    expect(after).not.toContain('kdelta-advance-rollout');
    expect([...parseDashboard(after).ticks.rollouts.halted]).toEqual([KEY]);
    // resumed: the halt is gone
    const resumed = parseDashboard(tick(after, 'resume-rollout')).ticks.rollouts;
    expect([...resumed.halted]).toEqual([]);
  });

  it('a halt is kept while its rollout is not under way (a run that saw none), with its resume box', () => {
    const halted = parseDashboard(tick(render([rollout()]), 'halt-rollout')).ticks.rollouts;
    const unseen = render([], halted);
    expect(unseen).toContain('- `basens v1.5.0` (policy `platform`): halted on this dashboard, not under way now');
    expect([...parseDashboard(unseen).ticks.rollouts.halted]).toEqual([KEY]);
    // under way again: still halted
    expect([
      ...parseDashboard(render([rollout({ halted: 'by hand on the dashboard' })], parseDashboard(unseen).ticks.rollouts)).ticks.rollouts
        .halted,
    ]).toEqual([KEY]);
    // resumed from the held-over line
    expect([...parseDashboard(tick(unseen, 'resume-rollout')).ticks.rollouts.halted]).toEqual([]);
  });

  it('an advance box advances to the next wave and is kept until the rollout is done', () => {
    const advanced = parseDashboard(tick(render([rollout()]), 'advance-rollout')).ticks.rollouts;
    expect([...advanced.advanced]).toEqual([[KEY, 'early']]);
    const after = render([rollout({ advancedTo: 'early' })], advanced);
    // the next box advances past it
    expect(after).toContain('advanced by hand to `early`');
    expect(after).toContain('advance `basens v1.5.0` (policy `platform`) to prod now');
    expect([...parseDashboard(after).ticks.rollouts.advanced]).toEqual([[KEY, 'early']]);
    // done: nothing kept
    expect([...parseDashboard(render([], advanced)).ticks.rollouts.advanced]).toEqual([]);
  });

  it('a signal description reaches the text only as code; a mangled data block keeps nothing', () => {
    const text = render([rollout({ halted: 'status flux-system failed on repo-a (canary): <img src=x> @team [x](http://e)' })]);
    expect(text).toContain('**halted**: `status flux-system failed on repo-a (canary): <img src=x> @team [x](http://e)`');
    const mangled = text.replace(
      /<!-- kdelta-dashboard-data: .*-->/,
      '<!-- kdelta-dashboard-data: {"hand":{"halted":[1],"advanced":{"k":2}}} -->',
    );
    expect(parseDashboard(mangled).ticks.rollouts).toEqual({ halted: new Set(), advanced: new Map() });
  });

  it('names what is wrong when no box is the one asked for', () => {
    const text = render([rollout()]);
    expect(() => selectRolloutBox(dashboardBoxes(text), 'halt-rollout', 'platform', 'v9.9.9')).toThrow(
      /no rollout of v9\.9\.9 under policy platform can halt; the rollouts that can:\n {2}halt `basens v1\.5\.0`/,
    );
    expect(() => selectRolloutBox(dashboardBoxes(text), 'resume-rollout', 'platform', 'v1.5.0')).toThrow(
      /the dashboard has no rollout to resume/,
    );
  });
});
