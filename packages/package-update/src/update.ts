import { basename, join, posix, relative } from 'node:path';
import { trustNamed, withoutCredentials } from '@kdelta/git-source';
import { type PackageView, PackageTree, recoverInterruptedSwap, type Upstream, type UpstreamLock } from '@kdelta/kptfile-model';
import type { Conflict, Decision, IdentifiedDocument, ParsedTexts, ResourceReport } from '@kdelta/merge-core';
import { addMergeCommentsToTree } from './comments.js';
import { commitTree, isEmpty } from './commit.js';
import { UpdateError } from './errors.js';
import { type GitOptions, fetchTree, withTrust } from './fetch.js';
import { KPTFILE, type UpdateStrategy, kptfileOf, readKptfile, strategyOf, withUpstream } from './kptfile.js';
import { updateTree } from './nested.js';
import { type ProgressListener, progressLines, reportRecovery } from './progress.js';
import { labelled, type Side, sideLabel } from './side.js';
import type { PackageAction } from './strategies/types.js';

/** What an update goes to, on disk or in memory. */
interface UpdateRequest extends GitOptions {
  /** New ref; absent or '' keeps the Kptfile's. */
  readonly ref?: string;
  /** New strategy (recorded in the Kptfile); absent keeps the Kptfile's. */
  readonly strategy?: UpdateStrategy;
  readonly progress?: ProgressListener;
}

export interface UpdatePackageOptions extends UpdateRequest {
  /** The local package's directory. */
  readonly dir: string;
  /** Packages are named relative to it (default: `cwd`, else the process's directory). */
  readonly displayRoot?: string;
  /** Compute the result and write nothing (`pkg diff`); an interrupted swap is still recovered. */
  readonly dryRun?: boolean;
}

export interface UpdatePackageTreeOptions extends UpdateRequest {
  /**
   * The local package and its nested packages, in memory; left as it is (the result's `after` is
   * a copy). Its `source` names its files in errors (kptfile-model's `describe`).
   */
  readonly tree: PackageTree;
  /** The package's name in outcomes, conflicts and progress lines (`<name>/<nested path>`). */
  readonly name: string;
  /**
   * Where the root package's merge parses, for a caller that then lists what upstream changed
   * (`diffTrees` of the result's `upstream`, given the same): each text is parsed once for both.
   */
  readonly parsed?: ParsedTexts | undefined;
}

/** A package the update visited; `path` is the package's name (`<root>/<nested path>`). */
export interface PackageOutcome {
  readonly path: string;
  readonly action: PackageAction;
  readonly strategy?: UpdateStrategy;
}

export type FileStatus = 'added' | 'changed' | 'deleted' | 'kept';

export interface FileOutcome {
  /** Relative to the package directory, `/`-separated (nested packages' files included). */
  readonly path: string;
  readonly status: FileStatus;
}

