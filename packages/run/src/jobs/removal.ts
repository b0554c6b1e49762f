import { deleteOrOrphan, OWNER_ANNOTATION } from '@kdelta/variant-engine';
import type { Change } from './change.js';
import type { JobContext } from '../context.js';
import type { ProposalTarget } from '../forges/forge.js';
import { DELETION_POLICY_ANNOTATION, kptfileAnnotations, setKptfileAnnotations } from './kptfile-annotations.js';
import { CONTROL_ANNOTATION } from '../control/ownership.js';
import { hashOf } from '../plan/plan.js';
import { propose } from '../propose/propose.js';
import { runJob, type VariantResult } from '../report/result.js';
import { kptfilesOn, showFile, type Mirror } from '../propose/workspace.js';
import { RunError } from '../errors.js';
import { describeLocalEdits, findLocalEdits } from '../propose/local-edits.js';
import { COMMIT_TRAILER } from '../propose/propose.js';
import { inert } from '../markdown.js';
import { parseMetadataBlock } from '../propose/proposal-metadata.js';

/** Variants that are gone: a proposal removing their package (delete) or their ownership (orphan). */

/** A package on a downstream's base branch owned by a variant no longer in the control resources. */
export interface Removal {
  readonly variant: string;
  readonly repository: string;
  readonly url: string;
  readonly branch: string;
  /** The package directory in the downstream repository. */
  readonly directory: string;
  readonly policy: 'delete' | 'orphan';
}

/**
 * Every owned package of a mirrored downstream whose owner is not among `variants`, leaving out
 * the packages another control repository than `control` recorded as its own.
 */
export async function findRemovals(
  mirror: Mirror,
  downstream: { repository: string; url: string; branch: string; directory: string },
  variants: ReadonlySet<string>,
  control?: string,
): Promise<Removal[]> {
  if (!mirror.heads.has(downstream.branch)) return [];
  const out: Removal[] = [];
  for (const path of await kptfilesOn(mirror, downstream.branch, downstream.directory)) {
    const text = await showFile(mirror, downstream.branch, path);
    let annotations: Record<string, string>;
    try {
      annotations = kptfileAnnotations(text);
    } catch {
      continue; // not ours to judge: an unreadable Kptfile is no variant's package
    }
    const owner = annotations[OWNER_ANNOTATION];
    if (!owner || variants.has(owner)) continue;
    const writer = annotations[CONTROL_ANNOTATION];
    if (writer !== undefined && writer !== control) continue; // another control repository's variant
    out.push({
      variant: owner,
      repository: downstream.repository,
      url: downstream.url,
      branch: downstream.branch,
      directory: path === 'Kptfile' ? '' : path.slice(0, -'/Kptfile'.length),
      policy: removalPolicy(owner, annotations[DELETION_POLICY_ANNOTATION]),
    });
  }
  return out;
}

/**
 * What becomes of a gone variant's package, as variant-engine's `deleteOrOrphan` decides it for
 * a published copy (the package on the base branch): its removal proposed, or its ownership
 * dropped. The policy is the one the variant recorded; a package that recorded none (or one kdelta
 * does not know) is proposed for removal, Porch's default.
 */
function removalPolicy(owner: string, recorded: string | undefined): Removal['policy'] {
  const copy = { repo: '', package: '', lifecycle: 'Published', owners: [owner] };
  const decided = deleteOrOrphan(copy, { metadata: { name: owner }, spec: { deletionPolicy: recorded ?? 'delete' } });
  return decided?.op === 'orphan' ? 'orphan' : 'delete';
}

export function removalTarget(removal: Removal, branchPrefix: string): ProposalTarget {
  return { downstream: removal.repository, repo: removal.url, head: `${branchPrefix}${removal.variant}`, base: removal.branch };
}

/** `<Repository>/<package>` of a removal. */
export function removalLabel(removal: Removal): string {
  return `${removal.repository}/${removal.directory.split('/').pop() ?? ''}`;
}

