import { describe, expect, it } from 'vitest';
import { NO_TICKS } from '../dashboard/dashboard.js';
import type { PlannedJob } from '../plan/jobs-plan.js';
import type { VariantPlan } from '../plan/plan.js';
import type { DownstreamPolicy, Schedule, UpdatePolicy, VariantPolicy, WeeklyWindow } from '../policy/policy.js';
import { NO_SETTINGS, resolveSettings } from '../settings/settings.js';
import { DOWNSTREAM_POLICY_INVALID, freeze } from './freeze.js';
import { PASS, type GateContext, type GateDecision } from './gate.js';
import { GATES } from './gates.js';
import { scheduleWindow } from './schedule-window.js';

// The freeze and schedule-window gates on constructed contexts: the policy plan a run would carry,
// the run's clock, and jobs of each kind. 2026-11-30 is a Monday; Berlin is UTC+1 then.

const OFFICE: WeeklyWindow = { kind: 'weekly', days: [1, 2, 3, 4, 5], from: 9 * 60, until: 17 * 60, text: 'Mon-Fri 09:00-17:00' };
const TEAM_HOURS: WeeklyWindow = { kind: 'weekly', days: [2, 3, 4], from: 10 * 60, until: 16 * 60, text: 'Tue-Thu 10:00-16:00' };
const BERLIN: Schedule = { timeZone: 'Europe/Berlin', windows: [OFFICE] };
const NEW_YORK: Schedule = { timeZone: 'America/New_York', windows: [TEAM_HOURS] };
const TEAM_FILE = 'cluster-01:.kdelta/downstream-policy.yaml';

function policy(more: Partial<UpdatePolicy> = {}): UpdatePolicy {
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
    ...more,
  };
}

function team(more: Partial<DownstreamPolicy> = {}): DownstreamPolicy {
  return { file: TEAM_FILE, ignore: [], ...more };
}

function context(now: string, governed: Record<string, Omit<VariantPolicy, 'autoMerge'>>): GateContext {
  const byVariant = new Map(Object.entries(governed).map(([name, v]) => [name, { autoMerge: false, ...v }]));
  return {
    now: new Date(now),
    dryRun: false,
    settings: resolveSettings(NO_SETTINGS, NO_SETTINGS, { config: '.kdelta' }),
    ticks: NO_TICKS,
    jobs: [],
    plan: { variants: [], downstreams: [], warnings: [] },
    policies: { byVariant, rollouts: [], warnings: [] },
  };
}

/** A job of a kind for a variant; these gates read its kind and variant only. */
function job(kind: PlannedJob['kind'], variant: string): PlannedJob {
  const downstream = `cluster-01/${variant}`;
  switch (kind) {
    case 'variant':
      return { kind, variant, downstream, plan: {} as VariantPlan };
    case 'update':
      return { kind, variant, downstream, plan: {} as never, control: {} as never };
    case 'removal':
      return { kind, variant, downstream, removal: {} as never };
    case 'retire':
      return { kind, variant, downstream, draft: {} as never };
    case 'group':
      return { kind, variant, downstream, group: { members: [] } as never };
    default:
      return kind satisfies never;
  }
}

const YEAR_END = { from: new Date('2026-12-20T00:00:00Z'), until: new Date('2027-01-04T00:00:00Z'), reason: 'year-end freeze' };

describe('freeze gate: a freeze of the policy, a team pause, a team file that is invalid', () => {
  const cases: [string, string, Record<string, Omit<VariantPolicy, 'autoMerge'>>, GateDecision][] = [
    ['an ungoverned variant passes', '2026-12-21T00:00:00Z', {}, PASS],
    ['outside the freeze', '2026-12-19T23:59:00Z', { web: { policy: policy({ freezes: [YEAR_END] }) } }, PASS],
    [
      'during the freeze: held until its end, with its reason',
      '2026-12-21T00:00:00Z',
      { web: { policy: policy({ freezes: [YEAR_END] }) } },
      {
        pass: false,
        reason: 'frozen by update policy platform from 2026-12-20T00:00:00Z until 2027-01-04T00:00:00Z: year-end freeze',
        lookAgain: YEAR_END.until,
      },
    ],
    [
      'a freeze without a reason',
      '2026-12-21T00:00:00Z',
      { web: { policy: policy({ freezes: [{ from: YEAR_END.from, until: YEAR_END.until }] }) } },
      {
        pass: false,
        reason: 'frozen by update policy platform from 2026-12-20T00:00:00Z until 2027-01-04T00:00:00Z',
        lookAgain: YEAR_END.until,
      },
    ],
    [
      'paused by its team until a date',
      '2026-12-01T00:00:00Z',
      { web: { policy: policy(), downstream: team({ pause: { until: new Date('2026-12-07T00:00:00Z'), reason: 'migration week' } }) } },
      {
        pass: false,
        reason: `paused by ${TEAM_FILE} until 2026-12-07T00:00:00Z: migration week`,
        lookAgain: new Date('2026-12-07T00:00:00Z'),
      },
    ],
    [
      'the pause is over',
      '2026-12-07T00:00:00Z',
      { web: { policy: policy(), downstream: team({ pause: { until: new Date('2026-12-07T00:00:00Z') } }) } },
      PASS,
    ],
    [
      '`pause: true`: held with no date to look again',
      '2026-12-01T00:00:00Z',
      { web: { policy: policy(), downstream: team({ pause: {} }) } },
      { pass: false, reason: `paused by ${TEAM_FILE}`, lookAgain: undefined },
    ],
    ['a team file with no pause', '2026-12-01T00:00:00Z', { web: { policy: policy(), downstream: team() } }, PASS],
    [
      'an invalid team file fails the job with its errors',
      '2026-12-01T00:00:00Z',
      { web: { policy: policy(), downstream: { invalid: `${TEAM_FILE}: spec.autoMerge: a team may only narrow the fleet's policy` } } },
      { pass: false, code: DOWNSTREAM_POLICY_INVALID, reason: `${TEAM_FILE}: spec.autoMerge: a team may only narrow the fleet's policy` },
    ],
  ];
  it.each(cases)('%s', (_name, now, governed, decision) => {
    expect(freeze.decide(job('variant', 'web'), context(now, governed))).toEqual(decision);
  });
});

