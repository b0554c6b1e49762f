import { activeFreeze, instantText } from '../policy/schedule.js';
import { PASS, type Gate, type GateDecision } from './gate.js';

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
    if (job.kind !== 'variant') return PASS;
    const governed = policies.byVariant.get(job.variant);
    if (governed === undefined) return PASS;
    const team = governed.downstream;
    if (team !== undefined && 'invalid' in team) return { pass: false, code: DOWNSTREAM_POLICY_INVALID, reason: team.invalid };

    const frozen = activeFreeze(governed.policy.freezes, now);
    if (frozen !== undefined) {
      const why = frozen.reason ? `: ${frozen.reason}` : '';
      return {
        pass: false,
        reason: `frozen by update policy ${governed.policy.name} from ${instantText(frozen.from)} until ${instantText(frozen.until)}${why}`,
        lookAgain: frozen.until,
      };
    }

    const pause = team?.pause;
    if (team !== undefined && pause !== undefined && (pause.until === undefined || now < pause.until)) {
      const until = pause.until ? ` until ${instantText(pause.until)}` : '';
      const why = pause.reason ? `: ${pause.reason}` : '';
      return { pass: false, reason: `paused by ${team.file}${until}${why}`, lookAgain: pause.until };
    }
    return PASS;
  },
};
