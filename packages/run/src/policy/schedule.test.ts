import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Freeze, Schedule } from './policy.js';
import { activeFreeze, allOpen, describeSchedule, nextOpening, nextOpeningOfAll, windowOpen } from './schedule.js';
import { parseWindow } from './window.js';

// Windows parsed as a policy's are; times are read in the schedule's own zone.
// 2026-11-30 is a Monday. Europe/Berlin: CET (UTC+1), CEST (UTC+2) from 2026-03-29 02:00 to
// 2026-10-25 03:00. America/New_York: EST (UTC-5), EDT (UTC-4) from 2026-03-08 02:00 to 2026-11-01 02:00.

/** A schedule of windows as a policy writes them, parsed by the policy's parser. */
function schedule(timeZone: string, ...windows: string[]): Schedule {
  return {
    timeZone,
    windows: windows.map((text) => {
      const parsed = parseWindow(text);
      if (!parsed.ok) throw new Error(parsed.reason);
      return parsed.window;
    }),
  };
}

const OFFICE_BERLIN = schedule('Europe/Berlin', 'Mon-Fri 09:00-17:00');
const TEAM_NEW_YORK = schedule('America/New_York', 'Tue-Thu 10:00-16:00');

describe('windowOpen: inside a window, in its time zone', () => {
  const cases: [string, Schedule, string, boolean][] = [
    ['UTC, Monday inside', schedule('UTC', 'Mon-Fri 09:00-17:00'), '2026-11-30T09:00:00Z', true],
    ['UTC, the closing minute is out', schedule('UTC', 'Mon-Fri 09:00-17:00'), '2026-11-30T17:00:00Z', false],
    ['UTC, the last open minute (seconds ignored)', schedule('UTC', 'Mon-Fri 09:00-17:00'), '2026-11-30T16:59:59Z', true],
    ['UTC, Sunday is out', schedule('UTC', 'Mon-Fri 09:00-17:00'), '2026-11-29T12:00:00Z', false],
    ['Berlin in winter: 09:00 CET is 08:00Z', OFFICE_BERLIN, '2026-11-30T08:00:00Z', true],
    ['Berlin in winter: 07:59Z is 08:59 CET', OFFICE_BERLIN, '2026-11-30T07:59:00Z', false],
    ['Berlin in summer: 09:00 CEST is 07:00Z', OFFICE_BERLIN, '2026-07-06T07:00:00Z', true],
    ['Berlin in summer: 15:00Z is 17:00 CEST', OFFICE_BERLIN, '2026-07-06T15:00:00Z', false],
    ['Berlin, late Friday in UTC is Saturday there', schedule('Europe/Berlin', 'Sat 00:00-01:00'), '2026-12-04T23:30:00Z', true],
    ['New York, Tuesday 10:00 EST is 15:00Z', TEAM_NEW_YORK, '2026-12-01T15:00:00Z', true],
    [
      'New York, early Wednesday in UTC is still Tuesday there',
      schedule('America/New_York', 'Tue 20:00-23:00'),
      '2026-12-02T02:00:00Z',
      true,
    ],
    ['across midnight: Friday evening', schedule('UTC', 'Fri 22:00-02:00'), '2026-12-04T23:00:00Z', true],
    ['across midnight: Saturday morning belongs to Friday', schedule('UTC', 'Fri 22:00-02:00'), '2026-12-05T01:59:00Z', true],
    ['across midnight: Saturday 02:00 is out', schedule('UTC', 'Fri 22:00-02:00'), '2026-12-05T02:00:00Z', false],
    ['across midnight: Friday morning is out', schedule('UTC', 'Fri 22:00-02:00'), '2026-12-04T01:00:00Z', false],
    ['until 24:00', schedule('UTC', 'Sun 20:00-24:00'), '2026-11-29T23:59:00Z', true],
    ['one of several windows', schedule('Europe/Berlin', 'Mon-Fri 09:00-17:00', 'Sat 10:00-12:00'), '2026-12-05T09:30:00Z', true],
    [
      'Berlin, the hour the clocks skip: 02:30 does not exist, 03:00 CEST is inside 02:30-04:00',
      schedule('Europe/Berlin', 'Sun 02:30-04:00'),
      '2026-03-29T01:00:00Z',
      true,
    ],
    ['Berlin, before the skip: 01:59 CET', schedule('Europe/Berlin', 'Sun 02:30-04:00'), '2026-03-29T00:59:00Z', false],
    ['Berlin, the hour that comes twice: second 02:30 (CET)', schedule('Europe/Berlin', 'Sun 02:30-02:40'), '2026-10-25T01:30:00Z', true],
    ['cron hours and weekdays: Monday 09:00', schedule('UTC', 'cron: * 9-16 * * 1-5'), '2026-11-30T09:00:00Z', true],
    ['cron hours and weekdays: 16:59 is in', schedule('UTC', 'cron: * 9-16 * * 1-5'), '2026-11-30T16:59:00Z', true],
    ['cron hours and weekdays: 17:00 is out', schedule('UTC', 'cron: * 9-16 * * 1-5'), '2026-11-30T17:00:00Z', false],
    ['cron hours and weekdays: Saturday is out', schedule('UTC', 'cron: * 9-16 * * 1-5'), '2026-12-05T10:00:00Z', false],
    ['cron in a zone: 9-16 in Berlin', schedule('Europe/Berlin', 'cron: * 9-16 * * 1-5'), '2026-11-30T08:00:00Z', true],
    [
      'cron both day fields: the 1st (a Tuesday) matches the day of month',
      schedule('UTC', 'cron: 0 12 1 * 1'),
      '2026-12-01T12:00:00Z',
      true,
    ],
    ['cron both day fields: a Monday matches the day of week', schedule('UTC', 'cron: 0 12 1 * 1'), '2026-11-30T12:00:00Z', true],
    ['cron both day fields: a Wednesday the 2nd matches neither', schedule('UTC', 'cron: 0 12 1 * 1'), '2026-12-02T12:00:00Z', false],
    ['cron one minute: the next minute is out', schedule('UTC', 'cron: 0 12 1 * 1'), '2026-12-01T12:01:00Z', false],
    ['cron day of month only: every weekday of the 15th', schedule('UTC', 'cron: 0-29 0 15 * *'), '2026-12-15T00:29:00Z', true],
    ['cron day of week only: Sunday', schedule('UTC', 'cron: 30 8 * * 0'), '2026-11-29T08:30:00Z', true],
    ['cron steps and names: every 15 minutes, mon-fri', schedule('UTC', 'cron: */15 9-17 * * mon-fri'), '2026-12-04T17:45:00Z', true],
    ['cron steps and names: 17:50 is no quarter', schedule('UTC', 'cron: */15 9-17 * * mon-fri'), '2026-12-04T17:50:00Z', false],
    [
      'cron: a day of week written with * does not widen the day of month (the 1st, a Tuesday)',
      schedule('UTC', 'cron: 0 12 1 * */2'),
      '2026-12-01T12:00:00Z',
      true,
    ],
    [
      'cron: a day of week written with * still narrows it (the 1st, a Friday)',
      schedule('UTC', 'cron: 0 12 1 * */2'),
      '2027-01-01T12:00:00Z',
      false,
    ],
    ['cron: 7 is Sunday', schedule('UTC', 'cron: * * * * 7'), '2026-11-29T12:00:00Z', true],
    ['daily, across midnight, Sunday night into Monday', schedule('Europe/Berlin', 'daily 22:00-06:00'), '2026-11-30T04:00:00Z', true],
    ['cron month: December is out of January', schedule('UTC', 'cron: * * * 1 *'), '2026-12-15T00:00:00Z', false],
  ];
  it.each(cases)('%s', (_name, s, at, open) => {
    expect(windowOpen(s, new Date(at))).toBe(open);
  });
});

