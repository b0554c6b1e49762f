import type { CronWindow, Freeze, Schedule, ScheduleWindow, WeeklyWindow } from './policy.js';

/**
 * When a schedule is open, and when it opens next: pure, on the run's clock. Windows are read in
 * the schedule's IANA time zone through Intl (no time-zone table of our own), so a window keeps its
 * wall-clock hours across a daylight-saving change. Minute precision: an instant is read as the
 * minute it falls in.
 */

/** How far ahead {@link nextOpening} looks: a weekly window opens within a week, and a day more covers a DST change. */
export const LOOK_AHEAD_DAYS = 8;

const MINUTE = 60_000;
const DAY_MINUTES = 1440;

/** A wall-clock date and time in a zone, and its minute since midnight. */
interface Local {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  /** 0 = Sunday. */
  readonly weekday: number;
  readonly minute: number;
}

/** A calendar day (of a zone's wall clock). */
interface LocalDay {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly weekday: number;
}

/** [from, until) in minutes of a day. */
type Interval = readonly [number, number];

/** Is the schedule open at `at`: inside any of its windows, in its time zone. */
export function windowOpen(schedule: Schedule, at: Date): boolean {
  const local = localTime(schedule.timeZone, at.getTime());
  return dayIntervals(schedule.windows, local).some(([from, until]) => local.minute >= from && local.minute < until);
}

/**
 * The first instant at or after `at` at which the schedule is open (`at` itself when it is open
 * now), or undefined when none of its windows opens within {@link LOOK_AHEAD_DAYS} days. It jumps
 * from window boundary to window boundary, never minute by minute.
 */
export function nextOpening(schedule: Schedule, at: Date): Date | undefined {
  if (windowOpen(schedule, at)) return at;
  const start = at.getTime();
  const limit = start + LOOK_AHEAD_DAYS * DAY_MINUTES * MINUTE;
  const today = localTime(schedule.timeZone, start);
  let best: number | undefined;
  let foundOn: number | undefined;
  // from the day before today (its wall-clock hour may come again after `at` when the clocks go
  // back) until the day after the first day with an opening (whose hour may repeat in the same way)
  for (let offset = -1; offset <= LOOK_AHEAD_DAYS + 1 && (foundOn === undefined || offset <= foundOn + 1); offset++) {
    const day = addDays(today, offset);
    const intervals = dayIntervals(schedule.windows, day);
    if (intervals.length === 0) continue;
    // where a window opens: its starts, and the instant the clocks change (going back to an
    // hour inside a window opens it again, mid-window)
    const candidates = intervals.flatMap(([from]) => instantsOf(schedule.timeZone, day, from));
    const change = clockChange(schedule.timeZone, wallMs(day, 0));
    if (change !== undefined) candidates.push(change);
    for (const instant of candidates) {
      if (instant <= start || instant > limit || (best !== undefined && instant >= best)) continue;
      // a start that falls in a DST gap maps to the gap's end, which the window may not reach
      if (!windowOpen(schedule, new Date(instant))) continue;
      best = instant;
      foundOn ??= offset;
    }
  }
  return best === undefined ? undefined : new Date(best);
}

/** Are all the schedules open at `at` (a fleet's window and a team's: new proposals only when both are). */
export function allOpen(schedules: readonly Schedule[], at: Date): boolean {
  return schedules.every((s) => windowOpen(s, at));
}

/** The first instant at or after `at` at which every schedule is open, within {@link LOOK_AHEAD_DAYS} days of `at`. */
export function nextOpeningOfAll(schedules: readonly Schedule[], at: Date): Date | undefined {
  const limit = at.getTime() + LOOK_AHEAD_DAYS * DAY_MINUTES * MINUTE;
  let t: Date | undefined = at;
  // each step moves to the next opening of a schedule closed at t: t only grows, until all are open
  for (;;) {
    const closed: Schedule | undefined = schedules.find((s) => !windowOpen(s, t!));
    if (closed === undefined) return t;
    t = nextOpening(closed, t);
    if (t === undefined || t.getTime() > limit) return undefined;
  }
}

/** The freeze in force at `at` (`from` ≤ at < `until`); of several, the one that ends last. */
export function activeFreeze(freezes: readonly Freeze[], at: Date): Freeze | undefined {
  const t = at.getTime();
  let active: Freeze | undefined;
  for (const f of freezes) {
    if (f.from.getTime() <= t && t < f.until.getTime() && (active === undefined || f.until > active.until)) active = f;
  }
  return active;
}

/** A schedule in words, for messages: `Mon-Fri 09:00-17:00, Sat 10:00-12:00 Europe/Berlin`. */
export function describeSchedule(schedule: Schedule): string {
  return `${schedule.windows.map((w) => w.text).join(', ')} ${schedule.timeZone}`;
}

/** The open minutes of one wall-clock day, merged and in order. */
function dayIntervals(windows: readonly ScheduleWindow[], day: LocalDay): Interval[] {
  const all = windows.flatMap((w) => windowIntervals(w, day));
  all.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [from, until] of all) {
    const last = merged.at(-1);
    if (last && from <= last[1]) last[1] = Math.max(last[1], until);
    else merged.push([from, until]);
  }
  return merged;
}

