import { jobKey } from '../dashboard/dashboard.js';
import type { Proposal, ProposalTarget } from '../forges/forge.js';
import { variantTarget } from '../jobs/variant.js';
import { variantLabel, type PlannedJob } from '../plan/jobs-plan.js';
import type { VariantPlan } from '../plan/plan.js';
import { groupOf, groupTarget } from '../policy/group-names.js';
import type { UpdatePolicy, VariantPolicy } from '../policy/policy.js';
import { MAJOR_SUFFIX } from '../policy/variant-pin.js';
import { parseMetadataBlock } from '../propose/proposal-metadata.js';
import { PASS, type Gate, type GateContext, type GateDecision } from './gate.js';
import { governedBy } from './governed.js';

/**
 * A policy's limits (`spec.limits`): at most `openProposals` open proposals of its variants, and at
 * most `perHour` opened in the last hour. Counted on the whole plan (every shard counts alike and
 * gives the room to the same variants), so a sharded fleet keeps the limit as one run would. Only a
 * job that would open a new proposal takes room: one whose variant has an open proposal updates it
 * and always passes. A variant no policy with limits governs costs nothing here (no read).
 */

const HOUR_MS = 60 * 60 * 1000;

/** What the room of one policy is decided from. */
export interface PolicyRoom {
  readonly policy: string;
  readonly limits: UpdatePolicy['limits'];
  /** Open proposals of the policy's variants that stay open (one whose revision the base has already is on its way out). */
  readonly open: number;
  /** When each open proposal of the policy's variants was opened (ISO 8601; undefined: the forge does not say). */
  readonly opened: readonly (string | undefined)[];
  /** The variants that would open a new proposal now, in the order they get the room (retried first, then by name). */
  readonly candidates: readonly string[];
}

/**
 * The pure core: which candidates open a proposal now, and why the others wait. A candidate beyond
 * the open limit waits for merges (no time to look again); one beyond the hourly limit waits until
 * the oldest proposal of the last hour is an hour old.
 */
export function allotRoom(room: PolicyRoom, now: Date): Map<string, GateDecision> {
  const { openProposals, perHour } = room.limits;
  const since = now.getTime() - HOUR_MS;
  const recent = room.opened
    .map((at) => (at === undefined ? Number.NaN : Date.parse(at)))
    .filter((at) => !Number.isNaN(at) && at > since)
    .sort((a, b) => a - b);
  const openRoom = openProposals === undefined ? Infinity : Math.max(0, openProposals - room.open);
  const hourRoom = perHour === undefined ? Infinity : Math.max(0, perHour - recent.length);
  const decisions = new Map<string, GateDecision>();
  const proposals = (n: number | undefined) => `${n} new ${n === 1 ? 'proposal' : 'proposals'}`;
  room.candidates.forEach((name, i) => {
    if (i < openRoom && i < hourRoom) decisions.set(name, PASS);
    else if (i >= openRoom) {
      const given = openRoom > 0 ? `, ${openRoom} more open this run` : '';
      const open = room.open;
      decisions.set(name, {
        pass: false,
        reason: `policy ${room.policy} allows ${openProposals} open ${openProposals === 1 ? 'proposal' : 'proposals'}: ${open} ${open === 1 ? 'is' : 'are'} open${given}`,
      });
    } else {
      const given = hourRoom > 0 ? `, ${hourRoom} more open this run` : '';
      // the next room: when the oldest proposal of the last hour (this run's count, opened now) is an hour old
      const opened = [...recent, ...Array<number>(hourRoom).fill(now.getTime())];
      decisions.set(name, {
        pass: false,
        reason: `policy ${room.policy} allows ${proposals(perHour)} an hour: ${recent.length} new in the last hour${given}`,
        lookAgain: opened.length > 0 ? new Date(opened[0]! + HOUR_MS) : undefined,
      });
    }
  });
  return decisions;
}

