import { activeFreeze, instantText } from '../policy/schedule.js';
import type { VariantPolicy } from '../policy/policy.js';
import { PASS, type Gate, type GateDecision } from './gate.js';
import { governedBy } from './governed.js';

/** The code of a job held because its team's `.kdelta/downstream-policy.yaml` is invalid: the team fixes its file. */
export const DOWNSTREAM_POLICY_INVALID = 'downstream-policy-invalid';

/**
 * Holds a governed variant's job during a freeze of its update policy, and while its cluster team
 * paused it in its own repository (`pause` of its DownstreamPolicy). A team file the plan found
 * invalid fails the job (code {@link DOWNSTREAM_POLICY_INVALID}): the team must fix it, and until
 * then nothing new reaches that repository. Only a variant job is held: removals, retires and
 * updates are never held by a policy. A variant no policy governs passes at once.
 */
export const freeze: Gate = {
  name: 'freeze',
  decide(job, { now, policies }): GateDecision {
    // a job proposing several variants (a group) is held when any of them is
    for (const { policy } of governedBy(job, policies)) {
      const decision = frozen(policy, now);
      if (!decision.pass) return decision;
    }
    return PASS;
  },
};

function frozen(governed: VariantPolicy, now: Date): GateDecision {
  const team = governed.downstream;
  if (team !== undefined && 'invalid' in team) return { pass: false, code: DOWNSTREAM_POLICY_INVALID, reason: team.invalid };

  const freeze = activeFreeze(governed.policy.freezes, now);
  if (freeze !== undefined) {
    const why = freeze.reason ? `: ${freeze.reason}` : '';
    return {
      pass: false,
      reason: `frozen by update policy ${governed.policy.name} from ${instantText(freeze.from)} until ${instantText(freeze.until)}${why}`,
      lookAgain: freeze.until,
    };
  }

  const pause = team?.pause;
  if (team !== undefined && pause !== undefined && (pause.until === undefined || now < pause.until)) {
    const until = pause.until ? ` until ${instantText(pause.until)}` : '';
    const why = pause.reason ? `: ${pause.reason}` : '';
    return { pass: false, reason: `paused by ${team.file}${until}${why}`, lookAgain: pause.until };
  }
  return PASS;
}
