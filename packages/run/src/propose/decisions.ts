import { setResourceField, type Conflict } from '@kdelta/merge-core';
import type { Prepared } from '../jobs/change.js';
import { conflictChoice, type DecidedConflict, type Decisions, type IgnoredTick, type Tick } from './proposal-body.js';
import type { Workspace } from './workspace.js';

/**
 * The conflicts a person decided on the open proposal, applied to the prepared package: keeping
 * local's value writes it with a `# kdelta:local` pin (merge-core's, which every later merge
 * honours), taking upstream's writes upstream's value unpinned (local then agrees with upstream,
 * so later updates follow it). Only the ticked fields change; a tick is matched by its box's id
 * (the resource, the field and both full values), and one that matches no conflict of this
 * rebuild is reported, never applied.
 */

export interface Wanted {
  /** Ticked on the open proposal since the last run. */
  readonly ticked: readonly Tick[];
  /** Decided on the open proposal by an earlier run (the ids its metadata records): applied again on every rebuild. */
  readonly decided: readonly string[];
}

const NO_LONGER = 'ignored: the field no longer conflicts as ticked (the upstream or the downstream changed since)';

/** The prepared package with the decisions applied: its conflicts without the decided ones, and its `decisions`. */
export async function applyDecisions(ws: Workspace, directory: string, prepared: Prepared, wanted: Wanted): Promise<Prepared> {
  const ids = new Set([...wanted.decided, ...wanted.ticked.map((t) => t.id)]);
  if (ids.size === 0) return prepared;
  const decided: DecidedConflict[] = [];
  const ignored: IgnoredTick[] = [];
  const remaining: Conflict[] = [];
  const matched = new Set<string>();
  for (const conflict of prepared.conflicts) {
    const choice = conflictChoice(conflict);
    if (!choice || !ids.has(choice.id)) {
      remaining.push(conflict);
      continue;
    }
    matched.add(choice.id);
    const text = await ws.readFile(directory, conflict.file);
    const set =
      typeof text === 'string'
        ? setResourceField({
            text,
            file: conflict.file,
            resource: conflict.resource,
            path: conflict.path,
            value: conflict.values[choice.take],
            pin: choice.take === 'local',
          })
        : ({ ok: false, reason: `${conflict.file} is not a text file of the package` } as const);
    if (!set.ok) {
      ignored.push({ label: choice.label, reason: `not applied: ${set.reason}` });
      remaining.push(conflict);
      continue;
    }
    await ws.writeFile(directory, conflict.file, set.text);
    decided.push({ conflict, choice });
  }
  // a decision of an earlier run whose conflict is gone needs no word: only new ticks are reported
  for (const tick of wanted.ticked) if (!matched.has(tick.id)) ignored.push({ label: tick.text, reason: NO_LONGER });
  return { ...prepared, conflicts: remaining, decisions: { decided, ignored } };
}

/** What the run's result says about the decisions. */
export function decisionsMessage(d: Decisions | undefined, ticked: readonly Tick[]): string | undefined {
  if (!d) return undefined;
  const applied = d.decided.filter((x) => ticked.some((t) => t.id === x.choice.id));
  const parts = [
    ...applied.map((x) => `decided on the proposal: ${x.choice.label}`),
    ...d.ignored.map((t) => `tick "${t.label}" ${t.reason}`),
  ];
  return parts.length > 0 ? parts.join('; ') : undefined;
}