export interface TreeUpdateResult {
  /** How many packages with an upstream were updated from it (the root and remote nested ones). */
  readonly updated: number;
  readonly packages: readonly PackageOutcome[];
  /** What happened to each resource merged (resource-merge), with the package it is in. */
  readonly resources: readonly (ResourceReport & { readonly package: string })[];
  readonly files: readonly FileOutcome[];
  /** Local changes upstream replaced, and resources kept against upstream's deletion. */
  readonly conflicts: readonly (Conflict & { readonly package: string })[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`): no conflicts. */
  readonly decisions: readonly (Decision & { readonly package: string })[];
  /** The root package's new lock. */
  readonly lock: UpstreamLock | undefined;
  /** The package before and after, in memory. */
  readonly before: PackageTree;
  readonly after: PackageTree;
  /**
   * The root package's upstream as the update merged it: at its old lock (`origin`, empty when it
   * had none) and now (`updated`), for a caller that shows what upstream changed (see `diffTrees`).
   */
  readonly upstream: { readonly origin: PackageTree; readonly updated: PackageTree };
}

export interface UpdateResult extends TreeUpdateResult {
  /** Whether the package directory was written (not with dryRun, nor when nothing changed). */
  readonly written: boolean;
}

interface Run {
  readonly git: GitOptions;
  readonly progress: (line: string) => void;
  readonly packages: PackageOutcome[];
  readonly resources: (ResourceReport & { package: string })[];
  readonly conflicts: (Conflict & { package: string })[];
  readonly decisions: (Decision & { package: string })[];
}

function hasLocalContent(pkg: PackageView): boolean {
  if (pkg.nestedPackages({ includeRemote: true }).length > 0) return true;
  return pkg.ownFiles().files.some((f) => f.path !== KPTFILE);
}

/** The versions of a package an update merged from: what its upstream holds, then and now. */
interface FetchedSides {
  readonly origin: PackageView;
  readonly updated: PackageView;
  /** The trees they are the root of. */
  readonly trees: { readonly origin: PackageTree; readonly updated: PackageTree };
}

/**
 * Update one package that has an upstream (kpt's updatePackage), in memory. `usersRepos`: the
 * repositories of its Kptfile that the user named (see {@link usersOwnRepos}), fetched as the
 * user's. Returns the upstream versions it merged from.
 */
async function updateOne(
  run: Run,
  pkg: PackageView,
  name: string,
  usersRepos: readonly string[],
  parsedTexts: ParsedTexts | undefined,
): Promise<FetchedSides> {
  const fetchGit =
    usersRepos.length > 0 && run.git.trust
      ? { ...run.git, trust: trustNamed(run.git.trust, usersRepos, run.git.cwd ?? process.cwd()) }
      : run.git;
  // kpt marks every local resource with its merge identity before merging. What the marking's
  // scan read of each side's texts goes to the merge, which so reads each text once.
  const identified = new Map<string, readonly IdentifiedDocument[]>();
  addMergeCommentsToTree(pkg, identified);
  const parsed = readKptfile(pkg, pkg.describe(KPTFILE))!;
  const kf = parsed.kptfile;
  const git = kf.upstream?.git;
  if (!git?.repo) throw new UpdateError(`package "${name}" must have an upstream reference`, 'no-upstream');
  const ref = git.ref || undefined;
  const strategy = strategyOf(kf.upstream?.updateStrategy, parsed.file);
  run.progress(`Package "${name}":`);
  run.progress(`Fetching upstream from ${withoutCredentials(git.repo)}@${git.ref ?? ''}`);
  // every repository is fetched under the user's trust: a nested package's Kptfile is package
  // content, and the root's repositories are trusted only when the user's (see withTrust)
  const namedBy = pkg.describe(KPTFILE);
  const updated = await fetchTree(fetchGit, git.repo, git.directory ?? '/', ref, namedBy);
  const sides: Side[] = [{ path: updated.tree.source, label: sideLabel('upstream', git.repo, git.directory, git.ref ?? updated.ref) }];
  // Marked like origin and local: the marks are then no upstream change, and a resource upstream
  // left alone reads exactly as it does at origin, which spares the merge of it.
  labelled(sides, () => addMergeCommentsToTree(updated.tree.package(), identified));
  const lock = kf.upstreamLock?.git;
  let origin: PackageView;
  let originTree = PackageTree.empty();
  if (lock?.commit || lock?.repo) {
    run.progress(`Fetching origin from ${withoutCredentials(lock.repo ?? git.repo)}@${lock.ref ?? ''}`);
    const fetched = await fetchTree(
      fetchGit,
      lock.repo ?? git.repo,
      lock.directory ?? git.directory ?? '/',
      lock.commit || lock.ref || undefined,
      namedBy,
    );
    originTree = fetched.tree;
    origin = fetched.tree.package();
    sides.push({
      path: fetched.tree.source,
      label: sideLabel('origin', lock.repo ?? git.repo, lock.directory ?? git.directory, lock.commit || lock.ref || ''),
    });
    // marked like the local package, so the marks are not taken for local changes
    labelled(sides, () => addMergeCommentsToTree(origin, identified));
  } else {
    // Never fetched: the origin is empty. Local content would have nothing to merge against.
    if (hasLocalContent(pkg))
      throw new UpdateError(`no origin available for package "${name}": its Kptfile has no upstreamLock`, 'no-origin');
    origin = originTree.package('none');
  }
  run.progress(`Updating package "${name.split('/').pop()}" with strategy "${strategy}".`);
  const out = labelled(sides, () =>
    updateTree(
      strategy,
      { local: pkg, updated: updated.tree.package(), origin, relPackagePath: '/', isRoot: true, parsed: parsedTexts, identified },
      run,
    ),
  );
  const named = (p: string | undefined) => (p ? `${name}/${p}` : name);
  run.packages.push(
    { path: name, action: 'updated', strategy },
    ...out.packages.map((p) => ({ ...p, path: named(p.path === '.' ? undefined : p.path) })),
  );
  run.resources.push(...out.resources.map((r) => ({ ...r, package: named(r.package) })));
  run.conflicts.push(...out.conflicts.map((c) => ({ ...c, package: named(c.package) })));
  run.decisions.push(...out.decisions.map((d) => ({ ...d, package: named(d.package) })));

  // The new lock: what was fetched.
  const after = readKptfile(pkg, pkg.describe(KPTFILE));
  pkg.write(
    KPTFILE,
    withUpstream(
      after,
      undefined,
      { repo: git.repo, directory: git.directory ?? '/', ref: git.ref ?? updated.ref, updateStrategy: strategy },
      updated.commit,
    ),
  );
  // resources that came from upstream get their merge comment (matching needs none: origin and
  // upstream resources are identified by their own names, local ones by their comment)
  addMergeCommentsToTree(pkg);
  run.progress('');
  return { origin, updated: updated.tree.package(), trees: { origin: originTree, updated: updated.tree } };
}

/**
 * The repositories a nested package's Kptfile names that the user named: those its parent's
 * upstream did not have there (neither at origin nor now). A Kptfile that came with the parent's
 * upstream is package content; one the user put there (`pkg get` into a subdirectory) or
 * re-pointed is the user's own.
 */
function usersOwnRepos(nested: PackageView, parent: FetchedSides, rel: string): string[] {
  const reposOf = (view: PackageView): string[] => {
    const kf = readKptfile(view, view.describe(KPTFILE))?.kptfile;
    return [kf?.upstream?.git?.repo, kf?.upstreamLock?.git?.repo].filter((r): r is string => typeof r === 'string' && r !== '');
  };
  const fromUpstream = new Set<string>();
  for (const side of [parent.origin.at(rel), parent.updated.at(rel)]) {
    if (side.hasKptfile()) for (const r of reposOf(side)) fromUpstream.add(r);
  }
  return reposOf(nested).filter((r) => !fromUpstream.has(r));
}

/**
 * kpt's rule for a new ref or strategy given to an update: a remote package inside the package
 * being updated, at any depth, follows it when it comes from the same repository, from a
 * directory at or below the updated package's directory, and was at the ref the updated package
 * was at before. (kpt compares the directories as strings, so `/bp/web-extra` would count as
 * below `/bp/web`; here whole path segments are compared.)
 */
function followRootRequest(pkg: PackageView, root: Upstream, options: UpdateRequest): void {
  if (!options.ref && !options.strategy) return;
  const sub = readKptfile(pkg, pkg.describe(KPTFILE));
  const git = sub?.kptfile.upstream?.git;
  const rootGit = root.git!;
  if (!sub || !git?.repo || git.repo !== rootGit.repo) return;
  if ((git.ref ?? '') !== (rootGit.ref ?? '')) return;
  if (!directoryWithin(git.directory, rootGit.directory)) return;
  pkg.write(
    KPTFILE,
    withUpstream(
      sub,
      undefined,
      {
        repo: git.repo,
        directory: git.directory ?? '/',
        ref: options.ref || git.ref || '',
        updateStrategy: options.strategy ?? sub.kptfile.upstream?.updateStrategy,
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

function fileOutcomes(before: PackageTree, after: PackageTree): FileOutcome[] {
  const a = before.allFiles();
  const b = after.allFiles();
  const out: FileOutcome[] = [];
  for (const [path, text] of b) {
    const old = a.get(path);
    out.push({ path, status: old === undefined ? 'added' : old === text ? 'kept' : 'changed' });
  }
  for (const path of a.keys()) if (!b.has(path)) out.push({ path, status: 'deleted' });
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/**
 * kpt's `pkg update` of a package and of the remote packages inside it, in memory: the package
 * given as a tree (nothing on disk is read or written but git's), the upstream and origin of each
 * package fetched into memory, merged there. {@link updatePackage} is this between a read and a write.
 */
export async function updatePackageTree(options: UpdatePackageTreeOptions): Promise<TreeUpdateResult> {
  const before = options.tree;
  const rootName = options.name;
  const kptfileText = before.text(KPTFILE);
  if (kptfileText === undefined) {
    throw new UpdateError(`${before.describe(KPTFILE)}: no such file or directory (not a kpt package)`, 'not-a-package');
  }
  const rootKptfile = kptfileOf(kptfileText, before.describe(KPTFILE));
  const rootUpstream = rootKptfile.kptfile.upstream;
  if (!rootUpstream?.git?.repo) throw new UpdateError(`package "${rootName}" must have an upstream reference`, 'no-upstream');
  if (options.strategy === undefined) strategyOf(rootUpstream.updateStrategy, rootKptfile.file);
  // The package's own Kptfile was written by the user's `pkg get`: its repositories are the
  // user's. A caller that passes `trust` (a run, whose packages are a downstream's content) names
  // every repository it trusts itself.
  const git = withTrust(options, [rootUpstream.git.repo, rootKptfile.kptfile.upstreamLock?.git?.repo], true);
  const run: Run = { git, progress: progressLines(options.progress), packages: [], resources: [], conflicts: [], decisions: [] };
  const work = before.clone();
  // A new ref or strategy is recorded first: it is what the update goes to.
  if (options.ref || options.strategy) {
    const git = rootUpstream.git;
    work.write(
      KPTFILE,
      withUpstream(
        rootKptfile,
        undefined,
        {
          repo: git.repo!,
          directory: git.directory ?? '/',
          ref: options.ref || git.ref || '',
          updateStrategy: options.strategy ?? rootUpstream.updateStrategy,
        },
        undefined,
      ),
    );
  }
  let count = 0;
  let rootSides: FetchedSides['trees'] | undefined;
  // Without a caller's trust the package is the user's: so is a nested Kptfile the user put there.
  const ownTrust = options.trust === undefined;
  const usersRepos = new Map<string, readonly string[]>();
  // kpt's order: depth first, the remote packages of one level in reverse path order
  const stack: string[] = ['.'];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    const pkg = work.package(rel === '.' ? '' : rel);
    if (!pkg.hasKptfile() || !pkg.isRemote()) continue;
    const sides = await updateOne(
      run,
      pkg,
      rel === '.' ? rootName : `${rootName}/${rel}`,
      usersRepos.get(rel) ?? [],
      // only the root's sides are the ones a caller lists the changes of
      rel === '.' ? options.parsed : undefined,
    );
    if (rel === '.') rootSides = sides.trees;
    count++;
    for (const sub of pkg.nestedPackages({ includeRemote: true, recurseIntoRemote: false })) {
      const nested = pkg.at(sub);
      if (!nested.isRemote()) continue;
      followRootRequest(nested, rootUpstream, options);
      const path = rel === '.' ? sub : `${rel}/${sub}`;
      if (ownTrust) usersRepos.set(path, usersOwnRepos(nested, sides, sub));
      stack.push(path);
    }
  }
  const lock = kptfileOf(work.text(KPTFILE)!, before.describe(KPTFILE)).kptfile.upstreamLock;
  return {
    updated: count,
    packages: run.packages,
    resources: run.resources,
    files: fileOutcomes(before, work),
    conflicts: run.conflicts,
    decisions: run.decisions,
    lock,
    before,
    after: work,
    // the root package is always remote (checked above): its sides were fetched
    upstream: rootSides ?? { origin: PackageTree.empty(), updated: PackageTree.empty() },
  };
}

/**
 * kpt's `pkg update` of a package and of the remote packages inside it: the package is read
 * once, merged in memory ({@link updatePackageTree}), and written once, all or nothing (nothing
 * at all with dryRun).
 */
export async function updatePackage(options: UpdatePackageOptions): Promise<UpdateResult> {
  const { dir, displayRoot, dryRun, ...request } = options;
  // a swap that a killed update left half done is finished or rolled back before anything else
  reportRecovery(options.progress, recoverInterruptedSwap(dir));
  const before = PackageTree.read(dir);
  if (!before) throw new UpdateError(`${join(dir, KPTFILE)}: no such file or directory (not a kpt package)`, 'not-a-package');
  const name = relative(displayRoot ?? options.cwd ?? process.cwd(), dir) || basename(dir);
  const result = await updatePackageTree({ ...request, tree: before, name });
  progressLines(options.progress)(
    dryRun ? `Compared ${result.updated} package(s) with upstream.` : `Updated ${result.updated} package(s).`,
  );
  const written = !dryRun && !isEmpty(commitTree(dir, result.after, before));
  return { ...result, written };
}