/** Propose removing a gone variant's package (delete) or its ownership (orphan). Never throws. */
export function runRemovalJob(removal: Removal, ctx: JobContext): Promise<VariantResult> {
  const id = { variant: removal.variant, downstream: removalLabel(removal), dryRun: ctx.dryRun };
  return runJob(id, () => propose(ctx, removalChange(removal, ctx)));
}

/** What a removal's proposal is made from: equal fingerprints, the same proposal. */
function removalFingerprint(removal: Removal, version: string): string {
  const { policy, directory, variant } = removal;
  return hashOf({ removal: policy, directory, variant, version }).slice(0, 32);
}

/**
 * The removals whose proposal is made already: its removal (or ownership-removal) proposal is open,
 * or was declined from the same inputs (and nobody asked to propose it again). Their jobs write
 * nothing new, so the removal guard does not count them. Asks the forge about each removal.
 */
export async function proposedRemovals(
  ctx: Pick<JobContext, 'forge' | 'branchPrefix' | 'version' | 'repropose'>,
  removals: readonly Removal[],
): Promise<Set<Removal>> {
  const proposed = new Set<Removal>();
  for (const removal of removals) {
    const target = removalTarget(removal, ctx.branchPrefix);
    const open = await ctx.forge.find(target);
    // the branch may hold the variant's own proposal (an update, an adoption): that one is no removal
    const kind = open ? parseMetadataBlock(open.body)?.kind : undefined;
    if (kind === 'removal' || kind === 'orphan') proposed.add(removal);
    if (open) continue;
    const declined = await ctx.forge.declined?.(target);
    if (declined && declined.fingerprint === removalFingerprint(removal, ctx.version) && !ctx.repropose?.has(declined.url))
      proposed.add(removal);
  }
  return proposed;
}

function removalChange(removal: Removal, ctx: JobContext): Change {
  const { directory, policy, variant } = removal;
  const action = policy === 'delete' ? 'removal-proposed' : 'orphan-proposed';
  const what = policy === 'delete' ? `remove ${directory || 'the root package'}` : `stop managing ${directory || 'the root package'}`;
  return {
    target: removalTarget(removal, ctx.branchPrefix),
    fingerprint: removalFingerprint(removal, ctx.version),
    kind: policy === 'delete' ? 'removal' : 'orphan',
    variant,
    directory,
    opened: action,
    updated: action,
    scratchName: `remove-${variant}`,
    async prepare(ws) {
      let lost = '';
      if (policy === 'delete') {
        // what the downstream changed since kdelta last proposed the package: what a reviewer would lose
        const mirror = await ctx.mirror(removal.url);
        const trailer = `${COMMIT_TRAILER}: ${variant}`;
        lost = `\n\n${describeLocalEdits(await findLocalEdits({ dir: mirror.dir, branch: removal.branch, directory, trailer }), removal.branch)}`;
        await ws.removePackage(directory);
      } else {
        const kptfile = await ws.readFile(directory, 'Kptfile');
        // a Kptfile that is a symlink is never read or written through
        if (typeof kptfile === 'object' && 'kind' in kptfile && kptfile.kind === 'symlink')
          throw new RunError('symlinked-package', `${directory}/Kptfile in ${removal.url} is a symlink: left alone`);
        if (typeof kptfile !== 'string') throw new RunError('not-a-package', `${directory}/Kptfile in ${removal.url} cannot be read`);
        const unowned = setKptfileAnnotations(kptfile, { [OWNER_ANNOTATION]: undefined, [DELETION_POLICY_ANNOTATION]: undefined });
        await ws.writeFile(directory, 'Kptfile', unowned);
      }
      return {
        title: `kdelta: ${what} (variant ${variant} is gone)`,
        summary:
          (policy === 'delete'
            ? `PackageVariant ${inertCode(variant)} is no longer in the control resources and its deletionPolicy is \`delete\`: this removes package ${inertCode(directory)}.`
            : `PackageVariant ${inertCode(variant)} is no longer in the control resources and its deletionPolicy is \`orphan\`: this keeps package ${inertCode(directory)} and removes only the ownership annotation.`) +
          lost,
        conflicts: [],
        resources: [],
      };
    },
  };
}

/** Text from the package or a downstream as inline code in a proposal's summary. */
const inertCode = (text: string): string => inert(text, 'code');
