import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { renderTable } from '../../src/report/report.js';
import { describeScenarios, type FleetOptions, type ScenarioFleet } from './harness.js';

/**
 * When an update policy lets a variant be proposed, on every forge: inside its schedule window
 * (in its time zone) and the team's, outside its freezes and its team's pause. A held job writes
 * nothing and says which gate held it and when to look again; a variant no policy governs is
 * proposed whatever the clock says. 2026-11-30 is a Monday; Berlin is UTC+1 then.
 */

/** The fleet's policy: office hours in Berlin, a year-end freeze; it governs `web` only. */
const POLICY = `apiVersion: kdelta.dev/v1alpha1
kind: UpdatePolicy
metadata:
  name: platform
spec:
  selector:
    packageVariants: ["web*"]
  schedule:
    timeZone: Europe/Berlin
    windows: ["Mon-Fri 09:00-17:00"]
  freezes:
    - from: 2026-12-20
      until: 2027-01-04T00:00:00Z
      reason: year-end freeze
`;

const SUNDAY = new Date('2026-11-29T12:00:00Z');
const MONDAY_MORNING = new Date('2026-11-30T08:30:00Z'); // 09:30 in Berlin
const MONDAY_EVENING = new Date('2026-11-30T17:30:00Z'); // 18:30 in Berlin
const IN_THE_FREEZE = new Date('2026-12-21T10:00:00Z'); // a Monday, 11:00 in Berlin
const AFTER_THE_FREEZE = new Date('2027-01-04T09:00:00Z'); // a Monday, 10:00 in Berlin

const TEAM_FILE = '.kdelta/downstream-policy.yaml';

function teamPolicy(spec: string): string {
  return `apiVersion: kdelta.dev/v1alpha1\nkind: DownstreamPolicy\nmetadata:\n  name: team-web\nspec:\n${spec}`;
}

function actions(report: { results: readonly { variant: string; action: string }[] }): string[][] {
  return report.results.map((r) => [r.variant, r.action]);
}

