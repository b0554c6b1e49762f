import {
  checkoutDetached,
  commitsSince,
  commitStaged,
  deleteRemoteBranch,
  fetchBranch,
  isAncestor,
  isGitError,
  lastCommitWithLine,
  listBranches,
  listFiles,
  push,
  revParse,
  runGit,
  showFile as showFileAt,
  stageAll,
  type Author,
  type CommitInfo,
} from '@kdelta/git-source';
import { fileContent, type FileContent, type PackageFiles } from '../jobs/file-content.js';
import { assertNoSymlinkIn, readPackageDir, writePackageDir } from '../jobs/package-files.js';
import type { FileChange } from './proposal-body.js';
import type { BaseHistory } from './protocol.js';
import { RunError } from '../errors.js';
import { join } from 'node:path';
import { lstat, readFile, readlink, rm, writeFile } from 'node:fs/promises';

/**
 * Where a job prepares its change: a checkout of the downstream's base branch. `propose` reads
 * and writes it only through {@link Workspace}, so its protocol runs on an in-memory one in tests.
 */

/** A bare clone of a downstream repository, made once per run. */
export interface Mirror {
  readonly dir: string;
  /** Branch name → commit, as cloned. */
  readonly heads: ReadonlyMap<string, string>;
}

/** A commit on a proposal branch: who made it and its message (kdelta's carry its trailer). */
export type BranchCommit = CommitInfo;

/** A commit of the proposal branch (not on the base) and the paths it changes. */
export interface TouchingCommit {
  readonly sha: string;
  readonly name: string;
  readonly email: string;
  /** It has no parent: it starts a history of its own. */
  readonly root: boolean;
  /** Repository paths it changes: against its parent; a merge, those that differ from every parent; a root, all. */
  readonly paths: readonly string[];
}

/** What the proposal branch changes, commit by commit and as a whole. */
export interface BranchTouches {
  readonly commits: readonly TouchingCommit[];
  /**
   * The paths the branch's tip changes from where it left the base (their merge base; every path
   * of the tip when they share no history): what merging the branch would change.
   */
  readonly net: readonly string[];
}

/** The staged change committed on the base commit, and how it compares to the remote branch. */
export interface Committed {
  readonly commit: string;
  /** The remote branch holds exactly this content, as one commit on this base: it need not be pushed. */
  readonly sameAsRemote: boolean;
}

export interface Workspace {
  /** The work tree (a render's working directory; a forge that publishes the commit reads it there). */
  readonly dir: string;
  /** The downstream repository (URL or path), as messages name it. */
  readonly repository: string;
  readonly baseCommit: string;
  /** The proposal branch on the remote, if it exists. */
  readonly remoteHead: string | undefined;
  /**
   * The commit {@link commit} goes on: the base commit, or, in the workspace {@link onBranchTip}
   * returns, the branch's tip (absent: the base commit).
   */
  readonly parent?: string | undefined;
  /** A package directory's files; undefined when it is absent. A symlinked package is refused. */
  readPackage(directory: string): Promise<Map<string, FileContent> | undefined>;
  /** Replace a package directory with exactly these files. */
  writePackage(directory: string, files: PackageFiles): Promise<void>;
  removePackage(directory: string): Promise<void>;
  /** One file of a package (`file` in `directory`): a symlink as such, never followed. */
  readFile(directory: string, file: string): Promise<FileContent | undefined>;
  /** Write one text file of a package, leaving its other files as they are. */
  writeFile(directory: string, file: string, text: string): Promise<void>;
  /**
   * What differs under `directory` ('' for all) from where the branch leaves the base (the base
   * commit; on the tip, its merge base with the base): everything staged for the commit.
   */
  changedFiles(directory: string): Promise<FileChange[]>;
  /** The remote branch's commits not on the base; when it has none, its tip alone. */
  branchCommits(): Promise<BranchCommit[]>;
  /**
   * The paths the remote branch's commits change, each and as a whole. Optional: without it, a
   * branch with commits kdelta did not make is left alone (nothing tells what they touch).
   */
  branchTouches?(): Promise<BranchTouches>;
  /**
   * A package directory's files at `commit` of the remote branch's history. It moves the work
   * tree there: read it before {@link onBranchTip}, after what was written is read.
   */
  readPackageAt?(commit: string, directory: string): Promise<Map<string, FileContent> | undefined>;
  isAncestor(commit: string, of: string): Promise<boolean>;
  /**
   * Whether a commit of the base touching `directory` has the message line `line` (a trailer a
   * squash merge keeps). Optional: without it, only a merge that keeps the commit is seen.
   */
  baseHasLine?(line: string, directory: string): Promise<boolean>;
  /** Commit what {@link changedFiles} staged, on {@link parent}. */
  commit(message: string, author: Author): Promise<Committed>;
  /**
   * This workspace moved onto the remote branch's tip, to carry its commits forward: packages are
   * read from the tip, the commit goes on top of it (the push a fast-forward), and
   * {@link changedFiles} still compares with the base. What was written in the work tree before
   * is discarded.
   * Optional: without it, a branch with commits kdelta did not make is left alone.
   */
  onBranchTip?(): Promise<Workspace>;
  /**
   * Push the commit to the proposal branch, unless the branch moved since it was read. Returns the
   * commit the branch then holds: this one, or, when another run pushed exactly this proposal
   * first (the same tree on the same base), that run's commit.
   */
  push(input: RemoteBranch): Promise<string>;
  /** Delete the proposal branch, unless it moved since it was read. */
  deleteBranch(input: RemoteBranch): Promise<void>;
}

