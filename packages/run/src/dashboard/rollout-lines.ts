import { inert, shortName } from '../markdown.js';
import { rolloutDone, type RolloutReport } from '../report/rollouts.js';

/** Untrusted text (a revision, a signal's description) as inline code, long names shortened. */
function code(text: string): string {
  return inert(shortName(text), 'code');
}

/** Waiting reasons a rollout lists (the rest counted). */
const MAX_WAITING = 10;

/**
 * One rollout's lines: which revision of which package, how far its waves are, what the next wave
 * waits on, halted or advanced by hand. Every part is shown as code: a revision is an upstream's
 * tag, a reason may quote a downstream's health signal.
 */
export function rolloutLines(r: RolloutReport): string[] {
  const where = rolloutDone(r)
    ? 'every wave has it'
    : `${r.reached !== undefined ? `reached wave ${code(r.reached)}` : 'no wave has it yet'}${r.proposing !== undefined ? `, proposed to ${code(r.proposing)}` : ''}`;
  const lines = [
    `- ${code(r.upstream)} ${code(r.revision)} (policy ${code(r.policy)}, commit ${code(r.commit.slice(0, 12))}): ${where}`,
    `  - waves: ${r.waves.map((w) => `${code(w.name)} ${w.merged}/${w.variants} merged`).join(' · ')}`,
  ];
  if (r.halted !== undefined) lines.push(`  - **halted**: ${code(r.halted)}`);
  if (r.advancedTo !== undefined) lines.push(`  - advanced by hand to ${code(r.advancedTo)}`);
  if (r.waitingOn.length > 0 && r.halted === undefined) {
    const more = r.waitingOn.length - MAX_WAITING;
    lines.push(`  - waits on: ${r.waitingOn.slice(0, MAX_WAITING).map(code).join(', ')}${more > 0 ? `, …and ${more} more` : ''}`);
  }
  return lines;
}
