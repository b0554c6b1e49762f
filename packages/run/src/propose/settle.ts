import { withoutCredentials } from '@kdelta/git-source';
import type { JobContext } from '../context.js';
import type { Proposal } from '../forges/forge.js';
import { parseMetadataBlock } from './proposal-metadata.js';
import { errorCode, message, proposalRef, type VariantResult } from '../report/result.js';
import { reachedBase } from './protocol.js';
import { baseHistoryIn } from './workspace.js';

/**
 * Open removal proposals (delete or orphan) that were merged. Once merged, the package or its
 * owner is gone from the base branch, so no removal job of a later run meets the proposal again:
 * it is recorded as merged here. They are found before the run's jobs start (so the run's
 * progress counts them in its total) and recorded after them.
 */

/** A merged removal proposal to record (or why it could not be looked at). */
export interface MergedRemoval {
  readonly proposal: Proposal;
  readonly variant: string;
  /** Looking at its base branch failed: reported as the variant's failure. */
  readonly error?: unknown;
}

/**
 * `downstreams` are the repository URLs this run looks at; `handled` holds `<repository> <head>`
 * of the proposals this run's jobs deal with.
 */
export async function findMergedRemovals(
  ctx: JobContext,
  downstreams: ReadonlySet<string>,
  handled: ReadonlySet<string>,
  ours: (variant: string) => boolean,
): Promise<MergedRemoval[]> {
  const out: MergedRemoval[] = [];
  // records name a repository without its credentials; git needs the URL the Repository gives
  const byCleanUrl = new Map([...downstreams].map((url) => [withoutCredentials(url), url]));
  for (const p of await ctx.forge.list()) {
    const repo = byCleanUrl.get(withoutCredentials(p.repo));
    if (p.state !== 'open' || repo === undefined || handled.has(`${p.downstream} ${p.head}`)) continue;
    const meta = parseMetadataBlock(p.body);
    if (!meta || (meta.kind !== 'removal' && meta.kind !== 'orphan') || !ours(meta.variant)) continue;
    try {
      const mirror = await ctx.mirror(repo);
      const baseCommit = mirror.heads.get(p.base);
      // the protocol's one "reached the base": merged or squashed (its branch may be deleted since)
      const merged =
        baseCommit !== undefined &&
        (await reachedBase(baseHistoryIn(mirror.dir, baseCommit), {
          commit: meta.headCommit,
          fingerprint: meta.fingerprint,
          branchGone: !mirror.heads.has(p.head),
          // a removal's package is gone from the base: any commit of it may be the squash
          directory: '',
        }));
      if (merged) out.push({ proposal: p, variant: meta.variant });
    } catch (error) {
      out.push({ proposal: p, variant: meta.variant, error });
    }
  }
  return out;
}

/** Record a merged removal proposal as merged. */
export async function recordMergedRemoval(ctx: JobContext, found: MergedRemoval): Promise<VariantResult> {
  const p = found.proposal;
  const base = { variant: found.variant, downstream: p.downstream, dryRun: ctx.dryRun, conflicts: [], conflictCount: 0 };
  try {
    if (found.error !== undefined) throw found.error;
    const proposal = ctx.dryRun ? p : await ctx.forge.close(p, 'merged');
    return { ...base, action: 'up-to-date', writes: true, proposal: proposalRef(proposal), message: 'the proposal was merged' };
  } catch (error) {
    return { ...base, action: 'failed', writes: false, code: errorCode(error), error: message(error) };
  }
}
