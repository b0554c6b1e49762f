import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import type { Change, Prepared } from './change.js';
import type { JobContext } from '../context.js';
import { STOP_LABEL, type ProposalTarget } from '../forges/forge.js';
import { inert } from '../markdown.js';
import { hashOf, withRepositoryOf } from '../plan/plan.js';
import { groupTarget } from '../policy/group-names.js';
import type { ProposalGroup, VariantJob } from '../policy/groups.js';
import { groupMemberSection, withSupersededNote } from '../propose/group-body.js';
import { parseMetadataBlock, type GroupRecord } from '../propose/proposal-metadata.js';
import { propose } from '../propose/propose.js';
import { costOf, reserve } from '../propose/reserve.js';
import { errorCode, failure, message, type JobOutcome, type VariantResult } from '../report/result.js';
import { resolvedVariantChange, variantTarget } from './variant.js';

/**
 * A group's change (policy/groups.ts): the packages of several variants of one downstream
 * repository in one proposal, through the one propose protocol. Its prepare runs each member's
 * own prepare in the same workspace (each writes its own directory); a member that cannot be
 * built is left out, and its body says so. Its conflicts, failed renders and readiness gates are
 * the union of its members' (the review gate decides on them: one member's conflict makes the
 * whole proposal not ready, never auto-merged), and it carries no commit kdelta did not make: a
 * branch with one is left alone. Each member still ends as its own result, naming the proposal.
 */

type Left = GroupRecord['left'][number];

interface Member {
  readonly job: VariantJob;
  readonly change: Change;
}

/** What the group's prepare found, for the members' results. */
interface Built {
  ran: boolean;
  readonly prepared: Map<string, Prepared>;
  readonly left: Left[];
}

/** Run a group to one result per member. Never throws: a failure is each member's result. */
export async function runGroupJob(group: ProposalGroup, ctx: JobContext): Promise<VariantResult[]> {
  const early = new Map<string, JobOutcome>();
  const members: Member[] = [];
  for (const job of group.members) {
    try {
      // as its update policy chose for it (the same revision its own proposal would have)
      const change = await resolvedVariantChange(job.plan, ctx, job);
      if ('done' in change) early.set(job.variant, change.done);
      else members.push({ job, change });
    } catch (error) {
      early.set(job.variant, failure(errorCode(error), withRepositoryOf(job.plan, error, message(error))));
    }
  }
  const idOf = (job: VariantJob) => ({
    variant: job.variant,
    downstream: job.downstream,
    dryRun: ctx.dryRun,
    conflicts: [],
    conflictCount: 0,
  });
  // no member has anything to propose now: the group's proposal, if any, is left as it is
  if (members.length === 0) return group.members.map((job) => ({ ...idOf(job), ...early.get(job.variant)! }));
  // the body says who is left out, whether before the checkout (its upstream) or in it
  const built: Built = {
    ran: false,
    prepared: new Map(),
    left: [...early].flatMap(([variant, o]) =>
      o.action !== 'failed'
        ? []
        : [
            {
              variant,
              action: 'failed' as const,
              ...(o.code !== undefined ? { code: o.code } : {}),
              message: recorded(o.error ?? o.message ?? o.action),
            },
          ],
    ),
  };
  const change = groupChange(group, members, ctx, built);
  let outcome: JobOutcome;
  try {
    outcome = await propose(ctx, change);
  } catch (error) {
    outcome = failure(errorCode(error), message(error));
  }
  // nothing was prepared (a run with nothing new): who was left out is what the proposal recorded
  const left = new Map((built.ran ? built.left : await recordedLeft(ctx, change.target, outcome)).map((l) => [l.variant, l]));
  const included = members.filter((m) => !left.has(m.job.variant));
  const superseded = await supersede(ctx, included, outcome);
  return group.members.map((job) => {
    const id = idOf(job);
    const before = early.get(job.variant);
    if (before) return { ...id, ...before };
    const out = left.get(job.variant);
    if (out) return { ...id, ...leftOutcome(out) };
    const member = members.find((m) => m.job.variant === job.variant)!;
    const prepared = built.prepared.get(job.variant);
    const { renderFailure, changes, resources, message: groupMessage, ...shared } = outcome;
    const said = [groupMessage, superseded.get(job.variant)].filter((m) => m !== undefined);
    const directory = member.change.directory;
    return {
      ...id,
      ...shared,
      ...(said.length > 0 ? { message: said.join('; ') } : {}),
      upstream: member.change.upstream,
      // the proposal's conflicts: the review gate decides on all of them
      conflictCount: outcome.conflictCount ?? 0,
      conflicts: prepared ? lifted(prepared.conflicts, directory) : [],
      ...(renderFailure && prepared?.renderFailure ? { renderFailure: prepared.renderFailure } : {}),
      ...(changes ? { changes: changes.filter((c) => inDirectory(c.path, directory)) } : {}),
      ...(resources && prepared ? { resources: liftedResources(prepared.resources, directory) } : {}),
    };
  });
}

