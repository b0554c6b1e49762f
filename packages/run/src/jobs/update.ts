import { basename, isAbsolute, posix, resolve } from 'node:path';
import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import { decodeKptfile } from '@kdelta/kptfile-model';
import { expandCommit, GitError, pickCommit, trustNamed } from '@kdelta/git-source';
import { OWNER_ANNOTATION } from '@kdelta/variant-engine';
import type { Change } from './change.js';
import type { JobContext } from '../context.js';
import type { ControlRepository } from '../control/control-repository.js';
import { splitBinary, type FileContent } from './file-content.js';
import type { ProposalTarget } from '../forges/forge.js';
import { lockCommit } from './kptfile-annotations.js';
import { hashOf } from '../plan/plan.js';
import { propose } from '../propose/propose.js';
import { renderFiles, type RenderFailureReport } from './render.js';
import { failure, message, runJob, type VariantResult } from '../report/result.js';
import { kptfilesOn, showFile, type Mirror } from '../propose/workspace.js';
import { RunError } from '../errors.js';
import { uncommittedKptfilesWarning } from '../control/control-work-tree.js';
import { inert } from '../markdown.js';
import { withCommitLinks, type UpstreamChanges } from './upstream-changes.js';

/**
 * Update mode: the control repository is itself a downstream. Every package in it whose Kptfile
 * names a git upstream is updated like a variant's package (3-way, from its lock, to the commit its
 * own `upstream.git.ref` names now), one proposal per package on `kdelta/update-<path>`.
 */

/** A package of the control repository with a git upstream. */
export interface UpdatePlan {
  /** `update-<path slug>`: the proposal's name, the branch `kdelta/<name>`. */
  readonly name: string;
  /** The package directory in the control repository. */
  readonly directory: string;
  readonly upstream: {
    /** As the Kptfile records it. */
    readonly repo: string;
    /** Absolute path or URL, for git. */
    readonly url: string;
    /** Package directory in the upstream repository, without the leading `/`. */
    readonly directory: string;
    readonly ref: string;
  };
  readonly lockCommit: string | undefined;
}

function slug(directory: string): string {
  return directory.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'root';
}

interface KptfileUpstream {
  metadata?: { annotations?: Record<string, string> };
  upstream?: { type?: string; git?: { repo?: unknown; directory?: unknown; ref?: unknown } };
  upstreamLock?: { git?: { commit?: unknown } };
}

/**
 * Every package on the control repository's branch with a git upstream, skipping packages a
 * variant owns and remote packages inside another one (its update updates them).
 */
export async function findUpdatePlans(mirror: Mirror, control: ControlRepository, warnings: string[]): Promise<UpdatePlan[]> {
  const paths = (await kptfilesOn(mirror, control.branch)).sort();
  const remote: string[] = [];
  const out: UpdatePlan[] = [];
  const slugs = new Map<string, number>();
  for (const path of paths) {
    const directory = path === 'Kptfile' ? '' : path.slice(0, -'/Kptfile'.length);
    if (remote.some((r) => r === '' || directory.startsWith(`${r}/`))) continue;
    let k: KptfileUpstream | null;
    try {
      // kptfile-model's reading: a ref YAML would read as a number (a tag `2024`, a short id
      // `72234e66`) is the text written, as kpt reads it
      const decoded = decodeKptfile(await showFile(mirror, control.branch, path), path);
      const broken = decoded.issues.find((i) => i.code === 'yaml-syntax');
      if (broken) throw new RunError('invalid-kptfile', broken.message);
      k = decoded.kptfile as KptfileUpstream;
    } catch (error) {
      warnings.push(`${path}: not read for update mode: ${message(error).split('\n')[0]}`);
      continue;
    }
    const g = k?.upstream?.git;
    if (!g || typeof g.repo !== 'string' || g.repo === '') continue;
    remote.push(directory);
    if (k?.metadata?.annotations?.[OWNER_ANNOTATION]) continue; // a variant's package: the variant updates it
    if (typeof g.ref !== 'string' || g.ref === '') {
      warnings.push(`${path}: upstream.git.ref is missing: update mode needs the ref to follow`);
      continue;
    }
    const lock = k?.upstreamLock?.git?.commit;
    const url =
      /^[a-z][a-z0-9+.-]*:\/\//i.test(g.repo) || /^[^/]+@[^/:]+:/.test(g.repo) || isAbsolute(g.repo)
        ? g.repo
        : resolve(control.root, g.repo);
    const base = `update-${slug(directory)}`;
    const n = (slugs.get(base) ?? 0) + 1;
    slugs.set(base, n);
    out.push({
      name: n === 1 ? base : `${base}-${hashOf(directory).slice(0, 6)}`,
      directory,
      upstream: {
        repo: g.repo,
        url,
        directory: posix.normalize(`/${typeof g.directory === 'string' ? g.directory : ''}`).replace(/^\/+|\/+$/g, ''),
        ref: g.ref,
      },
      lockCommit: typeof lock === 'string' ? lock : undefined,
    });
  }
  const unseen = await uncommittedKptfilesWarning(
    control,
    out.map((p) => p.directory),
  );
  if (unseen) warnings.push(unseen);
  return out;
}

/** Where a package update's proposal goes: branch `<prefix>update-<path>` of the control repository. */
export function updateTarget(plan: UpdatePlan, control: ControlRepository, branchPrefix: string): ProposalTarget {
  return { downstream: control.name, repo: control.url, head: `${branchPrefix}${plan.name}`, base: control.branch };
}

