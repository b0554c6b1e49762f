import type { RolloutStatus } from '../policy/policy.js';

/**
 * A rollout as the run reports it: in the JSON report (`RunReport.rollouts`), in the dashboard's
 * hidden data (where `kdelta proposals` reads it back) and as one line of text under the run's
 * table and `kdelta proposals`. The one form of all three: {@link RolloutStatus} with its date as
 * ISO 8601.
 */
export interface RolloutReport {
  readonly policy: string;
  /** The upstream package (`<Repository>/<package>`). */
  readonly upstream: string;
  readonly revision: string;
  readonly commit: string;
  /** Each wave in order: its variants due the revision, and those whose base has it merged. */
  readonly waves: readonly { readonly name: string; readonly variants: number; readonly merged: number }[];
  /** The last wave that has it everywhere (its name; absent: none yet). */
  readonly reached?: string | undefined;
  /** The wave it is proposed to now. */
  readonly proposing?: string | undefined;
  readonly waitingOn: readonly string[];
  readonly soakUntil?: string | undefined;
  readonly halted?: string | undefined;
  readonly advancedTo?: string | undefined;
}

export function rolloutReport(r: RolloutStatus): RolloutReport {
  return {
    policy: r.policy,
    upstream: r.upstream,
    revision: r.revision,
    commit: r.commit,
    waves: r.waves.map((w) => ({ name: w.name, variants: w.variants, merged: w.merged })),
    ...(r.reached >= 0 && r.waves[r.reached] ? { reached: r.waves[r.reached]!.name } : {}),
    ...(r.proposing !== undefined ? { proposing: r.proposing } : {}),
    waitingOn: [...r.waitingOn],
    ...(r.soakUntil ? { soakUntil: r.soakUntil.toISOString() } : {}),
    ...(r.halted !== undefined ? { halted: r.halted } : {}),
    ...(r.advancedTo !== undefined ? { advancedTo: r.advancedTo } : {}),
  };
}

/** Every wave has the revision merged. */
export function rolloutDone(r: RolloutReport): boolean {
  return r.waves.length > 0 && r.reached === r.waves[r.waves.length - 1]!.name;
}

/**
 * One line of text: `rollout of catalog/basens v1.5.0 (policy platform): canary 2/2, prod 0/5
 * merged; reached canary, proposed to prod; the wave after prod waits on: soak until …`. Plain text for a terminal: the
 * Markdown writers escape its parts themselves.
 */
export function rolloutLine(report: RolloutReport): string {
  const r = plainReport(report);
  const waves = r.waves.map((w) => `${w.name} ${w.merged}/${w.variants}`).join(', ');
  // the first wave not done is proposed; the wave after it waits on what is listed
  const at = r.proposing === undefined ? -1 : r.waves.findIndex((w) => w.name === r.proposing);
  const next = at >= 0 ? r.waves[at + 1]?.name : undefined;
  const where = rolloutDone(r)
    ? 'every wave has it'
    : [
        r.reached !== undefined ? `reached ${r.reached}` : 'no wave has it yet',
        ...(r.proposing ? [`proposed to ${r.proposing}`] : []),
      ].join(', ');
  const parts = [`rollout of ${r.upstream} ${r.revision} (policy ${r.policy}): ${waves} merged; ${where}`];
  if (r.halted !== undefined) parts.push(`HALTED: ${r.halted}`);
  if (r.advancedTo !== undefined) parts.push(`advanced by hand to ${r.advancedTo}`);
  if (r.waitingOn.length > 0 && r.halted === undefined) parts.push(`${next ?? 'the rollout'} waits on: ${r.waitingOn.join(', ')}`);
  return parts.join('; ');
}

/** Control characters (a terminal's escapes among them) as spaces: a health signal's description is a stranger's text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function plainReport(r: RolloutReport): RolloutReport {
  const p = (s: string) => s.replace(CONTROL, ' ');
  const o = (s: string | undefined) => (s === undefined ? undefined : p(s));
  return {
    ...r,
    policy: p(r.policy),
    upstream: p(r.upstream),
    revision: p(r.revision),
    waves: r.waves.map((w) => ({ ...w, name: p(w.name) })),
    reached: o(r.reached),
    proposing: o(r.proposing),
    waitingOn: r.waitingOn.map(p),
    halted: o(r.halted),
    advancedTo: o(r.advancedTo),
  };
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * Rollouts read back from a text a person can edit (the dashboard's data block): what is not of
 * the form is left out, never trusted. The strings are shown only as text (escaped where Markdown).
 */
export function readRolloutReports(value: unknown): RolloutReport[] {
  if (!Array.isArray(value)) return [];
  const out: RolloutReport[] = [];
  for (const v of value as Record<string, unknown>[]) {
    if (typeof v !== 'object' || v === null) continue;
    const { policy, upstream, revision, commit, waves, reached, proposing, waitingOn, soakUntil, halted, advancedTo } = v;
    if (!isString(policy) || !isString(upstream) || !isString(revision) || !isString(commit) || !Array.isArray(waves)) continue;
    const ws = (waves as Record<string, unknown>[]).filter(
      (w) => typeof w === 'object' && w !== null && isString(w.name) && isCount(w.variants) && isCount(w.merged),
    ) as { name: string; variants: number; merged: number }[];
    if (ws.length !== waves.length) continue;
    const optional = (k: string, x: unknown) => (isString(x) ? { [k]: x } : {});
    out.push({
      policy,
      upstream,
      revision,
      commit,
      waves: ws.map((w) => ({ name: w.name, variants: w.variants, merged: w.merged })),
      ...optional('reached', reached),
      ...optional('proposing', proposing),
      waitingOn: Array.isArray(waitingOn) ? waitingOn.filter(isString) : [],
      ...optional('soakUntil', soakUntil),
      ...optional('halted', halted),
      ...optional('advancedTo', advancedTo),
    });
  }
  return out;
}
