import { inert, shortName } from '../markdown.js';
import { NO_HAND, rolloutKey, rolloutLabel, type RolloutHand } from '../policy/rollout.js';
import type { RolloutReport } from '../report/rollouts.js';

/**
 * The dashboard's rollout boxes: per rollout, "advance to the next wave now" and "halt" ("resume"
 * when a box halted it), and the hand state the dashboard keeps between runs in its hidden data
 * (a box-halt lasts until resumed, an advance until the rollout ends). Pure: text in, data out.
 */

export type RolloutTickKind = 'advance-rollout' | 'halt-rollout' | 'resume-rollout';
export const ROLLOUT_TICK_KINDS: readonly RolloutTickKind[] = ['advance-rollout', 'halt-rollout', 'resume-rollout'];

/** What a person ticked: rollouts (by key) to advance to a wave, halt, resume. */
export interface RolloutTicks {
  readonly advance: ReadonlyMap<string, string>;
  readonly halt: ReadonlySet<string>;
  readonly resume: ReadonlySet<string>;
}

/** An advance box's subject: the rollout's key and the wave it advances to (a wave name has no space). */
export function advanceSubject(key: string, wave: string): string {
  return `${key} ${wave}`;
}

export function parseAdvanceSubject(subject: string): { key: string; wave: string } | undefined {
  const at = subject.lastIndexOf(' ');
  return at > 0 ? { key: subject.slice(0, at), wave: subject.slice(at + 1) } : undefined;
}

/** The hand state after this run's ticks: what the dashboard kept, plus halts and advances ticked, less the halts resumed. */
export function handAfterTicks(kept: RolloutHand, ticks: RolloutTicks): RolloutHand {
  const halted = new Set([...kept.halted, ...ticks.halt]);
  for (const key of ticks.resume) halted.delete(key);
  return { halted, advanced: new Map([...kept.advanced, ...ticks.advance]) };
}

/**
 * The hand state as the hidden data keeps it. A halt stays until resumed, even while its rollout is
 * not under way (a run that could not read the downstreams sees no rollout, and must not forget
 * a person's halt); an advance only while its rollout is (the rest is history).
 */
export function keptHand(hand: RolloutHand, rollouts: readonly RolloutReport[]): { halted: string[]; advanced: Record<string, string> } {
  const live = new Set(rollouts.map(rolloutKey));
  return {
    halted: [...hand.halted].sort(),
    advanced: Object.fromEntries([...hand.advanced].filter(([k]) => live.has(k)).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** The hand state from the hidden data's `rollouts` (anything malformed is left out). */
export function handOfData(data: unknown): RolloutHand {
  const d = data as { halted?: unknown; advanced?: unknown } | undefined;
  if (typeof d !== 'object' || d === null) return NO_HAND;
  const halted = Array.isArray(d.halted) ? d.halted.filter((k): k is string => typeof k === 'string') : [];
  const advanced =
    typeof d.advanced === 'object' && d.advanced !== null
      ? Object.entries(d.advanced as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string')
      : [];
  return { halted: new Set(halted), advanced: new Map(advanced) };
}

const code = (text: string) => inert(shortName(text), 'code');

/** A checkbox line with kdelta's marker (the subject percent-encoded: no `-->` can appear). */
type Checkbox = (kind: RolloutTickKind, subject: string, text: string) => string;

/** How the rollout boxes work, said once above the rollouts. */
export const ROLLOUT_BOXES_HOW =
  "Tick **advance** to propose a rollout's next wave now, whatever it waits on; **halt** to propose nothing more of that revision until **resume** is ticked. A box acts on the runs that keep this dashboard only (of a sharded run: this shard's).";

/** A rollout's boxes, under its lines: advance to the next wave (unless halted), halt, or resume a box's halt. */
export function rolloutBoxes(r: RolloutReport, hand: RolloutHand, checkbox: Checkbox): string[] {
  const key = rolloutKey(r);
  const what = `${code(rolloutLabel(r))} (policy ${code(r.policy)})`;
  const names = r.waves.map((w) => w.name);
  const at = Math.max(
    r.proposing === undefined ? names.length : names.indexOf(r.proposing),
    r.advancedTo ? names.indexOf(r.advancedTo) : -1,
  );
  const next = names[at + 1];
  const lines: string[] = [];
  if (next !== undefined && r.halted === undefined)
    lines.push(`  ${checkbox('advance-rollout', advanceSubject(key, next), `advance ${what} to ${next} now`)}`);
  if (hand.halted.has(key)) lines.push(`  ${checkbox('resume-rollout', key, `resume ${what}`)}`);
  else if (r.proposing !== undefined) lines.push(`  ${checkbox('halt-rollout', key, `halt ${what}`)}`);
  return lines;
}

/** The halts this dashboard keeps of rollouts not under way now: each said, with its resume box. */
export function heldOverHalts(hand: RolloutHand, rollouts: readonly RolloutReport[], checkbox: Checkbox): string[] {
  const live = new Set(rollouts.map(rolloutKey));
  return [...hand.halted]
    .filter((k) => !live.has(k))
    .sort()
    .flatMap((key) => {
      const [policy = '', upstream = '', revision = ''] = key.split(' ');
      const what = `${code(rolloutLabel({ upstream, revision, commit: '' }))} (policy ${code(policy)})`;
      return [`- ${what}: halted on this dashboard, not under way now`, `  ${checkbox('resume-rollout', key, `resume ${what}`)}`];
    });
}
