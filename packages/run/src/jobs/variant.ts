import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import { PACKAGE_CONTEXT_FILE, PackageTree, packageContextConfigMap } from '@kdelta/kptfile-model';
import { applyPackageVariant, ownerKey, OWNER_ANNOTATION, selectDownstreams, type DownstreamCopy } from '@kdelta/variant-engine';
import type { Change } from './change.js';
import { checkpoint, type JobContext } from '../context.js';
import { splitBinary, type CarriedContent, type FileContent } from './file-content.js';
import { changesLockOnly } from './lock-only.js';
import { deploymentPackageContexts } from './deployment-context.js';
import type { ProposalTarget } from '../forges/forge.js';
import { DELETION_POLICY_ANNOTATION, kptfileAnnotations, lockCommit, setKptfileAnnotations } from './kptfile-annotations.js';
import { CONTROL_ANNOTATION } from '../control/ownership.js';
import { applyFailureMessage, fingerprintOf, resolveUpstream, withRepositoryOf, type VariantPlan } from '../plan/plan.js';
import { propose } from '../propose/propose.js';
import { renderChangeLines, renderFiles, type RenderFailureReport } from './render.js';
import { failure, message, runJob, type JobOutcome, type VariantResult } from '../report/result.js';
import { RunError } from '../errors.js';
import { inert } from '../markdown.js';
import { withCommitLinks, type UpstreamChanges } from './upstream-changes.js';
import { MAJOR_SUFFIX, type VariantPin } from '../policy/variant-pin.js';

/** A PackageVariant's change: its upstream package, updated and mutated, into its downstream. */

/** The files of `b` that are not those of `a` (changed, added or removed), sorted. */
function differingFiles(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): string[] {
  const paths = new Set([...a.keys(), ...b.keys()]);
  return [...paths].filter((p) => a.get(p) !== b.get(p)).sort();
}

/**
 * Where a variant's proposal goes: branch `<prefix><variant>` of its downstream, into the
 * Repository's branch; a major release its update policy proposes on its own, `<prefix><variant>-major`.
 */
export function variantTarget(plan: VariantPlan, branchPrefix: string, major = false): ProposalTarget {
  return {
    downstream: plan.downstream.repository.name,
    repo: plan.downstream.url,
    head: `${branchPrefix}${plan.name}${major ? MAJOR_SUFFIX : ''}`,
    base: plan.downstream.branch,
  };
}

/**
 * Run one variant to its result. Never throws: a failure is this variant's result. With an update
 * policy's `pin` it proposes the revision the policy chose (never a newer one), or waits, or fails
 * as the pin says; without one, the revision its own upstream fields name.
 */
export function runVariantJob(
  plan: VariantPlan,
  ctx: JobContext,
  policy: { readonly pin?: VariantPin | undefined; readonly major?: boolean | undefined } = {},
): Promise<VariantResult> {
  const { major = false } = policy;
  const label = `${plan.downstream.repository.name}/${plan.downstream.package}${major ? ' (major)' : ''}`;
  const id = { variant: plan.name, downstream: label, dryRun: ctx.dryRun };
  return runJob(
    id,
    async () => {
      const change = await resolvedVariantChange(plan, ctx, policy);
      return 'done' in change ? change.done : propose(ctx, change);
    },
    (error) => withRepositoryOf(plan, error, message(error)),
  );
}

/**
 * A variant's change: at the revision its update policy's `pin` chose (or nothing now: it waits,
 * or fails, as the pin says), else at the revision its own upstream fields resolve to now.
 */
export async function resolvedVariantChange(
  plan: VariantPlan,
  ctx: JobContext,
  policy: { readonly pin?: VariantPin | undefined; readonly major?: boolean | undefined } = {},
): Promise<Change | { readonly done: JobOutcome }> {
  const { pin, major = false } = policy;
  if (pin) {
    switch (pin.kind) {
      case 'fail':
        return { done: failure(pin.code, pin.message) };
      case 'wait':
        return { done: { action: 'deferred', writes: false, message: pin.why } };
      case 'revision':
        return variantChange(plan, pin, ctx, { major, autoMerge: pin.autoMerge });
      default:
        return pin satisfies never;
    }
  }
  const resolved = resolveUpstream(plan, await ctx.upstreamRefs(plan.upstream.url));
  if (!resolved.ok) return { done: failure(resolved.code ?? 'upstream-unresolved', resolved.error) };
  return variantChange(plan, resolved.value, ctx);
}

/**
 * Whether the variant takes the package already at its downstream (owned by `owner`, or by no
 * one): Porch's rule, as variant-engine's `selectDownstreams` decides it. The package on the base
 * branch is a published copy; the owner annotation records a variant's name, its owner key here.
 */
