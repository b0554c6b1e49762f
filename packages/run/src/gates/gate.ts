import type { DashboardTicks } from '../dashboard/dashboard.js';
import type { Forge } from '../forges/forge.js';
import type { PlannedJob } from '../plan/jobs-plan.js';
import type { Plan } from '../plan/plan.js';
import type { PolicyPlan } from '../policy/policy.js';
import type { ResolvedSettings } from '../settings/settings.js';

/**
 * A gate decides whether a planned job proposes now: a schedule window, a freeze, a rollout wave.
 * Gates run once per run, after the plan and before any job proposes; a job any gate holds does
 * not run this time.
 */

/** What a gate is given besides the job: the run's clock, its settings and every job it planned. */
export interface GateContext {
  /** The run's clock, read once when the gates run: every gate of a run sees the same instant. */
  readonly now: Date;
  readonly dryRun: boolean;
  readonly settings: ResolvedSettings;
  /** The dashboard's ticks (a person allowed a set of removals, asked for a retry). */
  readonly ticks: DashboardTicks;
  /** This run's jobs (this shard's), in run order. */
  readonly jobs: readonly PlannedJob[];
  /**
   * The whole plan: every variant of the control resources, whichever shard runs it. A fleet-wide
   * gate (a rollout wave) decides on it, so that every shard decides alike.
   */
  readonly plan: Plan;
  /** The update policies' decisions per variant and the fleet's rollouts (policy/), alike in every shard. */
  readonly policies: PolicyPlan;
  /**
   * The run's forge, for a fleet-wide gate that counts open proposals (limits): it reads each
   * repository's open proposals once a run (GitHub: one list per repository), so asking per variant
   * costs no read per variant. Absent: no proposal is known open.
   */
  readonly forge?: Pick<Forge, 'find'> | undefined;
  /**
   * The run's gates in order (set by applyGates): a fleet-wide gate asks the ones before it about
   * the variants of other shards, whose jobs it never sees.
   */
  readonly gates?: readonly Gate[] | undefined;
}

export type GateDecision =
  | { readonly pass: true }
  | {
      readonly pass: false;
      /** Why, in the words the report, the dashboard and the job's result show. */
      readonly reason: string;
      /** When it is worth looking again (a window opens, a freeze ends): said in the result. */
      readonly lookAgain?: Date | undefined;
      /**
       * A hold that needs a person (as the removal guard's): the job ends as failed with this stable
       * code and the run fails. Without one the job is deferred to a later run, and that is no failure.
       */
      readonly code?: string | undefined;
    };

export const PASS: GateDecision = { pass: true };

export interface Gate {
  /** Names the gate in a held job's result (`heldBy`). */
  readonly name: string;
  decide(job: PlannedJob, context: GateContext): GateDecision | Promise<GateDecision>;
}
