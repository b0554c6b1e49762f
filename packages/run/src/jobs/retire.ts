import type { Change } from './change.js';
import type { JobContext } from '../context.js';
import type { Proposal, ProposalTarget } from '../forges/forge.js';
import { hashOf } from '../plan/plan.js';
import { parseMetadataBlock } from '../propose/proposal-metadata.js';
import { propose } from '../propose/propose.js';
import { runJob, type VariantResult } from '../report/result.js';
import type { Mirror } from '../propose/workspace.js';
import { findRemovals } from './removal.js';
import { inert } from '../markdown.js';

/**
 * Open proposals of variants that are gone, never merged: nothing of the variant is on the base
 * branch, so no removal is due, and the proposal is closed with its branch deleted (Porch deletes
 * a draft of a deleted PackageVariant whatever its deletion policy).
 */

export interface RetiredDraft {
  readonly variant: string;
  /** The Repository's name. */
  readonly repository: string;
  readonly url: string;
  readonly target: ProposalTarget;
  /** The package directory the proposal writes ('' for a group's, which writes its members'). */
  readonly directory: string;
  /** A group's proposal (policy/groups.ts), `variant` its name. */
  readonly group?: true | undefined;
}

/**
 * The proposal branches (`<prefix><variant>`) of a mirrored downstream whose variant is not among
 * `variants` and whose open proposal proposes that variant's package. Ours: the package on the
 * branch is owned by the variant and was written by this control repository (or recorded none),
 * and the forge has its proposal open (on GitHub, a pull request of this run's prefix).
 */
export async function findRetiredDrafts(
  ctx: Pick<JobContext, 'forge' | 'branchPrefix'>,
  mirror: Mirror,
  downstream: { repository: string; url: string; branch: string; directory: string },
  variants: ReadonlySet<string>,
  control?: string,
  /** The groups (policy/groups.ts) proposing in this repository now: their branches are current. */
  groups: ReadonlySet<string> = new Set(),
): Promise<RetiredDraft[]> {
  const out: RetiredDraft[] = [];
  for (const head of mirror.heads.keys()) {
    if (!head.startsWith(ctx.branchPrefix) || head === downstream.branch) continue;
    const variant = head.slice(ctx.branchPrefix.length);
    if (variants.has(variant) || groups.has(variant)) continue;
    const owned = (await findRemovals(mirror, { ...downstream, branch: head }, variants, control)).find((p) => p.variant === variant);
    const target: ProposalTarget = { downstream: downstream.repository, repo: downstream.url, head, base: downstream.branch };
    if (!owned) {
      // a group that no longer proposes here (its policy no longer groups, or governs none of its
      // packages): its members have their own proposals now, so the group's is closed
      const open = await ctx.forge.find(target);
      const meta = open ? parseMetadataBlock(open.body) : undefined;
      if (meta?.kind === 'group' && meta.variant === variant)
        out.push({ variant, repository: downstream.repository, url: downstream.url, target, directory: '', group: true });
      continue;
    }
    const open: Proposal | undefined = await ctx.forge.find(target);
    if (!open || parseMetadataBlock(open.body)?.kind !== 'variant') continue;
    out.push({ variant, repository: downstream.repository, url: downstream.url, target, directory: owned.directory });
  }
  return out;
}

/** `<Repository>/<package>` of a retired draft. */
export function retiredLabel(draft: RetiredDraft): string {
  if (draft.group) return `${draft.repository}/${draft.variant}`;
  return `${draft.repository}/${draft.directory.split('/').pop() ?? ''}`;
}

/** Close a gone variant's unmerged proposal and delete its branch (through `propose`: a human's commits keep it). Never throws. */
export function runRetireJob(draft: RetiredDraft, ctx: JobContext): Promise<VariantResult> {
  const id = { variant: draft.variant, downstream: retiredLabel(draft), dryRun: ctx.dryRun };
  return runJob(id, () => propose(ctx, retireChange(draft, ctx)));
}

function retireChange(draft: RetiredDraft, ctx: JobContext): Change {
  const { variant, directory } = draft;
  return {
    target: draft.target,
    // never the open proposal's: its fast no-op must not keep it
    fingerprint: hashOf({ retire: variant, directory, version: ctx.version }).slice(0, 32),
    kind: draft.group ? 'group' : 'variant',
    variant,
    directory,
    opened: 'closed',
    updated: 'closed',
    scratchName: `retire-${variant}`,
    // the base branch as it is: nothing to propose, so the open proposal is closed
    prepare: async () =>
      draft.group
        ? {
            title: `kdelta: ${variant} no longer proposes here`,
            summary: `No update policy groups packages of this repository as ${inertCode(variant)} any more.`,
            conflicts: [],
            resources: [],
            closeReason: `${variant} no longer groups packages of ${draft.repository} (its policy changed, or governs none of them) and its proposal was never merged: closed, branch ${draft.target.head} deleted; its packages are proposed on their own`,
          }
        : {
            title: `kdelta: variant ${variant} is gone`,
            summary: `PackageVariant ${inertCode(variant)} is no longer in the control resources.`,
            conflicts: [],
            resources: [],
            closeReason: `PackageVariant "${variant}" is gone and its proposal was never merged: closed, branch ${draft.target.head} deleted`,
          },
  };
}

/** Text from the package or a downstream as inline code in a proposal's summary. */
const inertCode = (text: string): string => inert(text, 'code');