describe('schedule-window gate: outside the window the job waits and says when the next opens', () => {
  const cases: [string, string, Record<string, Omit<VariantPolicy, 'autoMerge'>>, GateDecision][] = [
    ['an ungoverned variant passes', '2026-11-29T12:00:00Z', {}, PASS],
    ['a policy without a schedule passes', '2026-11-29T12:00:00Z', { web: { policy: policy() } }, PASS],
    ['inside the window', '2026-11-30T08:00:00Z', { web: { policy: policy({ schedule: BERLIN }) } }, PASS],
    [
      'Monday evening: the window opens on Tuesday 09:00 Berlin',
      '2026-11-30T17:30:00Z',
      { web: { policy: policy({ schedule: BERLIN }) } },
      {
        pass: false,
        reason: 'outside the schedule window (Mon-Fri 09:00-17:00 Europe/Berlin); next window opens 2026-12-01T08:00:00Z',
        lookAgain: new Date('2026-12-01T08:00:00Z'),
      },
    ],
    [
      "the fleet's window is open, the team's is not: both must be",
      '2026-11-30T12:00:00Z',
      { web: { policy: policy({ schedule: BERLIN }), downstream: team({ schedule: NEW_YORK }) } },
      {
        pass: false,
        reason: `outside the schedule window (Mon-Fri 09:00-17:00 Europe/Berlin and ${TEAM_FILE}: Tue-Thu 10:00-16:00 America/New_York); next window opens 2026-12-01T15:00:00Z`,
        lookAgain: new Date('2026-12-01T15:00:00Z'),
      },
    ],
    [
      'both open',
      '2026-12-01T15:30:00Z',
      { web: { policy: policy({ schedule: BERLIN }), downstream: team({ schedule: NEW_YORK }) } },
      PASS,
    ],
    [
      "only the team's window",
      '2026-11-30T12:00:00Z',
      { web: { policy: policy(), downstream: team({ schedule: NEW_YORK }) } },
      {
        pass: false,
        reason: `outside the schedule window (${TEAM_FILE}: Tue-Thu 10:00-16:00 America/New_York); next window opens 2026-12-01T15:00:00Z`,
        lookAgain: new Date('2026-12-01T15:00:00Z'),
      },
    ],
    [
      'windows that never meet',
      '2026-11-30T12:00:00Z',
      {
        web: {
          policy: policy({ schedule: { timeZone: 'UTC', windows: [{ ...OFFICE, days: [6], text: 'Sat 09:00-17:00' }] } }),
          downstream: team({ schedule: NEW_YORK }),
        },
      },
      {
        pass: false,
        reason: `outside the schedule window (Sat 09:00-17:00 UTC and ${TEAM_FILE}: Tue-Thu 10:00-16:00 America/New_York); no window opens in the next 8 days`,
        lookAgain: undefined,
      },
    ],
  ];
  it.each(cases)('%s', (_name, now, governed, decision) => {
    expect(scheduleWindow.decide(job('variant', 'web'), context(now, governed))).toEqual(decision);
  });
});

describe('what the policy gates never hold', () => {
  const closedAndFrozen = context('2026-12-21T00:00:00Z', {
    web: { policy: policy({ schedule: BERLIN, freezes: [YEAR_END] }), downstream: team({ pause: {} }) },
  });
  it.each(['update', 'removal', 'retire'] as const)('a %s job passes both, even frozen, paused and outside the window', (kind) => {
    for (const gate of [freeze, scheduleWindow]) expect(gate.decide(job(kind, 'web'), closedAndFrozen)).toEqual(PASS);
  });
  it('a variant job of another variant passes', () => {
    for (const gate of [freeze, scheduleWindow]) expect(gate.decide(job('variant', 'api'), closedAndFrozen)).toEqual(PASS);
  });
  it('are in GATES, the freeze first', () => {
    expect(GATES.map((g) => g.name).filter((n) => n === 'freeze' || n === 'schedule-window')).toEqual(['freeze', 'schedule-window']);
  });
});