function windowIntervals(window: ScheduleWindow, day: LocalDay): Interval[] {
  switch (window.kind) {
    case 'weekly':
      return weeklyIntervals(window, day);
    case 'cron':
      return cronIntervals(window, day);
    default:
      return window satisfies never;
  }
}

function weeklyIntervals(w: WeeklyWindow, day: LocalDay): Interval[] {
  const today = w.days.includes(day.weekday);
  if (w.from < w.until) return today ? [[w.from, w.until]] : [];
  // past midnight: the evening belongs to the day it starts on, the morning to the day after
  const out: Interval[] = [];
  if (w.days.includes((day.weekday + 6) % 7) && w.until > 0) out.push([0, w.until]);
  if (today) out.push([w.from, DAY_MINUTES]);
  return out;
}

function cronIntervals(w: CronWindow, day: LocalDay): Interval[] {
  if (!w.months.includes(day.month)) return [];
  const ofMonth = w.daysOfMonth.includes(day.day);
  const ofWeek = w.daysOfWeek.includes(day.weekday);
  // cron's rule: with both day fields restricted a day matching either is open; else both must match
  // (an unrestricted field matches every day, so "both" is then the restricted one alone)
  const dayOpen = w.daysRestricted.month && w.daysRestricted.week ? ofMonth || ofWeek : ofMonth && ofWeek;
  if (!dayOpen) return [];
  const minutes = [...w.minutes].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const hour of [...w.hours].sort((a, b) => a - b)) {
    for (const m of minutes) {
      const at = hour * 60 + m;
      const last = out.at(-1);
      if (last && last[1] === at) last[1] = at + 1;
      else out.push([at, at + 1]);
    }
  }
  return out;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formats.set(timeZone, f);
  }
  return f;
}

const WEEKDAYS: Readonly<Record<string, number>> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** The wall clock of `timeZone` at instant `t` (ms). */
function localTime(timeZone: string, t: number): Local {
  const parts: Record<string, string> = {};
  for (const p of format(timeZone).formatToParts(new Date(t))) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS[parts.weekday!] ?? 0,
    minute: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/** The wall clock read as if it were UTC, in ms: an instant's local time minus the instant is the zone's offset. */
function wallMs(day: LocalDay, minute: number): number {
  return Date.UTC(day.year, day.month - 1, day.day) + minute * MINUTE;
}

/** The zone's offset from UTC at instant `t`, in ms. */
function offsetAt(timeZone: string, t: number): number {
  const floored = Math.floor(t / MINUTE) * MINUTE;
  return wallOf(timeZone, floored) - floored;
}

/**
 * The instants whose wall clock reads `minute` of `day`: one most of the time, two when the clocks
 * go back (the hour comes twice), and in a gap when they go forward the first instant after the gap.
 */
function instantsOf(timeZone: string, day: LocalDay, minute: number): number[] {
  const wall = wallMs(day, minute);
  // an offset changes at most once within a day around any instant: the offsets a day before and after cover it
  const offsets = new Set([
    offsetAt(timeZone, wall - DAY_MINUTES * MINUTE),
    offsetAt(timeZone, wall),
    offsetAt(timeZone, wall + DAY_MINUTES * MINUTE),
  ]);
  const found = [...offsets].map((o) => wall - o).filter((t) => wallOf(timeZone, t) === wall);
  if (found.length > 0) return [...new Set(found)].sort((a, b) => a - b);
  // in a gap: the wall clock skips `minute`; the window opens when the clock jumps past it
  let low = wall - Math.max(...offsets); // its wall clock reads before `wall`
  let high = wall - Math.min(...offsets); // its wall clock reads after
  while (high - low > MINUTE) {
    const mid = low + Math.floor((high - low) / MINUTE / 2) * MINUTE;
    if (wallOf(timeZone, mid) < wall) low = mid;
    else high = mid;
  }
  return [high];
}

/** The instant the zone's offset changes within the day whose wall clock starts at `dayWall` (none: no change that day). */
function clockChange(timeZone: string, dayWall: number): number | undefined {
  // the instants around the day, wide enough for any offset (UTC-12 to UTC+14)
  let low = dayWall - 14 * 60 * MINUTE;
  let high = dayWall + (DAY_MINUTES + 12 * 60) * MINUTE;
  const before = offsetAt(timeZone, low);
  if (offsetAt(timeZone, high) === before) return undefined;
  while (high - low > MINUTE) {
    const mid = low + Math.floor((high - low) / MINUTE / 2) * MINUTE;
    if (offsetAt(timeZone, mid) === before) low = mid;
    else high = mid;
  }
  return high;
}

function wallOf(timeZone: string, t: number): number {
  const local = localTime(timeZone, t);
  return wallMs(local, local.minute);
}

function addDays(day: LocalDay, n: number): LocalDay {
  const d = new Date(Date.UTC(day.year, day.month - 1, day.day + n));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), weekday: d.getUTCDay() };
}

/** An instant as messages write it: to the second, in UTC (`2026-12-01T08:00:00Z`). */
export function instantText(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