describeScenarios('schedule windows and freezes of an update policy', {}, ({ fleet }) => {
  async function twoTeams(options: FleetOptions = {}): Promise<ScenarioFleet> {
    return fleet(
      ['cluster-01', 'cluster-02'],
      {
        'web.yaml': packageVariant('web', 'cluster-01'),
        'web-eu.yaml': packageVariant('web-eu', 'cluster-02'),
        'api.yaml': packageVariant('api', 'cluster-02'),
        'policy.yaml': POLICY,
      },
      options,
    );
  }

  it('outside the window proposes nothing for the governed variants and says when the next window opens; inside, it proposes', async () => {
    const f = await twoTeams({ dashboard: true });
    const sunday = await f.run({ now: () => SUNDAY });
    expect(sunday.failed).toBe(0);
    // api, which no policy governs, is proposed whatever the clock
    expect(actions(sunday)).toEqual([
      ['api', 'proposed'],
      ['web', 'deferred'],
      ['web-eu', 'deferred'],
    ]);
    const reason = 'outside the schedule window (Mon-Fri 09:00-17:00 Europe/Berlin); next window opens 2026-11-30T08:00:00Z';
    expect(sunday.results.find((r) => r.variant === 'web')).toMatchObject({ heldBy: 'schedule-window', writes: false });
    expect(sunday.results.find((r) => r.variant === 'web')?.message).toContain(reason);
    expect(renderTable(sunday)).toContain(`deferred (schedule-window: ${reason}`);
    // the dashboard lists them as held, saying when the window opens
    expect(f.dashboard()).toContain('### Held by a gate (a schedule window, a freeze, a rollout wave): a later run proposes it (2)');
    expect(f.dashboard()).toContain(`- \`web\` → \`cluster-01/web\`, held by \`schedule-window\`: \`${reason}`);
    expect(f.proposals('cluster-01', 'kdelta/web')).toEqual([]);
    expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();
    expect(f.tip('cluster-02', 'kdelta/web-eu')).toBeUndefined();

    // Monday evening in Berlin: closed again, the next window is Tuesday's
    const evening = await f.run({ now: () => MONDAY_EVENING });
    expect(evening.results.find((r) => r.variant === 'web')?.message).toContain('next window opens 2026-12-01T08:00:00Z');

    // inside the window the held variants are proposed
    const monday = await f.run({ now: () => MONDAY_MORNING });
    expect(monday.failed).toBe(0);
    expect(actions(monday)).toEqual([
      ['api', 'unchanged'],
      ['web', 'proposed'],
      ['web-eu', 'proposed'],
    ]);
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('open');
  });

  it('a freeze holds inside the window, until it ends', async () => {
    const f = await twoTeams();
    const frozen = await f.run({ now: () => IN_THE_FREEZE });
    expect(actions(frozen)).toEqual([
      ['api', 'proposed'],
      ['web', 'deferred'],
      ['web-eu', 'deferred'],
    ]);
    expect(frozen.results.find((r) => r.variant === 'web')).toMatchObject({ heldBy: 'freeze' });
    expect(frozen.results.find((r) => r.variant === 'web')?.message).toContain(
      'frozen by update policy platform from 2026-12-20T00:00:00Z until 2027-01-04T00:00:00Z: year-end freeze',
    );
    expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();

    const thawed = await f.run({ now: () => AFTER_THE_FREEZE });
    expect(actions(thawed)).toEqual([
      ['api', 'unchanged'],
      ['web', 'proposed'],
      ['web-eu', 'proposed'],
    ]);
  });

  it("a team's pause in its repository holds only its own variants", async () => {
    const f = await twoTeams();
    await f.commitAs('cluster-01', 'main', {
      [TEAM_FILE]: teamPolicy('  pause:\n    until: 2026-12-07T00:00:00Z\n    reason: migration week\n'),
    });
    const paused = await f.run({ now: () => MONDAY_MORNING });
    expect(paused.failed).toBe(0);
    expect(actions(paused)).toEqual([
      ['api', 'proposed'],
      ['web', 'deferred'],
      ['web-eu', 'proposed'],
    ]);
    const web = paused.results.find((r) => r.variant === 'web');
    expect(web).toMatchObject({ heldBy: 'freeze' });
    expect(web?.message).toContain('paused by cluster-01:.kdelta/downstream-policy.yaml until 2026-12-07T00:00:00Z: migration week');
    expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();

    // the pause is over (a Monday, inside the window)
    const after = await f.run({ now: () => new Date('2026-12-07T09:00:00Z') });
    expect(after.results.find((r) => r.variant === 'web')?.action).toBe('proposed');
  });

  it("a team's own window: proposed only when both its window and the fleet's are open", async () => {
    const f = await twoTeams();
    await f.commitAs('cluster-01', 'main', {
      [TEAM_FILE]: teamPolicy('  schedule:\n    timeZone: America/New_York\n    windows: ["Tue-Thu 10:00-16:00"]\n'),
    });
    // Monday: the fleet's window is open, the team's is not (Tuesday 10:00 in New York is 15:00Z)
    const monday = await f.run({ now: () => MONDAY_MORNING });
    expect(actions(monday)).toEqual([
      ['api', 'proposed'],
      ['web', 'deferred'],
      ['web-eu', 'proposed'],
    ]);
    expect(monday.results.find((r) => r.variant === 'web')?.message).toContain(
      'outside the schedule window (Mon-Fri 09:00-17:00 Europe/Berlin and cluster-01:.kdelta/downstream-policy.yaml: Tue-Thu 10:00-16:00 America/New_York); next window opens 2026-12-01T15:00:00Z',
    );
    const tuesday = await f.run({ now: () => new Date('2026-12-01T15:00:00Z') });
    expect(tuesday.results.find((r) => r.variant === 'web')?.action).toBe('proposed');
  });

  it("a team file that widens the fleet's policy fails its variants with downstream-policy-invalid, and only them", async () => {
    const f = await twoTeams();
    await f.commitAs('cluster-01', 'main', { [TEAM_FILE]: teamPolicy('  autoMerge:\n    updateTypes: [major]\n') });
    const report = await f.run({ now: () => MONDAY_MORNING });
    expect(actions(report)).toEqual([
      ['api', 'proposed'],
      ['web', 'failed'],
      ['web-eu', 'proposed'],
    ]);
    const web = report.results.find((r) => r.variant === 'web');
    expect(web?.code).toBe('downstream-policy-invalid');
    expect(web?.error).toContain('cluster-01:.kdelta/downstream-policy.yaml');
    expect(web?.error).toContain('autoMerge');
    expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();
  });
});