function hasLimits(vp: VariantPolicy | undefined): vp is VariantPolicy {
  return vp !== undefined && (vp.policy.limits.openProposals !== undefined || vp.policy.limits.perHour !== undefined);
}

/**
 * One proposal of a policy's variants: a variant's own branch, its separate major release's, or
 * (the policy groups by repository) the group's of its repository, which its members share.
 */
interface Slot {
  /** What the decisions are kept by: the variant's name (`-major` for its major's), or the group's key. */
  readonly key: string;
  readonly target: ProposalTarget;
  readonly members: readonly { readonly v: VariantPlan; readonly vp: VariantPolicy }[];
  readonly major: boolean;
  readonly group: boolean;
}

/** A variant's own decision's key: its name, and whether it is its separate major proposal. */
const keyOf = (variant: string, major: boolean) => (major ? `${variant}${MAJOR_SUFFIX}` : variant);

/** What the policy proposes to a member on the slot now (undefined: nothing). */
const dueOn = (vp: VariantPolicy, major: boolean) => (major ? vp.major : vp.target);

/** A new revision is due on the slot: what the policy proposes to a member is not what its downstream's base has. */
function newRevisionDue(slot: Slot): boolean {
  return slot.members.some(({ vp }) => {
    const due = dueOn(vp, slot.major);
    return due !== undefined && due.commit !== vp.current?.commit;
  });
}

/**
 * The base has the upstream commit the open proposal proposes (as its metadata block says): it was
 * merged, and this run's job closes it, so it takes no room (a forge that closes merged proposals
 * itself, as GitHub does, no longer lists it at all). A group's proposal counts until its job
 * closes it.
 */
function merged(proposal: Proposal, slot: Slot): boolean {
  if (slot.group) return false;
  const proposed = parseMetadataBlock(proposal.body)?.upstream?.commit;
  return proposed !== undefined && proposed === slot.members[0]?.vp.current?.commit;
}

/** Proposals a forge reads at a time (the local forge reads a file each). */
const FIND_BATCH = 32;

async function inBatches<T, R>(items: readonly T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += FIND_BATCH) out.push(...(await Promise.all(items.slice(i, i + FIND_BATCH).map(each))));
  return out;
}

/** The job a member has in this shard (alone or in its group), or the one it would have in another: the gates before this one are asked about it. */
function jobOf(v: VariantPlan, major: boolean, context: GateContext): PlannedJob {
  const jobs = context.jobs.flatMap((j): readonly PlannedJob[] => (j.kind === 'group' ? j.group.members : [j]));
  return (
    jobs.find((j) => j.kind === 'variant' && j.variant === v.name && Boolean(j.major) === major) ?? {
      kind: 'variant',
      variant: v.name,
      downstream: major ? `${variantLabel(v)} (major)` : variantLabel(v),
      plan: v,
      ...(major ? { major } : {}),
    }
  );
}

/** Passes every gate before `self` (a variant they hold takes no room). */
async function passesEarlier(job: PlannedJob, self: Gate, context: GateContext): Promise<boolean> {
  for (const gate of context.gates ?? []) {
    if (gate === self) return true;
    if (!(await gate.decide(job, context)).pass) return false;
  }
  return true;
}

