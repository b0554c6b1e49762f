import type { CommitSignal } from '../forges/forge.js';
import type { VariantPlan } from '../plan/plan.js';
import type { HealthSignal, PolicyRevision, RolloutStatus, VariantPolicy } from './policy.js';

/**
 * Rollout waves, decided on the whole plan (alike in every shard): which governed variants are due
 * an upstream revision, how far that revision went through the policy's waves, and what the next
 * wave waits on. Pure: the health signals are read before (rollout-signals.ts reads the ones
 * `rolloutSignalReads` asks for) and handed in.
 *
 * Wave N+1 is proposed revision R only when wave N has it: every variant of wave N due R merged
 * (its base's lock is at R's commit), the soak time passed since the last of those merges, and,
 * when the policy names a health signal, the signal green on each wave-N downstream's base head.
 * A variant that will never take R (ignored by its team, an update type not allowed for it) has
 * no target R, so it is not waited for; a paused one keeps its target and is waited for.
 */

/** Where a variant's packages are: the plan's view of it, as much as a rollout needs. */
export type RolloutVariant = Pick<VariantPlan, 'name'> & {
  readonly upstream: { readonly repository: { readonly name: string }; readonly package: string };
  readonly downstream: { readonly repository: { readonly name: string }; readonly url: string };
};

/** Rollouts a person halted or advanced on the dashboard (by rollout key, {@link rolloutKey}). */
export interface RolloutHand {
  readonly halted: ReadonlySet<string>;
  /** Advanced up to and including this wave. */
  readonly advanced: ReadonlyMap<string, string>;
}

export const NO_HAND: RolloutHand = { halted: new Set(), advanced: new Map() };

export interface RolloutInput {
  readonly byVariant: ReadonlyMap<string, VariantPolicy>;
  /** The plan's variants (every shard's): where each variant's upstream and downstream are. */
  readonly variants: readonly RolloutVariant[];
  /** The health signals read, by {@link signalKey}; one not read is missing (the rollout waits). */
  readonly signals: ReadonlyMap<string, CommitSignal>;
  readonly hand?: RolloutHand | undefined;
  readonly now: Date;
}

/** A health signal to read: on the head of a wave's downstream base branch. */
export interface SignalRead {
  readonly downstream: string;
  readonly repo: string;
  readonly commit: string;
  readonly signal: HealthSignal;
}

/** The key of a signal read: the downstream repository, the commit and the signal's name. */
export function signalKey(repo: string, commit: string, name: string): string {
  return `${repo}@${commit} ${name}`;
}

/** What a rollout is known by in the dashboard's boxes and data: its policy, upstream package and revision. */
export function rolloutKey(s: Pick<RolloutStatus, 'policy' | 'upstream' | 'revision'>): string {
  return `${s.policy} ${s.upstream} ${s.revision}`;
}

/**
 * Whether `given` (as a person writes it: in a policy's `halted`/`advanced`, on the command line)
 * names the revision: its ref, that ref without the package's tag prefix (`basens/v1.5.0` is
 * `v1.5.0`), or its commit (7 hex digits at least).
 */
export function namesRevision(given: string, s: Pick<RolloutStatus, 'revision' | 'commit'>): boolean {
  if (given === s.revision || s.revision.endsWith(`/${given}`)) return true;
  return /^[0-9a-f]{7,40}$/.test(given) && s.commit.startsWith(given);
}

/** `basens v1.5.0`: the package and the revision, as messages say it. */
export function rolloutLabel(s: Pick<RolloutStatus, 'upstream' | 'revision' | 'commit'>): string {
  const pkg = s.upstream.slice(s.upstream.indexOf('/') + 1);
  const name = pkg.slice(pkg.lastIndexOf('/') + 1);
  const revision = s.revision.startsWith(`${pkg}/`) ? s.revision.slice(pkg.length + 1) : s.revision;
  return `${name} ${/^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 12) : revision}`;
}

/** One variant of a rollout. */
interface Member {
  readonly variant: string;
  readonly downstream: string;
  readonly url: string;
  readonly wave: number;
  readonly merged: boolean;
  readonly mergedAt?: Date | undefined;
  readonly baseCommit?: string | undefined;
  /** Paused by its team: said where the rollout waits on it. */
  readonly paused?: string | undefined;
}

