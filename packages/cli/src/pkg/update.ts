import { writeFileSync } from 'node:fs';
import { basename, join, posix, relative, sep } from 'node:path';
import { addMergeCommentsToTree, copyTree, scratchDir } from './fs-util.js';
import { type FetchContext, cleanScratch, fetchToScratch } from './fetch.js';
import { withoutCredentials } from '@kdelta/git-source';
import type { Upstream } from '@kdelta/kptfile-model';
import { readKptfile, withUpstream } from './kptfile.js';
import type { Conflict } from '@kdelta/merge-core';
import { UpdateError, strategyOf, updateTree } from './strategies.js';
import { inWorkCopy, recoverInterruptedSwap } from './swap.js';
import { removeTempDir } from './temp.js';
import type { UpdateStrategy } from './strategy.js';
import { KPTFILE, exists, hasUpstream, packageFiles, subpackagePaths } from './tree.js';

export interface UpdateRequest {
  /** Absolute path of the local package. */
  readonly pkgPath: string;
  /** New ref; '' keeps the Kptfile's. */
  readonly ref: string;
  /** New strategy (persisted in the Kptfile); undefined keeps the Kptfile's. */
  readonly strategy: UpdateStrategy | undefined;
  /** For printing package names relative to it (the current directory). */
  readonly displayRoot: string;
  /** Do everything in a scratch copy and leave the package untouched (pkg diff). */
  readonly dryRun?: boolean;
}

export interface UpdateSummary {
  readonly packages: number;
  readonly conflicts: readonly (Conflict & { package: string })[];
  /** With dryRun: the scratch copy holding the result (the caller removes it). */
  readonly resultPath?: string;
}


/** Update one package that has an upstream (kpt's updatePackage), in place. */
async function updateOne(
  ctx: FetchContext,
  dir: string,
  name: string,
  conflicts: (Conflict & { package: string })[],
): Promise<void> {
  // kpt marks every local resource with its merge identity before merging
  addMergeCommentsToTree(dir);
  const parsed = readKptfile(dir)!;
  const kf = parsed.kptfile;
  const git = kf.upstream?.git;
  if (!git?.repo) throw new UpdateError(`package "${name}" must have an upstream reference`, 'no-upstream');
  const ref = git.ref || undefined;
  const strategy = strategyOf(kf.upstream?.updateStrategy, parsed.file);
  ctx.progress(`Package "${name}":`);
  ctx.progress(`Fetching upstream from ${withoutCredentials(git.repo)}@${git.ref ?? ''}`);
  const updated = await fetchToScratch(ctx, git.repo, git.directory ?? '/', ref);
  const sides: Side[] = [{ path: updated.path, label: sideLabel('upstream', git.repo, git.directory, git.ref ?? updated.ref) }];
  // Marked like origin and local: the marks are then no upstream change, and a resource upstream
  // left alone reads exactly as it does at origin, which spares the merge of it. Whatever comes
  // into the package from upstream gets these marks at the end anyway.
  labelled(sides, () => addMergeCommentsToTree(updated.path));
  const lock = kf.upstreamLock?.git;
  let originPath: string;
  if (lock?.commit || lock?.repo) {
    ctx.progress(`Fetching origin from ${withoutCredentials(lock.repo ?? git.repo)}@${lock.ref ?? ''}`);
    const origin = await fetchToScratch(ctx, lock.repo ?? git.repo, lock.directory ?? git.directory ?? '/', lock.commit || lock.ref || undefined);
    originPath = origin.path;
    sides.push({ path: originPath, label: sideLabel('origin', lock.repo ?? git.repo, lock.directory ?? git.directory, lock.commit || lock.ref || '') });
    // marked like the local package, so the marks are not taken for local changes
    labelled(sides, () => addMergeCommentsToTree(originPath));
  } else {
    // Never fetched: the origin is empty. Local content would have nothing to merge against.
    const local = subpackagePaths(dir, { includeRemote: true }).length > 0 || hasLocalContent(dir);
    if (local) throw new UpdateError(`no origin available for package "${name}": its Kptfile has no upstreamLock`, 'no-origin');
    originPath = join(scratchDir('origin'), 'none');
    ctx.scratch.push(join(originPath, '..'));
  }
  ctx.progress(`Updating package "${name.split('/').pop()}" with strategy "${strategy}".`);
  const out = labelled(sides, () =>
    updateTree(strategy, {
      localPath: dir,
      updatedPath: updated.path,
      originPath,
      relPackagePath: '/',
      isRoot: true,
      progress: ctx.progress,
    }),
  );
  conflicts.push(...out.conflicts.map((c) => ({ ...c, package: c.package ? `${name}/${c.package}` : name })));

  // The new lock: what was fetched.
  const after = readKptfile(dir);
  writeFileSync(
    join(dir, KPTFILE),
    withUpstream(after, undefined, { repo: git.repo, directory: git.directory ?? '/', ref: git.ref ?? updated.ref, updateStrategy: strategy }, updated.commit),
  );
  // resources that came from upstream get their merge comment (matching needs none: origin and
  // upstream resources are identified by their own names, local ones by their comment)
  addMergeCommentsToTree(dir);
  ctx.progress('');
}

/** A fetched version of the package (upstream or origin), in a scratch directory. */
interface Side {
  readonly path: string;
  readonly label: string;
}

/** `upstream (https://host/repo/pkg@v2)`: how a side's files are named in errors. */
function sideLabel(side: 'upstream' | 'origin', repo: string, directory: string | undefined, ref: string): string {
  const dir = (directory ?? '/').replace(/^\/+/, '');
  return `${side} (${repo.replace(/\/+$/, '')}${dir ? `/${dir}` : ''}${ref ? `@${ref}` : ''})`;
}

