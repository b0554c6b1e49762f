import { allOpen, describeSchedule, instantText, LOOK_AHEAD_DAYS, nextOpeningOfAll } from '../policy/schedule.js';
import type { Schedule } from '../policy/policy.js';
import { PASS, type Gate, type GateDecision } from './gate.js';

/**
 * Holds a governed variant's job outside its update policy's schedule windows, and outside its
 * cluster team's own window when the team's file has one (new proposals only when both are open),
 * and says when the next window opens (`lookAgain`). Only a variant job is held: removals, retires
 * and updates pass. A variant no policy governs, or whose policy has no schedule, passes at once.
 */
export const scheduleWindow: Gate = {
  name: 'schedule-window',
  decide(job, { now, policies }): GateDecision {
    if (job.kind !== 'variant') return PASS;
    const governed = policies.byVariant.get(job.variant);
    if (governed === undefined) return PASS;
    const team = governed.downstream !== undefined && !('invalid' in governed.downstream) ? governed.downstream : undefined;
    const windows: { readonly schedule: Schedule; readonly whose: string }[] = [];
    if (governed.policy.schedule) windows.push({ schedule: governed.policy.schedule, whose: '' });
    if (team?.schedule) windows.push({ schedule: team.schedule, whose: `${team.file}: ` });
    if (windows.length === 0) return PASS;
    const schedules = windows.map((w) => w.schedule);
    if (allOpen(schedules, now)) return PASS;

    const described = windows.map((w) => `${w.whose}${describeSchedule(w.schedule)}`).join(' and ');
    const next = opening(schedules, now);
    const when = next ? `next window opens ${instantText(next)}` : `no window opens in the next ${LOOK_AHEAD_DAYS} days`;
    return { pass: false, reason: `outside the schedule window (${described}); ${when}`, lookAgain: next };
  },
};

/**
 * The next opening, computed once per run for each set of schedules: the variants of one policy
 * share its schedule, and the gates see one instant, so a fleet of them costs one search.
 */
const openings = new WeakMap<Schedule, Map<Schedule | undefined, { readonly at: number; readonly next: Date | undefined }>>();

function opening(schedules: readonly Schedule[], now: Date): Date | undefined {
  const [first, second] = schedules as [Schedule, Schedule | undefined];
  let byTeam = openings.get(first);
  if (byTeam === undefined) openings.set(first, (byTeam = new Map()));
  const known = byTeam.get(second);
  if (known !== undefined && known.at === now.getTime()) return known.next;
  const next = nextOpeningOfAll(schedules, now);
  byTeam.set(second, { at: now.getTime(), next });
  return next;
}