interface Group {
  readonly policy: VariantPolicy['policy'];
  readonly upstream: string;
  readonly revision: PolicyRevision;
  readonly members: Member[];
}

const upstreamOf = (v: RolloutVariant) => `${v.upstream.repository.name}/${v.upstream.package}`;

function pausedOf(vp: VariantPolicy, now: Date): string | undefined {
  const d = vp.downstream;
  if (!d || 'invalid' in d || !d.pause) return undefined;
  if (d.pause.until && d.pause.until <= now) return undefined;
  const until = d.pause.until ? ` until ${d.pause.until.toISOString()}` : '';
  return `paused${until}${d.pause.reason ? `: ${d.pause.reason}` : ''}`;
}

/** The governed variants of a rollout policy grouped by (policy, upstream package, revision): those due it and those that have it. */
function groups(input: Pick<RolloutInput, 'byVariant' | 'variants' | 'now'>): Group[] {
  const where = new Map(input.variants.map((v) => [v.name, v]));
  const byKey = new Map<string, Group>();
  const keyOf = (policy: string, upstream: string, r: PolicyRevision) => `${policy}\0${upstream}\0${r.ref}\0${r.commit}`;
  const member = (name: string, vp: VariantPolicy, v: RolloutVariant, merged: boolean): Member => ({
    variant: name,
    downstream: v.downstream.repository.name,
    url: v.downstream.url,
    wave: vp.wave!.index,
    merged,
    mergedAt: merged ? vp.current?.mergedAt : undefined,
    baseCommit: vp.current?.baseCommit,
    paused: merged ? undefined : pausedOf(vp, input.now),
  });
  const governed: { name: string; vp: VariantPolicy; v: RolloutVariant }[] = [];
  for (const [name, vp] of input.byVariant) {
    const v = where.get(name);
    if (!vp.policy.rollout || !vp.wave || !v) continue;
    governed.push({ name, vp, v });
    for (const r of [vp.target, vp.major]) {
      if (!r) continue;
      const key = keyOf(vp.policy.name, upstreamOf(v), r);
      let g = byKey.get(key);
      if (!g) byKey.set(key, (g = { policy: vp.policy, upstream: upstreamOf(v), revision: r, members: [] }));
      g.members.push(member(name, vp, v, false));
    }
  }
  // the variants whose base already has a revision being rolled out count as merged in its wave
  for (const g of byKey.values()) {
    for (const { name, vp, v } of governed) {
      if (vp.policy.name !== g.policy.name || upstreamOf(v) !== g.upstream || vp.current?.commit !== g.revision.commit) continue;
      if (!g.members.some((m) => m.variant === name)) g.members.push(member(name, vp, v, true));
    }
  }
  return [...byKey.values()].sort((a, b) => (rolloutKey(statusId(a)) < rolloutKey(statusId(b)) ? -1 : 1));
}

const statusId = (g: Group) => ({ policy: g.policy.name, upstream: g.upstream, revision: g.revision.ref });

/** A wave's downstreams whose health is read: one per repository and base head, in order of names. */
function healthOf(members: readonly Member[]): { downstream: string; url: string; commit: string }[] {
  const seen = new Map<string, { downstream: string; url: string; commit: string }>();
  for (const m of members) {
    if (m.baseCommit === undefined) continue;
    const key = `${m.url}@${m.baseCommit}`;
    if (!seen.has(key)) seen.set(key, { downstream: m.downstream, url: m.url, commit: m.baseCommit });
  }
  return [...seen.values()].sort((a, b) => (a.downstream < b.downstream ? -1 : a.downstream > b.downstream ? 1 : 0));
}

/** The last merge of a wave and when its soak ends (undefined: no soak, or no merge time known). */
function soakEnd(members: readonly Member[], soakMs: number): Date | undefined {
  if (soakMs <= 0) return undefined;
  const last = Math.max(...members.map((m) => m.mergedAt?.getTime() ?? Number.NEGATIVE_INFINITY));
  return Number.isFinite(last) ? new Date(last + soakMs) : undefined;
}