function groupChange(group: ProposalGroup, members: readonly Member[], ctx: JobContext, built: Built): Change {
  const target = groupTarget(group, ctx.branchPrefix);
  return {
    target,
    // what the members' proposals would be computed from, together
    fingerprint: hashOf({ group: group.name, members: members.map((m) => [m.job.variant, m.change.fingerprint]) }),
    kind: 'group',
    variant: group.name,
    // the members' directories: conflicts and files are named from the repository's root
    directory: '',
    opened: 'proposed',
    updated: 'updated',
    // the policy asks for auto-merge only when it does for every package (the review gate still decides on the content)
    ...groupAutoMerge(members),
    scratchName: group.name,
    async prepare(ws) {
      built.ran = true;
      for (const { job, change } of members) {
        const base = await ws.readPackage(change.directory);
        let made: Awaited<ReturnType<Change['prepare']>>;
        try {
          made = await change.prepare(ws);
        } catch (error) {
          // whatever the member wrote is undone: the proposal holds its package as the base has it
          if (base) await ws.writePackage(change.directory, base);
          else await ws.removePackage(change.directory);
          built.left.push({
            variant: job.variant,
            action: 'failed',
            code: errorCode(error),
            message: recorded(withRepositoryOf(job.plan, error, message(error))),
          });
          continue;
        }
        if ('done' in made) {
          const { action, code, error, message: why } = made.done;
          built.left.push({
            variant: job.variant,
            action: action === 'failed' ? 'failed' : 'not-adopted',
            ...(code !== undefined ? { code } : {}),
            message: recorded(error ?? why ?? action),
          });
          continue;
        }
        built.prepared.set(job.variant, made);
      }
      return groupPrepared(group, members, built);
    },
  };
}

/** The members' prepared packages as one proposal's: its title, its sections, the union of what decides its review. */
function groupPrepared(group: ProposalGroup, members: readonly Member[], built: Built): Prepared {
  const parts = members.flatMap((m) => {
    const p = built.prepared.get(m.job.variant);
    return p ? [{ m, p, pkg: m.job.plan.downstream.package, directory: m.change.directory }] : [];
  });
  const refs = [...new Set(parts.map(({ m }) => m.change.upstream?.ref ?? ''))];
  const title =
    parts.length === 0
      ? `kdelta: ${group.name}: nothing to propose`
      : refs.length === 1
        ? `kdelta: ${group.name}: update ${parts.map((x) => x.pkg).join(', ')} to ${refs[0]}`
        : `kdelta: ${group.name}: update ${parts.map((x) => `${x.pkg} to ${x.m.change.upstream?.ref ?? ''}`).join(', ')}`;
  const intro = `Proposes ${parts.length} package(s) of Repository ${code(group.repository)} together, as UpdatePolicy ${code(group.policy)} asks (\`group: repository\`): ${parts.map((x) => code(x.directory)).join(', ') || 'none'}. Each package's section says what changes in it; the conflicts of all of them are in one table, their files named from the repository's root. The proposal is ready only when every package in it is.`;
  const leftOut =
    built.left.length === 0
      ? []
      : [
          '### Left out of this proposal',
          '',
          ...built.left.map((l) => `- variant ${code(l.variant)}: ${l.action}${l.code ? ` (${code(l.code)})` : ''}: ${inert(l.message)}`),
          '',
        ];
  const sections = parts.flatMap(({ m, p, directory }) =>
    groupMemberSection({
      variant: m.job.variant,
      directory,
      upstream: p.upstream,
      title: p.title,
      summary: p.summary,
      conflicts: p.conflicts.length,
      renderFailure: p.renderFailure,
      notReady: p.notReady,
      compareUrl: p.compareUrl,
      upstreamChanges: p.upstreamChanges,
    }),
  );
  const notReady = parts.flatMap(({ p, directory }) =>
    (p.notReady ?? []).map((g) => ({ ...g, message: `${directory}: ${g.message ?? g.type}` })),
  );
  const renderFailure = parts.find(({ p }) => p.renderFailure)?.p.renderFailure;
  return {
    title,
    summary: [intro, '', ...leftOut, ...sections].join('\n').trimEnd(),
    commitDetail: parts
      .map(({ p }) => p.commitDetail ?? '')
      .filter((d) => d !== '')
      .join('\n'),
    conflicts: parts.flatMap(({ p, directory }) => lifted(p.conflicts, directory)),
    resources: parts.flatMap(({ p, directory }) => liftedResources(p.resources, directory)),
    ...(renderFailure ? { renderFailure } : {}),
    ...(notReady.length > 0 ? { notReady } : {}),
    ...(parts.length > 0 && parts.every(({ p }) => p.lockOnly) ? { lockOnly: true } : {}),
    group: { members: parts.map(({ m }) => m.job.variant), left: built.left },
  };
}