/** The proposal branch on its remote, and the credentials to reach it. */
export interface RemoteBranch {
  readonly remote: string;
  readonly branch: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly token?: string | undefined;
  /** What `token` is, for the message when the server refuses it. */
  readonly tokenName?: string | undefined;
}

/** The heads of a bare clone: branch name → commit. */
export function mirrorHeads(dir: string): Promise<Map<string, string>> {
  return listBranches({ dir });
}

/** The paths of a mirrored branch's Kptfiles (under `directory`, or everywhere). */
export async function kptfilesOn(mirror: Mirror, branch: string, directory?: string): Promise<string[]> {
  const files = await listFiles({ dir: mirror.dir, ref: branch, ...(directory ? { directory } : {}) });
  return files.filter((p) => p === 'Kptfile' || p.endsWith('/Kptfile'));
}

/** A file of a mirrored branch. */
export function showFile(mirror: Mirror, branch: string, path: string): Promise<string> {
  return showFileAt({ dir: mirror.dir, ref: branch, path });
}

export function isAncestorIn(dir: string, commit: string, of: string): Promise<boolean> {
  return isAncestor({ dir, commit, of });
}

/** The history of `baseCommit` in the repository at `dir` (a mirror), for the protocol's "reached the base". */
export function baseHistoryIn(dir: string, baseCommit: string): BaseHistory {
  return {
    contains: (commit) => isAncestor({ dir, commit, of: baseCommit }),
    hasLine: async (line, directory) => (await lastCommitWithLine({ dir, ref: baseCommit, path: directory, line })) !== undefined,
  };
}

/** The base's history as a workspace sees it (one without `baseHasLine` sees no squash merges). */
export function baseHistoryOf(ws: Workspace): BaseHistory {
  return {
    contains: (commit) => ws.isAncestor(commit, ws.baseCommit),
    hasLine: async (line, directory) => (await ws.baseHasLine?.(line, directory)) ?? false,
  };
}

/**
 * A work tree of the mirror at its `base` branch's commit in `dir`, HEAD detached there (the
 * mirror's objects and refs: nothing is copied). A linked work tree of the mirror, not a clone:
 * a clone of it, even a shared one, runs three processes (git, a shell, `upload-pack`) where
 * this runs one, and a run makes one per variant. Its commits go into the mirror, which is the
 * run's own and removed with it.
 */
export async function checkoutMirror(mirror: Mirror, url: string, base: string, head: string, dir: string): Promise<Workspace> {
  const baseCommit = mirror.heads.get(base);
  if (!baseCommit) throw new RunError('branch-missing', `branch "${base}" does not exist in ${url}`);
  await oneAtATime(mirror.dir, () =>
    runGit(['-c', 'maintenance.auto=false', 'worktree', 'add', '--quiet', '--detach', '--', dir, baseCommit], { cwd: mirror.dir }),
  );
  return gitWorkspace(dir, url, baseCommit, mirror.heads.get(head), baseCommit);
}