/** What a wave is at: merges missing, soaking, signals to read, done. */
type WaveState =
  | { readonly kind: 'merging'; readonly open: readonly Member[] }
  | { readonly kind: 'soaking'; readonly until: Date }
  | { readonly kind: 'signals'; readonly reads: readonly { downstream: string; url: string; commit: string }[] }
  | { readonly kind: 'done' };

function waveState(members: readonly Member[], soakMs: number, health: HealthSignal | undefined, now: Date): WaveState {
  const open = members.filter((m) => !m.merged);
  if (open.length > 0) return { kind: 'merging', open };
  const until = soakEnd(members, soakMs);
  if (until && until > now) return { kind: 'soaking', until };
  if (health && members.length > 0) return { kind: 'signals', reads: healthOf(members) };
  return { kind: 'done' };
}

/**
 * The health signals the rollouts need read: those of the wave each rollout stands at and the
 * waves before it, once all their variants merged and soaked. None when no policy names a signal.
 */
export function rolloutSignalReads(input: Pick<RolloutInput, 'byVariant' | 'variants' | 'now'>): SignalRead[] {
  const reads = new Map<string, SignalRead>();
  for (const g of groups(input)) {
    const rollout = g.policy.rollout!;
    if (!rollout.health) continue;
    for (let i = 0; i < rollout.waves.length; i++) {
      const state = waveState(
        g.members.filter((m) => m.wave === i),
        rollout.soakMs,
        rollout.health,
        input.now,
      );
      if (state.kind === 'merging' || state.kind === 'soaking') break;
      if (state.kind === 'signals') {
        for (const r of state.reads)
          reads.set(signalKey(r.url, r.commit, rollout.health.name), {
            downstream: r.downstream,
            repo: r.url,
            commit: r.commit,
            signal: rollout.health,
          });
      }
    }
  }
  return [...reads.values()];
}

/** A signal's description and address are a stranger's text: at most this many characters of it are said. */
const SIGNAL_TEXT = 200;

/**
 * A stranger's text as one bounded line: control characters (a line break, a terminal's escape)
 * as spaces, so that every place a rollout is said (the table, the report, the dashboard) gets a
 * line it can show as it is.
 */
function signalText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ').trim();
  return line.length > SIGNAL_TEXT ? `${line.slice(0, SIGNAL_TEXT - 1)}…` : line;
}

/** The words for a signal: a check run, or a commit status (GitHub's `any` is said as a status). */
function signalWords(signal: HealthSignal): string {
  return `${signal.kind === 'check-run' ? 'check run' : 'status'} ${signal.name}`;
}

/** What the next wave waits on, at most this many items (the rest counted). */
const WAITING_ITEMS = 10;

function waiting(items: readonly string[]): string[] {
  return items.length <= WAITING_ITEMS ? [...items] : [...items.slice(0, WAITING_ITEMS), `…and ${items.length - WAITING_ITEMS} more`];
}