/** The proposals of each policy with limits: its variants', their majors', its groups' (one per repository). */
function slotsByPolicy(context: GateContext): Map<UpdatePolicy, Slot[]> {
  const { plan, policies, settings } = context;
  const byPolicy = new Map<UpdatePolicy, Map<string, Slot>>();
  const add = (policy: UpdatePolicy, slot: Omit<Slot, 'members'>, member: { v: VariantPlan; vp: VariantPolicy }) => {
    const slots = byPolicy.get(policy) ?? new Map<string, Slot>();
    const known = slots.get(slot.key);
    slots.set(slot.key, { ...slot, members: [...(known?.members ?? []), member] });
    byPolicy.set(policy, slots);
  };
  for (const v of plan.variants) {
    const vp = policies.byVariant.get(v.name);
    if (!hasLimits(vp)) continue;
    const own = variantTarget(v, settings.branchPrefix);
    const group = groupOf(v, () => vp.policy);
    if (group)
      add(
        vp.policy,
        {
          key: group.key,
          target: groupTarget({ name: group.name, repository: own.downstream, url: own.repo, base: own.base }, settings.branchPrefix),
          major: false,
          group: true,
        },
        { v, vp },
      );
    else add(vp.policy, { key: keyOf(v.name, false), target: own, major: false, group: false }, { v, vp });
    // a major release is its own proposal, grouped or not; an open one counts whether or not a major is due now
    if (vp.policy.separateMajor)
      add(
        vp.policy,
        { key: keyOf(v.name, true), target: { ...own, head: `${own.head}${MAJOR_SUFFIX}` }, major: true, group: false },
        { v, vp },
      );
  }
  return new Map([...byPolicy].map(([policy, slots]) => [policy, [...slots.values()]]));
}

/** The whole plan's decisions, by variant (`-major` for its major's): the I/O edge (open proposals, the gates before) around allotRoom. */
async function decideFleet(self: Gate, context: GateContext): Promise<Map<string, GateDecision>> {
  const { forge, ticks } = context;
  const decisions = new Map<string, GateDecision>();
  for (const [policy, slots] of slotsByPolicy(context)) {
    // no new revision due anywhere under the policy (a fleet with nothing new): no room to give, nothing to read
    if (!slots.some(newRevisionDue)) continue;
    const open = await inBatches(slots, async (slot) => (forge ? await forge.find(slot.target) : undefined));
    const candidates: { key: string; retried: boolean }[] = [];
    for (const [i, slot] of slots.entries()) {
      if (open[i] !== undefined || !newRevisionDue(slot)) continue;
      // a group proposes the members the gates before let through: it takes room when one of them is
      let passing = false;
      for (const { v } of slot.members) passing ||= await passesEarlier(jobOf(v, slot.major, context), self, context);
      if (!passing) continue;
      const retried = slot.members.some(({ v }) => ticks.retry.has(jobKey(v.name, variantLabel(v))));
      candidates.push({ key: slot.key, retried });
    }
    // stable, alike in every shard: the jobs a person asked to retry first, then by name
    candidates.sort((a, b) => Number(b.retried) - Number(a.retried) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const room = allotRoom(
      {
        policy: policy.name,
        limits: policy.limits,
        // an open proposal whose revision the base has already is merged (this run's job closes it): it takes no room
        open: slots.filter((slot, i) => open[i] !== undefined && !merged(open[i], slot)).length,
        opened: open.filter((p) => p !== undefined).map((p) => p.createdAt),
        candidates: candidates.map((c) => c.key),
      },
      context.now,
    );
    // each member of a slot is decided as its slot is
    for (const slot of slots) {
      const decision = room.get(slot.key);
      if (decision) for (const { v } of slot.members) decisions.set(keyOf(v.name, slot.major), decision);
    }
  }
  return decisions;
}

/** Once per run (per gate context): every job of the run asks the same decisions. */
const decided = new WeakMap<GateContext, Promise<Map<string, GateDecision>>>();

export const limits: Gate = {
  name: 'limits',
  async decide(job, context) {
    // only what a policy with limits governs takes room; an ungoverned variant pays nothing
    const governed = governedBy(job, context.policies).filter((g) => hasLimits(g.policy));
    if (governed.length === 0) return PASS;
    let fleet = decided.get(context);
    if (!fleet) {
      fleet = decideFleet(limits, context);
      decided.set(context, fleet);
    }
    const decisions = await fleet;
    const major = job.kind === 'variant' && job.major === true;
    for (const { variant } of governed) {
      const decision = decisions.get(keyOf(variant, major));
      if (decision && !decision.pass) return decision;
    }
    return PASS;
  },
};
