import { allOpen, describeSchedule, instantText, LOOK_AHEAD_DAYS, nextOpeningOfAll } from '../policy/schedule.js';
import type { Schedule, VariantPolicy } from '../policy/policy.js';
import { PASS, type Gate, type GateDecision } from './gate.js';
import { governedBy } from './governed.js';

/**
 * Holds a governed variant's job outside its update policy's schedule windows, and outside its
 * cluster team's own window when the team's file has one (new proposals only when both are open),
 * and says when the next window opens (`lookAgain`). Only a variant job is held: removals, retires
 * and updates pass. A variant no policy governs, or whose policy has no schedule, passes at once.
 */
export const scheduleWindow: Gate = {
  name: 'schedule-window',
  decide(job, { now, policies }): GateDecision {
    // a job proposing several variants (a group) is held when any of them is
    for (const { policy } of governedBy(job, policies)) {
      const decision = outside(policy, now);
      if (!decision.pass) return decision;
    }
    return PASS;
  },
};

function outside(governed: VariantPolicy, now: Date): GateDecision {
  const team = governed.downstream !== undefined && !('invalid' in governed.downstream) ? governed.downstream : undefined;
  const windows: { readonly schedule: Schedule; readonly whose: string }[] = [];
  if (governed.policy.schedule) windows.push({ schedule: governed.policy.schedule, whose: '' });
  if (team?.schedule) windows.push({ schedule: team.schedule, whose: `${team.file}: ` });
  if (windows.length === 0) return PASS;
  const { open, next } = evaluate(
    windows.map((w) => w.schedule),
    now,
  );
  if (open) return PASS;

  const described = windows.map((w) => `${w.whose}${describeSchedule(w.schedule)}`).join(' and ');
  const when = next ? `next window opens ${instantText(next)}` : `no window opens in the next ${LOOK_AHEAD_DAYS} days`;
  return { pass: false, reason: `outside the schedule window (${described}); ${when}`, lookAgain: next };
}

interface Evaluated {
  readonly at: number;
  readonly open: boolean;
  readonly next: Date | undefined;
}

/**
 * Open now, else the next opening, found once per run for each pair of schedules: the variants of
 * one policy share its schedule object and the gates see one instant, so a thousand of them cost
 * one reading of the clock in its zone, not a thousand.
 */
const evaluated = new WeakMap<Schedule, Map<Schedule | undefined, Evaluated>>();

function evaluate(schedules: readonly Schedule[], now: Date): Evaluated {
  const [first, second] = schedules as [Schedule, Schedule | undefined];
  let byTeam = evaluated.get(first);
  if (byTeam === undefined) evaluated.set(first, (byTeam = new Map()));
  const known = byTeam.get(second);
  if (known !== undefined && known.at === now.getTime()) return known;
  const open = allOpen(schedules, now);
  const result = { at: now.getTime(), open, next: open ? now : nextOpeningOfAll(schedules, now) };
  byTeam.set(second, result);
  return result;
}