describe('nextOpening: the first instant the schedule is open', () => {
  const cases: [string, Schedule, string, string | undefined][] = [
    ['open now: now', OFFICE_BERLIN, '2026-11-30T10:17:31Z', '2026-11-30T10:17:31.000Z'],
    ['Sunday in Berlin: Monday 09:00 CET', OFFICE_BERLIN, '2026-11-29T12:00:00Z', '2026-11-30T08:00:00.000Z'],
    ['Monday evening in Berlin: Tuesday 09:00 CET', OFFICE_BERLIN, '2026-11-30T17:30:00Z', '2026-12-01T08:00:00.000Z'],
    [
      'Friday evening: Saturday 10:00 of a second window',
      schedule('Europe/Berlin', 'Mon-Fri 09:00-17:00', 'Sat 10:00-12:00'),
      '2026-12-04T17:00:00Z',
      '2026-12-05T09:00:00.000Z',
    ],
    ['Berlin spring: Friday in CET, Monday 09:00 in CEST', OFFICE_BERLIN, '2026-03-27T16:30:00Z', '2026-03-30T07:00:00.000Z'],
    ['Berlin autumn: Friday in CEST, Monday 09:00 in CET', OFFICE_BERLIN, '2026-10-23T15:30:00Z', '2026-10-26T08:00:00.000Z'],
    ['New York spring: Thursday in EST, Tuesday 10:00 in EDT', TEAM_NEW_YORK, '2026-03-05T21:30:00Z', '2026-03-10T14:00:00.000Z'],
    ['New York autumn: Thursday in EDT, Tuesday 10:00 in EST', TEAM_NEW_YORK, '2026-10-29T20:30:00Z', '2026-11-03T15:00:00.000Z'],
    [
      'a window opening in the skipped hour opens when the clocks jump (03:00 CEST)',
      schedule('Europe/Berlin', 'Sun 02:30-04:00'),
      '2026-03-29T00:00:00Z',
      '2026-03-29T01:00:00.000Z',
    ],
    [
      'a window wholly in the skipped hour: a week later',
      schedule('Europe/Berlin', 'Sun 02:15-02:45'),
      '2026-03-29T00:00:00Z',
      '2026-04-05T00:15:00.000Z',
    ],
    [
      'the hour that comes twice: its second 02:30, in CET',
      schedule('Europe/Berlin', 'Sun 02:30-02:40'),
      '2026-10-25T00:45:00Z',
      '2026-10-25T01:30:00.000Z',
    ],
    [
      'the hour that comes twice inside a window: open again when the clocks go back (02:00 CET)',
      schedule('Europe/Berlin', 'Sun 01:00-02:30'),
      '2026-10-25T00:45:00Z',
      '2026-10-25T01:00:00.000Z',
    ],
    [
      'New York, the skipped hour: 02:00 opens at 03:00 EDT',
      schedule('America/New_York', 'Sun 02:00-04:00'),
      '2026-03-08T06:00:00Z',
      '2026-03-08T07:00:00.000Z',
    ],
    [
      'across midnight: after it closes, the next Friday 22:00',
      schedule('UTC', 'Fri 22:00-02:00'),
      '2026-12-05T02:00:00Z',
      '2026-12-11T22:00:00.000Z',
    ],
    [
      'across midnight in Berlin: Sunday 23:00 CET',
      schedule('Europe/Berlin', 'Sun 23:00-01:00'),
      '2026-11-30T00:00:00Z',
      '2026-12-06T22:00:00.000Z',
    ],
    ['cron: Friday 17:00 to Monday 09:00', schedule('UTC', 'cron: * 9-16 * * 1-5'), '2026-12-04T17:00:00Z', '2026-12-07T09:00:00.000Z'],
    ['cron: both day fields, the next Monday', schedule('UTC', 'cron: 0 12 1 * 1'), '2026-12-01T12:01:00Z', '2026-12-07T12:00:00.000Z'],
    [
      'cron: every 15 minutes, the next quarter',
      schedule('UTC', 'cron: 0,15,30,45 * * * *'),
      '2026-12-01T12:01:00Z',
      '2026-12-01T12:15:00.000Z',
    ],
    ['cron: a month away is past the look-ahead', schedule('UTC', 'cron: 0 0 15 * *'), '2026-12-16T00:00:00Z', undefined],
    ['cron: into January', schedule('UTC', 'cron: 0 9 * 1 *'), '2026-12-30T00:00:00Z', '2027-01-01T09:00:00.000Z'],
    ['no windows: never', schedule('UTC'), '2026-12-01T00:00:00Z', undefined],
  ];
  it.each(cases)('%s', (_name, s, at, next) => {
    expect(nextOpening(s, new Date(at))?.toISOString()).toBe(next);
    if (next !== undefined) expect(windowOpen(s, new Date(next))).toBe(true);
  });

  it('is the first open minute: the minute before it is closed', () => {
    for (const [, s, at, next] of cases) {
      if (next === undefined || next.startsWith(at.slice(0, 16))) continue;
      expect(windowOpen(s, new Date(new Date(next).getTime() - 60_000))).toBe(false);
    }
  });
});

