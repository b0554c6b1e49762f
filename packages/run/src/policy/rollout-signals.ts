import type { CommitSignal, Forge } from '../forges/forge.js';
import { message } from '../report/result.js';
import { signalKey, type SignalRead } from './rollout.js';

/**
 * The I/O edge of rollouts: the health signals `rolloutSignalReads` asked for, read from the
 * forge (a few at a time). A signal that cannot be read is missing (the rollout waits) and the run
 * warns; a forge without signals reads none.
 */

const AT_ONCE = 8;

export async function readRolloutSignals(
  forge: Pick<Forge, 'name' | 'commitSignal'>,
  reads: readonly SignalRead[],
): Promise<{ signals: Map<string, CommitSignal>; warnings: string[] }> {
  const signals = new Map<string, CommitSignal>();
  const warnings: string[] = [];
  if (reads.length === 0) return { signals, warnings };
  const read = forge.commitSignal?.bind(forge);
  if (!read) {
    warnings.push(`the ${forge.name} forge reports no health signals: the rollouts that name one wait`);
    return { signals, warnings };
  }
  for (let i = 0; i < reads.length; i += AT_ONCE) {
    await Promise.all(
      reads.slice(i, i + AT_ONCE).map(async (r) => {
        try {
          signals.set(
            signalKey(r.repo, r.commit, r.signal.name),
            await read({ downstream: r.downstream, repo: r.repo }, r.commit, r.signal),
          );
        } catch (error) {
          warnings.push(
            `cannot read the health signal ${r.signal.name} of ${r.downstream} at ${r.commit.slice(0, 12)}: ${message(error)}; the rollout waits`,
          );
        }
      }),
    );
  }
  return { signals, warnings };
}
