import type { CronWindow, ScheduleWindow, WeeklyWindow } from './policy.js';
import { quote } from './duration.js';

/**
 * A schedule window as written in a policy, parsed (its evaluation is schedule.ts's):
 * - weekly: `Mon-Fri 09:00-17:00`, `Sat 10:00-12:00`, `Mon,Wed 08:00-10:00`, `daily 09:00-17:00`,
 *   `Fri 22:00-02:00` (opens Friday 22:00, runs past midnight to Saturday 02:00), `24:00` ends a day;
 * - cron: `cron: * 9-16 * * 1-5`: five fields (minute hour day-of-month month day-of-week) with
 *   `*`, numbers, ranges `a-b`, lists `a,b`, steps `*\/n` and `a-b/n`, names `jan`…`dec`, `sun`…`sat`.
 */

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export const WINDOW_EXAMPLES = '"Mon-Fri 09:00-17:00", "daily 09:00-17:00", "Fri 22:00-02:00" or "cron: * 9-16 * * 1-5"';

export function parseWindow(value: unknown): { ok: true; window: ScheduleWindow } | { ok: false; reason: string } {
  if (typeof value !== 'string') return { ok: false, reason: `expected a window like ${WINDOW_EXAMPLES}, got ${quote(value)}` };
  const text = value.trim();
  const cron = /^cron:\s*(.*)$/i.exec(text);
  return cron ? parseCron(cron[1]!, value) : parseWeekly(text, value);
}

function parseWeekly(text: string, written: string): { ok: true; window: WeeklyWindow } | { ok: false; reason: string } {
  const m = /^(\S+)\s+(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/.exec(text);
  if (!m) return { ok: false, reason: `expected a window like ${WINDOW_EXAMPLES}, got ${quote(written)}` };
  const days = parseDays(m[1]!);
  if (typeof days === 'string') return { ok: false, reason: `${quote(written)}: ${days}` };
  const from = minuteOfDay(Number(m[2]), Number(m[3]));
  const until = minuteOfDay(Number(m[4]), Number(m[5]));
  if (from === undefined || from === 1440 || until === undefined || until === 0) {
    return { ok: false, reason: `${quote(written)}: times are 00:00 to 24:00 (a window opens before 24:00 and closes after 00:00)` };
  }
  if (from === until) return { ok: false, reason: `${quote(written)}: the window opens and closes at the same minute` };
  return { ok: true, window: { kind: 'weekly', days, from, until, text: written } };
}

function minuteOfDay(h: number, m: number): number | undefined {
  if (m > 59 || h > 24 || (h === 24 && m !== 0)) return undefined;
  return h * 60 + m;
}

/** `Mon-Fri`, `Sat`, `Mon,Wed,Fri`, `Fri-Mon` (across the week's end), `daily` → sorted days (0 = Sunday). */
function parseDays(text: string): number[] | string {
  if (text.toLowerCase() === 'daily') return [0, 1, 2, 3, 4, 5, 6];
  const days = new Set<number>();
  for (const part of text.split(',')) {
    const [a, b, ...rest] = part.split('-');
    const from = DAY_NAMES.indexOf((a ?? '').toLowerCase());
    const to = b === undefined ? from : DAY_NAMES.indexOf(b.toLowerCase());
    if (from < 0 || to < 0 || rest.length > 0) return `unknown days ${quote(part)} (expected Mon-Fri, Sat, Mon,Wed or daily)`;
    for (let d = from; ; d = (d + 1) % 7) {
      days.add(d);
      if (d === to) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** The first name's number (months count from 1, days from 0). */
  readonly nameBase?: number;
}

const CRON_FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  // 7 is Sunday as well as 0, as in cron
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

function parseCron(expression: string, written: string): { ok: true; window: CronWindow } | { ok: false; reason: string } {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    return { ok: false, reason: `${quote(written)}: a cron window has five fields (minute hour day-of-month month day-of-week)` };
  }
  const values: number[][] = [];
  for (const [i, field] of CRON_FIELDS.entries()) {
    const v = parseCronField(fields[i]!, field);
    if (typeof v === 'string') return { ok: false, reason: `${quote(written)}: ${field.name}: ${v}` };
    values.push(v);
  }
  const daysOfWeek = [...new Set(values[4]!.map((d) => (d === 7 ? 0 : d)))].sort((a, b) => a - b);
  return {
    ok: true,
    window: {
      kind: 'cron',
      minutes: values[0]!,
      hours: values[1]!,
      daysOfMonth: values[2]!,
      months: values[3]!,
      daysOfWeek,
      // cron's rule: a day field written as `*` (or `*/n`) does not restrict the day
      daysRestricted: { month: !fields[2]!.startsWith('*'), week: !fields[4]!.startsWith('*') },
      text: written,
    },
  };
}

function parseCronField(text: string, field: CronField): number[] | string {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(part);
    if (!m) return `${quote(part)} is not a value, range or step`;
    const step = m[2] === undefined ? 1 : Number(m[2]);
    if (step < 1) return `${quote(part)}: a step is at least 1`;
    let from: number;
    let to: number;
    if (m[1] === '*') {
      from = field.min;
      to = field.max === 7 ? 6 : field.max;
    } else {
      const [a, b, ...rest] = m[1]!.split('-');
      if (rest.length > 0) return `${quote(part)} is not a value, range or step`;
      const x = cronValue(a!, field);
      if (typeof x === 'string') return x;
      from = x;
      if (b === undefined) {
        // `5/15`: from 5 to the end, every 15
        to = m[2] === undefined ? x : field.max;
      } else {
        const y = cronValue(b, field);
        if (typeof y === 'string') return y;
        if (y < x) return `${quote(part)}: a range goes from low to high`;
        to = y;
      }
    }
    for (let v = from; v <= to; v += step) out.add(v);
  }
  return [...out].sort((a, b) => a - b);
}

function cronValue(text: string, field: CronField): number | string {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (field.nameBase ?? 0);
  if (!/^\d{1,2}$/.test(text)) return `${quote(text)} is not a number${field.names ? ' or a name' : ''}`;
  const n = Number(text);
  if (n < field.min || n > field.max) return `${n} is outside ${field.min}-${field.max}`;
  return n;
}

/** Whether `zone` is an IANA time zone this runtime knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
