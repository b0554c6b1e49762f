import type { PlannedJob } from '../plan/jobs-plan.js';
import { failure, type VariantResult } from '../report/result.js';
import { freeze } from './freeze.js';
import type { Gate, GateContext } from './gate.js';
import { limits } from './limits.js';
import { rolloutWave } from './rollout-wave.js';
import { scheduleWindow } from './schedule-window.js';

/**
 * The gates every planned job passes before it proposes, in this order; the first that holds a
 * job decides for it. A new gate is a file of this folder and one line here. (The removal guard
 * is no gate: it decides, on every shard's removals, which removals and closings become jobs at
 * all, before collisions are checked, so it is part of the plan: plan/removal-guard.ts.)
 */
export const GATES: readonly Gate[] = [
  freeze, // first: a freeze, a team's pause or its invalid file holds whatever the window says
  scheduleWindow, // an update policy's (and its team's) schedule windows
  rolloutWave, // a rollout's wave: the wave before has the revision (merged, soaked, green), or a person advanced it
  limits, // last: the room of a policy's open and hourly proposals goes to the jobs the gates before let through
];

/** The jobs that run now, and a result for each one a gate held. */
export interface Gated {
  readonly jobs: readonly PlannedJob[];
  readonly held: readonly VariantResult[];
}

/** The gate stage: each job through every gate, before any job runs. */
export async function applyGates(gates: readonly Gate[], given: GateContext): Promise<Gated> {
  const context: GateContext = { ...given, gates };
  const jobs: PlannedJob[] = [];
  const held: VariantResult[] = [];
  for (const job of context.jobs) {
    if (job.kind === 'group') {
      // a group's members are asked one by one, as variant jobs: the group proposes those that pass
      let members: typeof job.group.members = [];
      for (const member of job.group.members) {
        const result = await firstHold(gates, member, context);
        if (result) held.push(result);
        else members = [...members, member];
      }
      if (members.length > 0) jobs.push({ ...job, group: { ...job.group, members } });
      continue;
    }
    const result = await firstHold(gates, job, context);
    if (result) held.push(result);
    else jobs.push(job);
  }
  return { jobs, held };
}

/** The result of the first gate that holds the job, or undefined when every gate passes it. */
async function firstHold(gates: readonly Gate[], job: PlannedJob, context: GateContext): Promise<VariantResult | undefined> {
  for (const gate of gates) {
    const decision = await gate.decide(job, context);
    if (!decision.pass) return heldResult(job, gate.name, decision, context.dryRun);
  }
  return undefined;
}

/** A held job's result: deferred with the gate's reason, or failed with its code when a person must act. */
function heldResult(
  job: PlannedJob,
  gate: string,
  hold: { readonly reason: string; readonly lookAgain?: Date | undefined; readonly code?: string | undefined },
  dryRun: boolean,
): VariantResult {
  const id = { variant: job.variant, downstream: job.downstream, dryRun, conflicts: [], conflictCount: 0 };
  if (hold.code !== undefined) return { ...id, ...failure(hold.code, hold.reason) };
  const again = hold.lookAgain ? ` (looked at again from ${hold.lookAgain.toISOString()})` : '';
  return { ...id, action: 'deferred', writes: false, heldBy: gate, message: `${hold.reason}${again}` };
}
