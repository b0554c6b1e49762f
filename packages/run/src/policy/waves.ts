import { ControlError } from '../control/control-source.js';
import type { VariantPlan } from '../plan/variant-plan.js';
import type { DownstreamPolicy, UpdatePolicy } from './policy.js';

/** A variant's place in its policy's rollout: the wave's name and its index in `rollout.waves`. */
export interface Wave {
  readonly name: string;
  readonly index: number;
  /**
   * The team's file asked for an earlier wave than the fleet's label gives: a widening, so the
   * file is invalid (`downstream-policy-invalid`) and this says why; `name`/`index` stay the fleet's.
   */
  readonly invalid?: string | undefined;
}

/**
 * The wave of a variant under `policy` (undefined when the policy has no rollout): the downstream
 * Repository's label (`spec.rollout.label`, default `kdelta.dev/wave`); a Repository without it is
 * in the last wave, so a forgotten label never makes a production cluster a canary. A label value
 * the policy does not list is a ControlError naming the Repository's `metadata.labels.<label>`.
 * `narrowed`: the team's file (downstream-policy.ts), whose `wave` may only be the same or later.
 */
export function waveOf(variant: VariantPlan, policy: UpdatePolicy, narrowed?: Pick<DownstreamPolicy, 'file' | 'wave'>): Wave | undefined {
  const rollout = policy.rollout;
  if (!rollout) return undefined;
  const repository = variant.downstream.repository;
  const label = repository.labels[rollout.label];
  const index = label === undefined ? rollout.waves.length - 1 : rollout.waves.indexOf(label);
  if (index < 0) {
    throw new ControlError([
      {
        source: repository.source,
        field: `metadata.labels.${rollout.label}`,
        message: `"${label}" is not a wave of UpdatePolicy "${policy.name}", which governs variants of this Repository (its waves: ${rollout.waves.join(', ')})`,
      },
    ]);
  }
  const fleet: Wave = { name: rollout.waves[index]!, index };
  if (narrowed?.wave === undefined) return fleet;
  const own = rollout.waves.indexOf(narrowed.wave);
  if (own < 0) {
    // parseDownstreamPolicy refuses it first; said here too for a caller that did not parse
    return {
      ...fleet,
      invalid: `${narrowed.file}: spec.wave: not a wave of UpdatePolicy "${policy.name}" (its waves: ${rollout.waves.join(', ')})`,
    };
  }
  if (own < index) {
    return {
      ...fleet,
      invalid: `${narrowed.file}: spec.wave: "${narrowed.wave}" is earlier than wave "${fleet.name}" of Repository "${repository.name}": a team's file may only choose the same or a later wave`,
    };
  }
  return { name: narrowed.wave, index: own };
}
