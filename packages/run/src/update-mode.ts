import { basename, isAbsolute, join, posix, resolve } from 'node:path';
import { type Conflict, parseYamlDocument, type ResourceReport } from '@kdelta/merge-core';
import { isFullCommit, runGit, trustNamed, type RemoteRef } from '@kdelta/git-source';
import { OWNER_ANNOTATION } from '@kdelta/variant-engine';
import type { ProposalTarget } from './forge/forge.js';
import {
  checkout,
  COMMIT_TRAILER,
  git,
  message,
  propose,
  stopped,
  proposalRef,
  renderFiles,
  type FileContent,
  type JobContext,
  type Mirror,
  type VariantResult,
} from './job.js';
import { assertNoSymlinkIn, readPackageDir, splitBinary, writePackageDir } from './package-files.js';
import { hashOf } from './plan.js';
import { parseMetadataBlock, renderProposalBodies, type ProposalMetadata, type RenderFailureReport } from './report.js';
import { RunError } from './errors.js';
import { uncommittedKptfilesWarning } from './control-work-tree.js';

/**
 * Update mode: the control repository is itself a downstream. Every package in it whose Kptfile
 * names a git upstream is updated like a variant's package (3-way, from its lock, to the commit its
 * own `upstream.git.ref` names now), one proposal per package on `kdelta/update-<path>`.
 */

/** The control repository as a downstream: where its branches are pushed and proposed. */
export interface ControlRepository {
  /** The repository's name (the local forge's folder): its top-level directory's name. */
  readonly name: string;
  /** Its work tree's top-level directory. */
  readonly root: string;
  /** Where branches are pushed: its `origin` remote, else the work tree itself. */
  readonly url: string;
  /** The branch proposals go into: the work tree's current branch. */
  readonly branch: string;
}