describe("the fleet's and the team's schedule together: open when both are", () => {
  const both = [OFFICE_BERLIN, TEAM_NEW_YORK];
  const cases: [string, readonly Schedule[], string, boolean, string | undefined][] = [
    ['Tuesday 16:00 Berlin, 10:00 New York: both open', both, '2026-12-01T15:00:00Z', true, '2026-12-01T15:00:00.000Z'],
    ['Monday: Berlin open, New York not until Tuesday', both, '2026-11-30T12:00:00Z', false, '2026-12-01T15:00:00.000Z'],
    ['Tuesday 17:30 Berlin: New York open, Berlin again on Wednesday', both, '2026-12-01T16:30:00Z', false, '2026-12-02T15:00:00.000Z'],
    ['windows that never meet', [schedule('UTC', 'Sat 10:00-12:00'), TEAM_NEW_YORK], '2026-12-01T12:00:00Z', false, undefined],
    ['one schedule alone', [OFFICE_BERLIN], '2026-11-29T12:00:00Z', false, '2026-11-30T08:00:00.000Z'],
    ['none: always open', [], '2026-11-29T12:00:00Z', true, '2026-11-29T12:00:00.000Z'],
  ];
  it.each(cases)('%s', (_name, schedules, at, open, next) => {
    expect(allOpen(schedules, new Date(at))).toBe(open);
    expect(nextOpeningOfAll(schedules, new Date(at))?.toISOString()).toBe(next);
  });
});