/** Update one package of the control repository. Never throws: a failure is its result. */
export function runUpdateJob(plan: UpdatePlan, control: ControlRepository, ctx: JobContext): Promise<VariantResult> {
  const id = { variant: plan.name, downstream: `${control.name}/${plan.directory || '.'}`, dryRun: ctx.dryRun };
  return runJob(id, async () => {
    const commit = await upstreamCommit(plan, control, ctx);
    if (!commit) {
      return failure(
        'upstream-unresolved',
        `${kptfilePath(plan)}: upstream.git.ref "${plan.upstream.ref}" is not a tag, a branch or a commit of ${plan.upstream.repo}`,
      );
    }
    return propose(ctx, updateChange(plan, control, commit, ctx));
  });
}

/**
 * The commit the Kptfile's `upstream.git.ref` names, resolved as `pkg update` resolves it: a tag,
 * a branch or a commit id, full or abbreviated (an abbreviated one of an older commit is expanded
 * in the upstream's cache).
 */
async function upstreamCommit(plan: UpdatePlan, control: ControlRepository, ctx: JobContext): Promise<string | undefined> {
  const { ref, url } = plan.upstream;
  const commit = pickCommit(ref, await ctx.upstreamRefs(url));
  if (commit || !/^[0-9a-f]{4,39}$/i.test(ref)) return commit;
  try {
    return await expandCommit({
      repo: url,
      ref,
      cwd: control.root,
      env: ctx.env,
      ...(ctx.cacheDir ? { cacheDir: ctx.cacheDir } : {}),
      ...(ctx.trust ? { trust: trustNamed(ctx.trust, [url, control.url], control.root) } : {}),
    });
  } catch (error) {
    if (error instanceof GitError && error.code === 'unknown-revision') return undefined;
    throw error;
  }
}

function kptfilePath(plan: UpdatePlan): string {
  return `${plan.directory ? `${plan.directory}/` : ''}Kptfile`;
}

function updateChange(plan: UpdatePlan, control: ControlRepository, commit: string, ctx: JobContext): Change {
  const fingerprint = hashOf({ update: plan.directory, upstream: plan.upstream, commit, version: ctx.version }).slice(0, 32);
  const upstream = { repo: plan.upstream.repo, ref: plan.upstream.ref, commit, oldCommit: plan.lockCommit };
  return {
    target: updateTarget(plan, control, ctx.branchPrefix),
    fingerprint,
    kind: 'update',
    variant: plan.name,
    directory: plan.directory,
    upstream,
    opened: 'proposed',
    updated: 'updated',
    current: plan.lockCommit === commit,
    scratchName: plan.name,
    async prepare(ws) {
      const local = await ws.readPackage(plan.directory);
      if (!local) throw new RunError('not-a-package', `${kptfilePath(plan)}: the package is gone from ${control.branch}`);
      let files: ReadonlyMap<string, FileContent> = local;
      let conflicts: readonly Conflict[] = [];
      let resources: readonly ResourceReport[] = [];
      let changes: UpstreamChanges | undefined;
      // the package's own lock: the base's, or the branch's when its human commits are carried forward
      const kptfile = local.get('Kptfile');
      if (lockCommit(typeof kptfile === 'string' ? kptfile : undefined) !== commit) {
        const m = await ctx.materialize({
          variant: plan.name,
          upstream: { repo: plan.upstream.repo, directory: plan.upstream.directory, ref: plan.upstream.ref, commit },
          downstream: { package: basename(plan.directory) || control.name, local },
          cacheDir: ctx.cacheDir,
          cwd: control.root,
          env: ctx.env,
          // the control repository's own Kptfile names this upstream: the user's
          ...(ctx.trust ? { trust: trustNamed(ctx.trust, [plan.upstream.url, control.url], control.root) } : {}),
        });
        files = m.files;
        conflicts = m.conflicts;
        resources = m.resources;
        changes = m.upstreamChanges;
      }
      // Porch renders after every update; a failing render is reported on the proposal, as for variants
      let renderFailure: RenderFailureReport | undefined;
      if (ctx.render) {
        const { text, binary } = splitBinary(files);
        const rendered = await renderFiles(ctx, text, plan.directory, ws.dir);
        if (rendered.ok) files = new Map<string, FileContent>([...rendered.files, ...binary]);
        else renderFailure = rendered.failure;
      }
      await ws.writePackage(plan.directory, files);
      return {
        title: `kdelta: update ${plan.directory || 'the root package'} to ${plan.upstream.ref}`,
        summary: `Updates package ${inertCode(plan.directory || '/')} of this repository from ${inertCode(plan.lockCommit?.slice(0, 12) ?? '(no lock)')} to ${inertCode(plan.upstream.ref)} (${inertCode(commit.slice(0, 12))}), keeping its local edits.`,
        commitDetail: `Upstream: ${plan.upstream.repo} /${plan.upstream.directory} at ${plan.upstream.ref} (${commit})`,
        upstream,
        compareUrl: plan.lockCommit ? ctx.forge.compareUrl?.(plan.upstream.repo, plan.lockCommit, commit) : undefined,
        upstreamChanges: withCommitLinks(changes, (sha) => ctx.forge.commitUrl?.(plan.upstream.repo, sha)),
        conflicts,
        resources,
        renderFailure,
      };
    },
  };
}

/** Text from the package or a downstream as inline code in a proposal's summary. */
const inertCode = (text: string): string => inert(text, 'code');