/** The git repository `cwd` is in, or undefined (with the reason) when there is none to use. */
export async function findControlRepository(cwd: string): Promise<{ ok: true; value: ControlRepository } | { ok: false; reason: string }> {
  let root: string;
  try {
    root = (await runGit(['rev-parse', '--show-toplevel'], { cwd })).stdout.trim();
  } catch {
    return { ok: false, reason: `${cwd} is not in a git repository` };
  }
  let branch: string;
  try {
    branch = (await runGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: root })).stdout.trim();
  } catch {
    return { ok: false, reason: `the control repository (${root}) is not on a branch (detached HEAD)` };
  }
  const origin = await runGit(['config', '--get', 'remote.origin.url'], { cwd: root }).then(
    (r) => r.stdout.trim(),
    () => '',
  );
  const name =
    basename(root)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '') || 'control';
  return { ok: true, value: { name, root, url: origin || root, branch } };
}

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
  const paths = (await git(mirror.dir, ['ls-tree', '-r', '--name-only', control.branch]))
    .split('\n')
    .filter((p) => p === 'Kptfile' || p.endsWith('/Kptfile'))
    .sort();
  const remote: string[] = [];
  const out: UpdatePlan[] = [];
  const slugs = new Map<string, number>();
  for (const path of paths) {
    const directory = path === 'Kptfile' ? '' : path.slice(0, -'/Kptfile'.length);
    if (remote.some((r) => r === '' || directory.startsWith(`${r}/`))) continue;
    let k: KptfileUpstream | null;
    try {
      k = parseYamlDocument(await git(mirror.dir, ['show', `${control.branch}:${path}`])).toJS() as KptfileUpstream | null;
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

function resolveRef(refs: readonly RemoteRef[], ref: string): string | undefined {
  const by = new Map(refs.map((r) => [r.name, r.commit]));
  return by.get(`refs/tags/${ref}`) ?? by.get(`refs/heads/${ref}`) ?? by.get(ref) ?? (isFullCommit(ref) ? ref.toLowerCase() : undefined);
}

/** Where a package update's proposal goes: branch `<prefix>update-<path>` of the control repository. */
export function updateTarget(plan: UpdatePlan, control: ControlRepository, branchPrefix: string): ProposalTarget {
  return { downstream: control.name, repo: control.url, head: `${branchPrefix}${plan.name}`, base: control.branch };
}

/** Update one package of the control repository. Never throws: a failure is its result. */
export async function runUpdateJob(plan: UpdatePlan, control: ControlRepository, ctx: JobContext): Promise<VariantResult> {
  const base = {
    variant: plan.name,
    downstream: `${control.name}/${plan.directory || '.'}`,
    dryRun: ctx.dryRun,
    conflicts: [],
    conflictCount: 0,
  };
  try {
    return { ...base, ...(await updateJob(plan, control, ctx)) };
  } catch (error) {
    return { ...base, action: 'failed', writes: false, error: message(error) };
  }
}

async function updateJob(
  plan: UpdatePlan,
  control: ControlRepository,
  ctx: JobContext,
): Promise<Omit<VariantResult, 'variant' | 'downstream' | 'dryRun'>> {
  const commit = resolveRef(await ctx.upstreamRefs(plan.upstream.url), plan.upstream.ref);
  const where = `${plan.directory ? `${plan.directory}/` : ''}Kptfile`;
  if (!commit) {
    return {
      action: 'failed',
      writes: false,
      conflicts: [],
      conflictCount: 0,
      error: `${where}: upstream.git.ref "${plan.upstream.ref}" is not a tag, a branch or a full commit of ${plan.upstream.repo}`,
    };
  }
  const fingerprint = hashOf({ update: plan.directory, upstream: plan.upstream, commit, version: ctx.version }).slice(0, 32);
  const upstream = { repo: plan.upstream.repo, ref: plan.upstream.ref, commit, oldCommit: plan.lockCommit };
  const target = updateTarget(plan, control, ctx.branchPrefix);
  const mirror = await ctx.mirror(control.url);
  const open = await ctx.forge.find(target);
  const meta = open ? parseMetadataBlock(open.body) : undefined;
  const none = { conflicts: [] as Conflict[], conflictCount: 0 };
  const stop = stopped(open, target.head);
  if (stop) return { ...none, ...stop, fingerprint, upstream };
  // as for variants: a proposal whose render failed is always rendered again
  if (
    open &&
    meta &&
    !meta.renderFailed &&
    open.fingerprint === fingerprint &&
    mirror.heads.get(target.head) === meta.headCommit &&
    mirror.heads.get(target.base) === meta.baseCommit
  ) {
    return {
      ...none,
      action: 'unchanged',
      writes: false,
      proposal: proposalRef(open),
      fingerprint,
      upstream,
      conflictCount: meta.conflicts,
    };
  }
  // Nothing new upstream and nothing open: no checkout needed.
  if (!open && plan.lockCommit === commit) return { ...none, action: 'up-to-date', writes: false, fingerprint, upstream };

  const ws = await checkout(ctx, control.url, target.base, target.head, plan.name);
  const pkgDir = join(ws.dir, plan.directory);
  await assertNoSymlinkIn(ws.dir, plan.directory, control.url);
  const local = await readPackageDir(pkgDir);
  if (!local) throw new RunError('not-a-package', `${where}: the package is gone from ${control.branch}`);
  let files: ReadonlyMap<string, FileContent> = local;
  let conflicts: readonly Conflict[] = [];
  let resources: readonly ResourceReport[] = [];
  if (plan.lockCommit !== commit) {
    const m = await ctx.materialize({
      variant: plan.name,
      upstream: { repo: plan.upstream.repo, directory: plan.upstream.directory, ref: plan.upstream.ref, commit },
      downstream: { package: basename(plan.directory) || control.name, local },
      cacheDir: ctx.cacheDir,
      cwd: control.root,
      env: ctx.env,
      // the control repository's own Kptfile names this upstream: the user's
      ...(ctx.trust ? { trust: trustNamed(ctx.trust, [plan.upstream.url], control.root) } : {}),
    });
    files = m.files;
    conflicts = m.conflicts;
    resources = m.resources;
  }
  // Porch renders after every update; a failing render is reported on the proposal, as for variants
  let renderFailure: RenderFailureReport | undefined;
  if (ctx.render) {
    const { text, binary } = splitBinary(files);
    const rendered = await renderFiles(ctx, text, plan.directory, ws.dir);
    if (rendered.ok) files = new Map<string, FileContent>([...rendered.files, ...binary]);
    else renderFailure = rendered.failure;
  }
  await writePackageDir(pkgDir, files);
  const title = `kdelta: update ${plan.directory || 'the root package'} to ${plan.upstream.ref}`;
  const proposed = await propose(
    ctx,
    {
      target,
      ws,
      open,
      directory: plan.directory,
      title,
      fingerprint,
      conflicts: conflicts.length,
      renderFailure,
      commitMessage: `${title}\n\nUpstream: ${plan.upstream.repo} /${plan.upstream.directory} at ${plan.upstream.ref} (${commit})\n\n${COMMIT_TRAILER}: ${plan.name}\nKdelta-Fingerprint: ${fingerprint}\n`,
      body: (headCommit, changes) =>
        renderProposalBodies({
          title,
          compareUrl: plan.lockCommit ? ctx.forge.compareUrl?.(plan.upstream.repo, plan.lockCommit, commit) : undefined,
          summary: `Updates package \`${plan.directory || '/'}\` of this repository from \`${plan.lockCommit?.slice(0, 12) ?? '(no lock)'}\` to \`${plan.upstream.ref}\` (\`${commit.slice(0, 12)}\`), keeping its local edits.`,
          downstream: { repo: control.url, branch: control.branch, directory: plan.directory },
          changes,
          resources,
          conflicts,
          renderFailure,
          metadata: {
            version: ctx.version,
            variant: plan.name,
            fingerprint,
            headCommit,
            baseCommit: ws.baseCommit,
            upstream,
            conflicts: conflicts.length,
            kind: 'update',
            ...(renderFailure ? { renderFailed: true } : {}),
          } satisfies ProposalMetadata,
        }),
    },
    'proposed',
  );
  return { ...proposed, fingerprint, upstream, conflicts, conflictCount: conflicts.length, ...(renderFailure ? { renderFailure } : {}) };
}