describe('activeFreeze: the freeze in force', () => {
  const yearEnd: Freeze = { from: new Date('2026-12-20T00:00:00Z'), until: new Date('2027-01-04T00:00:00Z'), reason: 'year-end freeze' };
  const christmas: Freeze = { from: new Date('2026-12-24T00:00:00Z'), until: new Date('2027-01-10T00:00:00Z') };
  const cases: [string, readonly Freeze[], string, Freeze | undefined][] = [
    ['before it', [yearEnd], '2026-12-19T23:59:59Z', undefined],
    ['from its first instant', [yearEnd], '2026-12-20T00:00:00Z', yearEnd],
    ['until is exclusive', [yearEnd], '2027-01-04T00:00:00Z', undefined],
    ['overlapping: the one that ends last', [yearEnd, christmas], '2026-12-28T00:00:00Z', christmas],
    ['overlapping: only one in force', [yearEnd, christmas], '2026-12-21T00:00:00Z', yearEnd],
    ['none', [], '2026-12-28T00:00:00Z', undefined],
  ];
  it.each(cases)('%s', (_name, freezes, at, active) => {
    expect(activeFreeze(freezes, new Date(at))).toBe(active);
  });
});

describe('describeSchedule', () => {
  it('says the windows as written and the zone', () => {
    expect(describeSchedule(schedule('Europe/Berlin', 'Mon-Fri 09:00-17:00', 'cron: * 9-16 * * 1-5'))).toBe(
      'Mon-Fri 09:00-17:00, cron: * 9-16 * * 1-5 Europe/Berlin',
    );
  });
});

describe('nextOpening agrees with reading the clock minute by minute', () => {
  // around each daylight-saving change of both zones, windows that start, end or sit in the hour
  // that is skipped or comes twice, and windows across midnight: the boundary-to-boundary search
  // finds the same first open minute as a scan of every minute
  const changes = ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z', '2026-03-08T07:00:00Z', '2026-11-01T06:00:00Z'];
  const schedules = [
    schedule('Europe/Berlin', 'daily 02:30-03:15', 'Mon-Fri 09:00-17:00'),
    schedule('Europe/Berlin', 'daily 01:00-02:30', 'daily 23:00-00:30'),
    schedule('America/New_York', 'daily 01:30-02:10', 'Sat-Sun 22:00-01:00'),
    schedule('America/New_York', 'cron: 0,30 1-3 * * *'),
  ];
  it.each(
    fc.sample(fc.tuple(fc.constantFrom(...changes), fc.integer({ min: -6 * 60, max: 6 * 60 }), fc.nat(schedules.length - 1)), {
      numRuns: 150,
      seed: 31,
    }),
  )('%s and %i minutes, schedule %i', (change, minutes, which) => {
    const s = schedules[which]!;
    const at = new Date(new Date(change).getTime() + minutes * 60_000);
    const next = nextOpening(s, at);
    expect(next).toBeDefined();
    // every minute before it is closed, and it is open
    for (let t = at.getTime(); t < next!.getTime(); t = Math.floor(t / 60_000) * 60_000 + 60_000) {
      expect(windowOpen(s, new Date(t)), new Date(t).toISOString()).toBe(false);
    }
    expect(windowOpen(s, next!)).toBe(true);
  });
});