/**
 * The work trees being added to each mirror. Two `git worktree add` at once in one repository
 * race: one reads the other's half-written entry ("failed to read worktrees/…/commondir"). A
 * mirror's are added one after the other; each is quick, and other mirrors' go on meanwhile.
 */
const adding = new Map<string, Promise<unknown>>();

async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = adding.get(key) ?? Promise.resolve();
  const mine = before.catch(() => {}).then(work);
  adding.set(key, mine);
  try {
    return await mine;
  } finally {
    if (adding.get(key) === mine) adding.delete(key);
  }
}

function gitWorkspace(dir: string, repository: string, baseCommit: string, remoteHead: string | undefined, parent: string): Workspace {
  let committed: string | undefined;
  // on the branch's tip: the human's commits are carried forward under a commit of kdelta's
  const onTip = parent !== baseCommit;
  return {
    dir,
    repository,
    baseCommit,
    remoteHead,
    parent,
    async readPackage(directory) {
      await assertNoSymlinkIn(dir, directory, repository);
      return readPackageDir(join(dir, directory));
    },
    async writePackage(directory, files) {
      await assertNoSymlinkIn(dir, directory, repository);
      await writePackageDir(join(dir, directory), files);
    },
    async removePackage(directory) {
      await assertNoSymlinkIn(dir, directory, repository);
      await rm(join(dir, directory), { recursive: true, force: true });
    },
    async readFile(directory, file) {
      await assertNoSymlinkIn(dir, directory, repository);
      const path = join(dir, directory, file);
      try {
        if ((await lstat(path)).isSymbolicLink()) return { kind: 'symlink', target: await readlink(path) };
        return fileContent(await readFile(path));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async writeFile(directory, file, text) {
      await assertNoSymlinkIn(dir, directory, repository);
      await writeFile(join(dir, directory, file), text);
    },
    // on the tip, what the branch changes is measured from where it left the base (a human's
    // merge of the base into the branch brings nothing of the base's own)
    changedFiles: async (directory) =>
      stageAll({
        dir,
        directory,
        against: onTip && remoteHead ? ((await mergeBase(dir, baseCommit, remoteHead)) ?? baseCommit) : baseCommit,
      }),
    branchCommits: async () => (remoteHead ? commitsSince({ dir, head: remoteHead, base: baseCommit }) : []),
    branchTouches: async () => (remoteHead ? branchTouches(dir, baseCommit, remoteHead) : { commits: [], net: [] }),
    async readPackageAt(commit, directory) {
      await checkoutClean(dir, commit);
      return this.readPackage(directory);
    },
    isAncestor: (commit, of) => isAncestor({ dir, commit, of }),
    baseHasLine: async (line, directory) => (await lastCommitWithLine({ dir, ref: baseCommit, path: directory, line })) !== undefined,
    async commit(message, author) {
      // Committed as staged by changedFiles, on the scratch clone's base: the branch exists only
      // on the remote (pushed from HEAD). Each git process costs a fork of this one: as few as will do.
      // on the tip, a merge that changes nothing there is still this run's commit: compared below
      await commitStaged({ dir, message, author, allowEmpty: onTip });
      // our commit and tree, then, when the branch exists, its tree and its parents (in this order)
      const remote = remoteHead ? [`${remoteHead}^{tree}`, `${remoteHead}^@`] : [];
      const [commit, ourTree, theirTree, ...theirParents] = await revParse({ dir, revs: ['HEAD', 'HEAD^{tree}', ...remote] });
      if (!commit) throw new RunError('internal', 'internal: changes were staged but nothing was committed');
      committed = commit;
      return {
        commit,
        sameAsRemote:
          remoteHead !== undefined &&
          ourTree === theirTree &&
          // on the tip: its tree is already the result; else: one commit of this tree on the base
          (onTip || (theirParents.length === 1 && theirParents[0] === baseCommit)),
      };
    },
    async push(to) {
      if (!committed) throw new RunError('internal', 'internal: nothing was committed to push');
      const { remote, branch, env } = to;
      try {
        await push({ dir, remote, branch, expectedHead: remoteHead ?? null, localRef: 'HEAD', env, ...credentials(to) });
        return committed;
      } catch (error) {
        // Two runs at once (a schedule and a release) can compute the same proposal: the first
        // push wins, the second's lease is stale. Nothing was lost when the branch now holds
        // exactly what this push held: the winner's commit is the proposal.
        const winner = lostRace(error) ? await identicalWinner(dir, to, parent).catch(() => undefined) : undefined;
        if (!winner) throw error;
        return winner;
      }
    },
    async onBranchTip() {
      if (!remoteHead) throw new RunError('internal', 'internal: there is no branch tip to carry forward');
      await checkoutClean(dir, remoteHead);
      return gitWorkspace(dir, repository, baseCommit, remoteHead, remoteHead);
    },
    async deleteBranch(to) {
      if (!remoteHead) return;
      await deleteRemoteBranch({ dir, remote: to.remote, branch: to.branch, expectedHead: remoteHead, env: to.env, ...credentials(to) });
    },
  };
}

/** The work tree at `commit`, whatever was written in it (a scratch clone: nothing there is anyone's). */
async function checkoutClean(dir: string, commit: string): Promise<void> {
  await runGit(['reset', '--quiet', '--hard'], { cwd: dir });
  await runGit(['clean', '--quiet', '-ffdx'], { cwd: dir });
  await checkoutDetached({ dir, commit });
}

/** The best common ancestor of two commits; undefined when they share no history. */
async function mergeBase(dir: string, a: string, b: string): Promise<string | undefined> {
  return runGit(['merge-base', a, b], { cwd: dir }).then(
    (r) => r.stdout.trim() || undefined,
    () => undefined,
  );
}

/** Each commit of `head` not on `base` with the paths it changes, and what `head` changes as a whole. */
async function branchTouches(dir: string, base: string, head: string): Promise<BranchTouches> {
  // --cc: a merge lists the paths that differ from every parent (a merge of the base brings
  // none); a root commit lists all its paths; paths unquoted, as they are
  const { stdout } = await runGit(
    [
      '-c',
      'core.quotePath=false',
      'log',
      '--format=%x1e%H%x1f%P%x1f%an%x1f%ae',
      '--name-only',
      '--cc',
      '--no-renames',
      head,
      `^${base}`,
      '--',
    ],
    { cwd: dir },
  );
  const commits: TouchingCommit[] = [];
  for (const entry of stdout.split('\x1e')) {
    const [header = '', ...lines] = entry.split('\n');
    const [sha, parents, name, email] = header.split('\x1f');
    if (!sha) continue;
    commits.push({ sha, name: name ?? '', email: email ?? '', root: (parents ?? '').trim() === '', paths: lines.filter(Boolean) });
  }
  const from = await mergeBase(dir, base, head);
  const net = from
    ? (await runGit(['-c', 'core.quotePath=false', 'diff', '--name-only', '--no-renames', from, head, '--'], { cwd: dir })).stdout
    : (await runGit(['-c', 'core.quotePath=false', 'ls-tree', '-r', '--name-only', head, '--'], { cwd: dir })).stdout;
  return { commits, net: net.split('\n').filter(Boolean) };
}

const credentials = (to: RemoteBranch) => (to.token ? { token: to.token, tokenName: to.tokenName } : {});

/** A push refused because the branch moved under it: a stale lease, or the server's ref lock taken by the other push. */
function lostRace(error: unknown): boolean {
  if (!isGitError(error)) return false;
  if (error.code === 'stale-lease' || error.code === 'non-fast-forward') return true;
  return /cannot lock ref|failed to update ref|reference already exists/i.test(`${error.stderr}\n${error.message}`);
}

/** The branch's commit when it is this work tree's HEAD in all but its id (same tree, one parent: `parent`); else undefined. */
async function identicalWinner(dir: string, to: RemoteBranch, parent: string): Promise<string | undefined> {
  const winner = await fetchBranch({
    dir,
    remote: to.remote,
    branch: to.branch,
    // refs/worktree/: this work tree's own ref; the mirror's other work trees (the downstream's
    // other variants, losing a race of their own at the same time) have theirs
    into: 'refs/worktree/kdelta/winner',
    env: to.env,
    ...credentials(to),
  });
  const [theirTree, ourTree, ...parents] = await revParse({ dir, revs: [`${winner}^{tree}`, 'HEAD^{tree}', `${winner}^@`] });
  return theirTree === ourTree && parents.length === 1 && parents[0] === parent ? winner : undefined;
}