/** A member's conflicts with their files named from the repository's root (the group proposal's directory). */
function lifted(conflicts: readonly Conflict[], directory: string): Conflict[] {
  return conflicts.map((c) => ({ ...c, file: rooted(c.file, directory) }));
}

function liftedResources(resources: readonly ResourceReport[], directory: string): ResourceReport[] {
  return resources.map((r) => ({ ...r, file: rooted(r.file, directory) }));
}

const rooted = (file: string, directory: string) => (directory === '' ? file : `${directory}/${file}`);

function inDirectory(path: string, directory: string): boolean {
  return directory === '' || path === directory || path.startsWith(`${directory}/`);
}

/** An update policy's word on auto-merge for the group: yes when it says yes for every member, no when it says no for one. */
function groupAutoMerge(members: readonly Member[]): { readonly autoMerge?: boolean } {
  const said = members.map((m) => m.change.autoMerge);
  if (said.some((a) => a === false)) return { autoMerge: false };
  return said.length > 0 && said.every((a) => a === true) ? { autoMerge: true } : {};
}

/** A member left out, as its result. */
function leftOutcome(l: Left): JobOutcome {
  const said = `left out of its group's proposal: ${l.message}`;
  return l.action === 'failed' ? failure(l.code ?? 'failed', l.message) : { action: 'not-adopted', writes: false, message: said };
}

/** The members the open proposal says were left out when it was built (read when this run built nothing). */
async function recordedLeft(ctx: JobContext, target: ProposalTarget, outcome: JobOutcome): Promise<readonly Left[]> {
  if (outcome.action !== 'unchanged' || !outcome.proposal) return [];
  // the forge's open proposals of the repository were just read: no new request
  const open = await ctx.forge.find(target);
  const left: unknown = open ? parseMetadataBlock(open.body)?.group?.left : undefined;
  return Array.isArray(left) ? left.filter(isLeft) : [];
}

/** A member's failure as the proposal records it (bounded: a run with nothing new reports the same words). */
const recorded = (text: string): string => (text.length > 2000 ? `${text.slice(0, 1997)}...` : text);

/** An entry of a body's record of members left out, as kdelta writes it (a body is anyone's to edit: anything else is ignored). */
function isLeft(value: unknown): value is Left {
  const l = value as Partial<Record<keyof Left, unknown>> | null;
  return (
    typeof l?.variant === 'string' &&
    (l.action === 'failed' || l.action === 'not-adopted') &&
    (l.code === undefined || (typeof l.code === 'string' && /^[a-z0-9-]{1,64}$/.test(l.code))) &&
    typeof l.message === 'string' &&
    l.message.length <= 4096
  );
}

/**
 * The members' own open proposals (`<prefix><variant>`), once the group's proposal holds their
 * packages: closed as superseded, saying by which. Their branches are left as they are (a
 * person's commits on one stay there). Returns what each member's result says of it.
 */
async function supersede(ctx: JobContext, members: readonly Member[], outcome: JobOutcome): Promise<Map<string, string>> {
  const said = new Map<string, string>();
  const group = outcome.proposal;
  if (ctx.dryRun || !group || group.state !== 'open') return said;
  if (!['proposed', 'updated', 'unchanged'].includes(outcome.action)) return said;
  for (const { job } of members) {
    const single = await ctx.forge.find(variantTarget(job.plan, ctx.branchPrefix));
    if (single?.state !== 'open' || single.labels?.includes(STOP_LABEL)) continue;
    const meta = parseMetadataBlock(single.body);
    // only kdelta's own proposal of this variant
    if (meta?.kind !== 'variant' || meta.variant !== job.variant) continue;
    const release = reserve(ctx, costOf(ctx, { kind: 'close' }));
    if (!release) continue; // the next run closes it
    try {
      await ctx.forge.close({ ...single, body: withSupersededNote(single.body, group.url) }, 'closed');
      said.set(job.variant, `its own proposal ${single.url} was closed: superseded by the group's proposal ${group.url}`);
    } catch (error) {
      said.set(job.variant, `its own proposal ${single.url} could not be closed as superseded: ${message(error)}`);
    } finally {
      release();
    }
  }
  return said;
}

const code = (text: string): string => inert(text, 'code');