function adopts(plan: VariantPlan, owner: string | undefined): boolean {
  const copy: DownstreamCopy = {
    repo: plan.variant.spec?.downstream?.repo ?? '',
    package: plan.variant.spec?.downstream?.package ?? '',
    lifecycle: 'Published',
    owners: owner === undefined ? [] : [owner === plan.name ? ownerKey(plan.variant) : owner],
  };
  return selectDownstreams(plan.variant, [copy]).downstreams.length > 0;
}

function variantChange(
  plan: VariantPlan,
  up: { ref: string; commit: string; reason?: string | undefined },
  ctx: JobContext,
  policy: { readonly major?: boolean; readonly autoMerge?: boolean } = {},
): Change {
  const fingerprint = fingerprintOf(plan, up, ctx.version);
  const upstreamInfo = { repo: plan.upstream.url, ref: up.ref, commit: up.commit, reason: up.reason };
  const { directory, url } = plan.downstream;
  return {
    target: variantTarget(plan, ctx.branchPrefix, policy.major),
    ...(policy.autoMerge !== undefined ? { autoMerge: policy.autoMerge } : {}),
    fingerprint,
    kind: 'variant',
    variant: plan.name,
    directory,
    upstream: upstreamInfo,
    opened: 'proposed',
    updated: 'updated',
    scratchName: plan.name,
    async prepare(ws) {
      const local = await ws.readPackage(directory);
      const kptfileContent = local?.get('Kptfile');
      const kptfile = typeof kptfileContent === 'string' ? kptfileContent : undefined;
      if (local && kptfile === undefined) {
        return { done: failure('not-a-package', `${directory} exists in ${url} and is not a kpt package (no Kptfile): left alone`) };
      }
      const owner = kptfileAnnotations(kptfile)[OWNER_ANNOTATION];
      const spec = plan.variant.spec ?? {};
      if (local && !adopts(plan, owner)) {
        return {
          done: {
            action: 'not-adopted',
            writes: false,
            message: `package ${directory} exists ${owner ? `and belongs to variant "${owner}"` : 'and belongs to no variant'}; adoptionPolicy adoptNone leaves it alone`,
          },
        };
      }
      const oldCommit = lockCommit(kptfile);
      let files: Map<string, string>;
      let binary: Map<string, CarriedContent>;
      let conflicts: readonly Conflict[] = [];
      let resources: readonly ResourceReport[] = [];
      let changes: UpstreamChanges | undefined;
      if (!local || oldCommit !== up.commit) {
        const m = await ctx.materialize({
          variant: plan.name,
          upstream: { repo: plan.upstream.url, directory: plan.upstream.directory, ref: up.ref, commit: up.commit },
          downstream: { package: plan.downstream.package, local },
          cacheDir: ctx.cacheDir,
          env: ctx.env,
          trust: ctx.trust,
        });
        await checkpoint(ctx.signal);
        ({ text: files, binary } = splitBinary(m.files));
        conflicts = m.conflicts;
        resources = m.resources;
        changes = m.upstreamChanges;
      } else {
        // Same upstream commit as the lock: the update would change nothing, only the mutations may.
        ({ text: files, binary } = splitBinary(local));
      }
      // Porch, creating a package in a deployment repository, gives it its package context named
      // after it, as `kpt pkg get --for-deployment` does (upstream's names a blueprint); a package
      // adopted there (a `kpt pkg get` copy) keeps its own, and gets the one its clone would have
      // had when it has none.
      const deployment = (plan.downstream.repository.object.spec as { deployment?: unknown } | undefined)?.deployment === true;
      const adopted = local !== undefined && owner !== plan.name;
      if (!local && deployment) for (const [path, text] of deploymentPackageContexts(files, plan.downstream.package)) files.set(path, text);
      else if (adopted && deployment && !files.has(PACKAGE_CONTEXT_FILE))
        files.set(PACKAGE_CONTEXT_FILE, packageContextConfigMap(plan.downstream.package));
      // One tree for the mutations and the render: each file is parsed once.
      const tree = PackageTree.fromFiles(files);
      const applied = applyPackageVariant(tree.package(), plan.variant, {
        objects: plan.objects,
        packageName: plan.downstream.package,
      });
      if (!applied.ok) return { done: failure('variant-failed', applyFailureMessage(plan, applied)) };
      for (const [path, text] of applied.changed) files.set(path, text);
      const kpt = files.get('Kptfile');
      if (kpt === undefined)
        throw new RunError('not-a-package', `the package from ${plan.upstream.url} ${plan.upstream.directory} has no Kptfile`);
      // The control repository is recorded with a new package or a new upstream commit: a package
      // that only lacks the record gets no proposal of its own for it. Without a remote URL to
      // record, a recorded local path (an older kdelta's) is dropped rather than kept.
      const recordControl = !local || oldCommit !== up.commit || CONTROL_ANNOTATION in kptfileAnnotations(kptfile);
      const annotated = setKptfileAnnotations(kpt, {
        [OWNER_ANNOTATION]: plan.name,
        [DELETION_POLICY_ANNOTATION]: spec.deletionPolicy ?? 'delete',
        ...(recordControl ? { [CONTROL_ANNOTATION]: ctx.controlRecord } : {}),
      });
      files.set('Kptfile', annotated);
      tree.write('Kptfile', annotated);
      // Same upstream commit, same variant: whatever changes comes from the render alone (a field a
      // function manages was edited on the downstream, and the pipeline sets it again).
      const sameUpstream = local !== undefined && !adopted && oldCommit === up.commit;
      const mutated = sameUpstream ? differingFiles(splitBinary(local).text, files) : [];
      const beforeRender = new Map(files);
      let renderFailure: RenderFailureReport | undefined;
      // at the same upstream commit the render may be all that changes: what each function changed is recorded
      let byFunction: string[] = [];
      await checkpoint(ctx.signal);
      if (ctx.render) {
        const rendered = await renderFiles(
          { env: ctx.env, allowExec: ctx.allowExec, allowedImages: ctx.allowedImages, changes: sameUpstream },
          tree,
          directory,
          ws.dir,
        );
        if (rendered.ok) {
          files = rendered.files;
          byFunction = renderChangeLines(rendered.functions, directory);
        } else renderFailure = rendered.failure;
      }
      await checkpoint(ctx.signal);
      await ws.writePackage(directory, new Map<string, FileContent>([...files, ...binary]));
      const rendered = sameUpstream && !renderFailure ? differingFiles(beforeRender, files) : [];
      const renderOnly = sameUpstream && mutated.length === 0 && rendered.length > 0;
      const reapplied = sameUpstream && mutated.length > 0;
      const title = adopted
        ? `kdelta: adopt ${plan.downstream.package} (${plan.name}) at ${up.ref}`
        : renderOnly
          ? `kdelta: re-render ${plan.downstream.package} (${plan.name})`
          : reapplied
            ? `kdelta: re-apply ${plan.name} to ${plan.downstream.package} at ${up.ref}`
            : local
              ? `kdelta: update ${plan.downstream.package} (${plan.name}) to ${up.ref}`
              : `kdelta: add ${plan.downstream.package} (${plan.name}) from ${up.ref}`;
      return {
        title,
        summary: renderOnly
          ? `Re-renders package ${inertCode(directory)}: its upstream (${inertCode(up.ref)}, ${inertCode(up.commit.slice(0, 12))}) and variant ${inertCode(plan.name)} are unchanged, and its Kptfile pipeline, run again, changes ${rendered.map(inertCode).join(', ')} (a field a function of the pipeline sets was edited on the downstream; the function sets it again).${byFunction.length > 0 ? `\n\nWhat each function of the pipeline changed:\n\n${byFunction.join('\n')}` : ''}`
          : reapplied
            ? `Re-applies variant ${inertCode(plan.name)} to package ${inertCode(directory)} at the same upstream (${inertCode(up.ref)}, ${inertCode(up.commit.slice(0, 12))}): the variant or what it injects changed.`
            : adopted
              ? `Adopts package ${inertCode(directory)}${owner ? ` from variant ${inertCode(owner)}` : ', which no variant owned'} (adoptionPolicy adoptExisting): updates it from its upstreamLock ${inertCode(oldCommit?.slice(0, 12) ?? '(no lock)')} to ${inertCode(up.ref)} (${inertCode(up.commit.slice(0, 12))}) with a 3-way merge that keeps its local edits, records variant ${inertCode(plan.name)} as its owner${deployment && !local.has(PACKAGE_CONTEXT_FILE) ? ' and adds the package context of a deployment repository' : ''}, and applies the variant.`
              : local
                ? `Updates package ${inertCode(directory)} from ${inertCode(oldCommit?.slice(0, 12) ?? '(no lock)')} to ${inertCode(up.ref)} (${inertCode(up.commit.slice(0, 12))}) and re-applies variant ${inertCode(plan.name)}.`
                : `Adds package ${inertCode(directory)} from ${inertCode(up.ref)} (${inertCode(up.commit.slice(0, 12))}) with variant ${inertCode(plan.name)} applied.`,
        commitDetail: `Upstream: ${plan.upstream.url} ${plan.upstream.directory || '/'} at ${up.ref} (${up.commit})`,
        upstream: { ...upstreamInfo, oldCommit: local ? oldCommit : undefined },
        compareUrl: oldCommit && local ? ctx.forge.compareUrl?.(plan.upstream.url, oldCommit, up.commit) : undefined,
        upstreamChanges: withCommitLinks(changes, (sha) => ctx.forge.commitUrl?.(plan.upstream.url, sha)),
        conflicts,
        resources,
        renderFailure,
        notReady: applied.unmetGates,
        ...(local && changesLockOnly(splitBinary(local).text, files) ? { lockOnly: true } : {}),
      };
    },
  };
}

/** Text from the package or a downstream as inline code in a proposal's summary. */
const inertCode = (text: string): string => inert(text, 'code');