/** Every rollout of the plan: per (policy, upstream package, revision) its waves, how far it reached and what it waits on. */
export function rolloutStatuses(input: RolloutInput): RolloutStatus[] {
  const hand = input.hand ?? { halted: new Set<string>(), advanced: new Map<string, string>() };
  return groups(input).map((g) => {
    const rollout = g.policy.rollout!;
    const id = { ...statusId(g), commit: g.revision.commit };
    const key = rolloutKey(id);
    const byWave = rollout.waves.map((_, i) => g.members.filter((m) => m.wave === i));
    const waves = rollout.waves.map((name, i) => ({
      name,
      variants: byWave[i]!.length,
      merged: byWave[i]!.filter((m) => m.merged).length,
    }));
    let reached = -1;
    while (reached + 1 < waves.length && waves[reached + 1]!.merged === waves[reached + 1]!.variants) reached++;

    // the first wave not done: what the next one waits on, or why the rollout halted there
    let at = rollout.waves.length;
    let waitingOn: string[] = [];
    let soakUntil: Date | undefined;
    let failed: string | undefined;
    for (let i = 0; i < rollout.waves.length; i++) {
      const state = waveState(byWave[i]!, rollout.soakMs, rollout.health, input.now);
      if (state.kind === 'done') continue;
      if (state.kind === 'merging') {
        waitingOn = waiting(state.open.map((m) => `merge of ${m.variant} in ${m.downstream}${m.paused ? ` (${m.paused})` : ''}`));
      } else if (state.kind === 'soaking') {
        soakUntil = state.until;
        waitingOn = [`soak until ${state.until.toISOString()}`];
      } else {
        const health = rollout.health!;
        const seen = state.reads.map((r) => ({
          ...r,
          got: input.signals.get(signalKey(r.url, r.commit, health.name)) ?? { state: 'missing' as const },
        }));
        const bad = seen.find((s) => s.got.state === 'failure');
        if (bad) {
          const detail = [signalText(bad.got.description), signalText(bad.got.url)].filter((x) => x !== undefined && x !== '').join(' ');
          failed = `${signalWords(health)} failed on ${bad.downstream} (${rollout.waves[i]})${detail ? `: ${detail}` : ''}`;
        }
        const pending = seen.filter((s) => s.got.state !== 'success');
        if (!bad && pending.length === 0) continue;
        waitingOn = waiting(
          pending.filter((s) => s.got.state !== 'failure').map((s) => `${signalWords(health)} on ${s.downstream} (${s.got.state})`),
        );
      }
      at = i;
      break;
    }

    const byPolicy = rollout.halted.find((h) => namesRevision(h.revision, id));
    const halted = byPolicy
      ? `by hand (policy ${g.policy.name}): ${byPolicy.reason}`
      : hand.halted.has(key)
        ? 'by hand on the dashboard'
        : failed;
    // advanced by hand: the later of the policy's and the dashboard's
    const advances = [
      ...rollout.advanced.filter((a) => namesRevision(a.revision, id)).map((a) => a.wave),
      ...(hand.advanced.has(key) ? [hand.advanced.get(key)!] : []),
    ]
      .map((w) => rollout.waves.indexOf(w))
      .filter((i) => i >= 0);
    const advancedTo = advances.length > 0 ? rollout.waves[Math.max(...advances)] : undefined;
    return {
      ...id,
      waves,
      reached,
      proposing: rollout.waves[at],
      waitingOn,
      ...(soakUntil ? { soakUntil } : {}),
      ...(halted ? { halted } : {}),
      ...(advancedTo ? { advancedTo } : {}),
    };
  });
}

export type WaveDecision =
  | { readonly pass: true }
  | { readonly pass: false; readonly reason: string; readonly lookAgain?: Date | undefined };

/**
 * Whether a governed variant may be proposed `revision` now: its wave is the one the rollout is
 * proposed to, or an earlier one, or one a person advanced it to; never while the rollout is halted.
 */
export function waveAllows(input: {
  readonly policy: VariantPolicy;
  /** The variant's upstream package (`<Repository>/<package>`). */
  readonly upstream: string;
  readonly revision: PolicyRevision;
  readonly rollouts: readonly RolloutStatus[];
}): WaveDecision {
  const { policy, revision } = input;
  const wave = policy.wave;
  if (!policy.policy.rollout || !wave) return { pass: true };
  const s = input.rollouts.find(
    (r) => r.policy === policy.policy.name && r.upstream === input.upstream && r.revision === revision.ref && r.commit === revision.commit,
  );
  if (!s) return { pass: true };
  const what = `rollout of ${rolloutLabel(s)} (policy ${s.policy})`;
  if (s.halted !== undefined) return { pass: false, reason: `${what}: halted: ${s.halted}` };
  const names = s.waves.map((w) => w.name);
  const proposing = s.proposing === undefined ? names.length : names.indexOf(s.proposing);
  const advanced = s.advancedTo === undefined ? -1 : names.indexOf(s.advancedTo);
  if (wave.index <= Math.max(proposing, advanced)) return { pass: true };
  const at = s.waves[proposing]!;
  if (s.soakUntil)
    return { pass: false, reason: `${what}: wave ${at.name} merged; soak until ${s.soakUntil.toISOString()}`, lookAgain: s.soakUntil };
  const progress = at.merged < at.variants ? `wave ${at.name} has ${at.merged} of ${at.variants} merged` : `wave ${at.name} merged`;
  return { pass: false, reason: `${what}: ${progress} (waits on ${s.waitingOn.join(', ')})` };
}