/**
 * Runs `fn`; an error naming a file of a fetched side by its scratch path is re-labelled with the
 * side and the file's path in the package (`upstream (…@v2): deploy.yaml: …`), since the scratch
 * directory means nothing to the user and is gone when the command ends.
 */
function labelled<T>(sides: readonly Side[], fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    let message = error.message;
    for (const side of sides) {
      message = message.split(`${side.path}${sep}`).join(`${side.label}: `).split(side.path).join(side.label);
    }
    if (message !== error.message) error.message = message;
    throw error;
  }
}

function hasLocalContent(dir: string): boolean {
  return packageFilesExceptKptfile(dir) > 0;
}

function packageFilesExceptKptfile(dir: string): number {
  return packageFiles(dir).files.filter((f) => f.path !== KPTFILE).length;
}

/**
 * kpt's rule for a new ref or strategy given to an update: a remote package inside the package
 * being updated, at any depth, follows it when it comes from the same repository, from a
 * directory at or below the updated package's directory, and was at the ref the updated package
 * was at before. (kpt compares the directories as strings, so `/bp/web-extra` would count as
 * below `/bp/web`; here whole path segments are compared.)
 */
function followRootRequest(dir: string, root: Upstream, request: UpdateRequest): void {
  if (!request.ref && !request.strategy) return;
  const sub = readKptfile(dir);
  const git = sub?.kptfile.upstream?.git;
  const rootGit = root.git!;
  if (!sub || !git?.repo || git.repo !== rootGit.repo) return;
  if ((git.ref ?? '') !== (rootGit.ref ?? '')) return;
  if (!directoryWithin(git.directory, rootGit.directory)) return;
  writeFileSync(
    join(dir, KPTFILE),
    withUpstream(
      sub,
      undefined,
      {
        repo: git.repo,
        directory: git.directory ?? '/',
        ref: request.ref || git.ref || '',
        updateStrategy: request.strategy ?? sub.kptfile.upstream?.updateStrategy,
      },
      undefined,
    ),
  );
}

/** Whether repository directory `dir` is `parent` or lies below it (whole path segments). */
function directoryWithin(dir: string | undefined, parent: string | undefined): boolean {
  const clean = (d: string | undefined) => posix.normalize(`/${d ?? ''}`).replace(/\/+$/, '');
  const c = clean(dir);
  const p = clean(parent);
  return p === '' || c === p || c.startsWith(`${p}/`);
}

/** `kdelta pkg update`: kpt's update of a package and of its remote subpackages; all or nothing. */
export async function updatePackage(request: UpdateRequest, ctx: FetchContext): Promise<UpdateSummary> {
  // a swap that a killed update left half done is finished or rolled back before anything else
  const recovered = recoverInterruptedSwap(request.pkgPath);
  if (recovered) (ctx.notice ?? ctx.progress)(recovered);
  const rootKptfile = readKptfile(request.pkgPath);
  if (!rootKptfile) {
    throw new UpdateError(`${join(request.pkgPath, KPTFILE)}: no such file or directory (not a kpt package)`, 'not-a-package');
  }
  const rootName = relative(request.displayRoot, request.pkgPath) || basename(request.pkgPath);
  if (!rootKptfile.kptfile.upstream?.git?.repo) throw new UpdateError(`package "${rootName}" must have an upstream reference`, 'no-upstream');
  if (request.strategy === undefined) strategyOf(rootKptfile.kptfile.upstream.updateStrategy, rootKptfile.file);
  const conflicts: (Conflict & { package: string })[] = [];
  const run = async (work: string) => {
    // A new ref or strategy is recorded first: it is what the update goes to.
    if (request.ref || request.strategy) {
      const git = rootKptfile.kptfile.upstream!.git!;
      writeFileSync(
        join(work, KPTFILE),
        withUpstream(
          rootKptfile,
          undefined,
          {
            repo: git.repo!,
            directory: git.directory ?? '/',
            ref: request.ref || git.ref || '',
            updateStrategy: request.strategy ?? rootKptfile.kptfile.upstream!.updateStrategy,
          },
          undefined,
        ),
      );
    }
    let count = 0;
    // kpt's order: depth first, the remote packages of one level in reverse path order
    const stack: string[] = ['.'];
    while (stack.length > 0) {
      const rel = stack.pop()!;
      const dir = rel === '.' ? work : join(work, rel);
      if (!exists(join(dir, KPTFILE)) || !hasUpstream(join(dir, KPTFILE))) continue;
      const name = rel === '.' ? rootName : `${rootName}/${rel}`;
      await updateOne(ctx, dir, name, conflicts);
      count++;
      for (const sub of subpackagePaths(dir, { includeRemote: true, recurseIntoRemote: false })) {
        const subDir = join(dir, sub);
        if (!hasUpstream(join(subDir, KPTFILE))) continue;
        followRootRequest(subDir, rootKptfile.kptfile.upstream!, request);
        stack.push(rel === '.' ? sub : `${rel}/${sub}`);
      }
    }
    ctx.progress(request.dryRun ? `Compared ${count} package(s) with upstream.` : `Updated ${count} package(s).`);
    return count;
  };
  try {
    if (request.dryRun) {
      const holder = scratchDir('dry-run');
      const work = join(holder, 'pkg');
      copyTree(request.pkgPath, work);
      try {
        const packages = await run(work);
        return { packages, conflicts, resultPath: work };
      } catch (error) {
        removeTempDir(holder);
        throw error;
      }
    }
    const packages = await inWorkCopy(request.pkgPath, run);
    return { packages, conflicts };
  } finally {
    cleanScratch(ctx);
  }
}
