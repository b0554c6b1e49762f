import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isFullCommit, readObjects, repositoryIdentity, runGit } from '@kdelta/git-source';
import { parseYamlDocument } from '@kdelta/merge-core';
import type { Mirror } from '../propose/workspace.js';
import { hashOf } from '../plan/plan.js';
import { DOWNSTREAM_POLICY_MAX_BYTES } from './downstream-policy.js';
import { DOWNSTREAM_POLICY_FILE, type DownstreamState } from './policy.js';

/**
 * What a downstream's base branch holds for the policies: each governed package's upstream ref
 * and lock commit (its Kptfile), when the base took that lock (the merge a soak time counts
 * from), and the text of the cluster team's {@link DOWNSTREAM_POLICY_FILE}. Read at the branch's
 * commit: from the last run's answer when the branch has not moved (nothing cloned, no git
 * process), else from the run's mirror with one `git cat-file --batch` for every file (and, when
 * asked, one `git log` and a bounded few reads for the merges), the answer kept for the next run
 * as plan/removal-scan.ts keeps its own. Only downstreams with a governed variant are read.
 */

/** A Kptfile larger than this is no package the policy reads a lock from. */
const KPTFILE_MAX_BYTES = 1024 * 1024;
/** How many commits of the base's first-parent history are looked at for the merge that brought a lock. */
const MERGE_SEARCH_COMMITS = 200;
/** Rounds of reading earlier Kptfiles before giving up on when a lock came (a package edited many times since). */
const MERGE_SEARCH_ROUNDS = 4;

/** The cluster team's file as read: its text, or its size when too large; none when the repository has none. */
export type TeamFile = { readonly text: string } | { readonly tooLarge: number };

export interface DownstreamRead {
  readonly baseCommit: string;
  /** By package directory (`''`: the repository's root). */
  readonly states: ReadonlyMap<string, DownstreamState>;
  readonly team?: TeamFile | undefined;
}

export interface DownstreamReadInput {
  /** The downstream repository (its URL), its base branch and its commit as `ls-remote` reported it. */
  readonly url: string;
  readonly branch: string;
  readonly commit: string;
  /** The governed packages' directories. */
  readonly directories: readonly string[];
  /** Find when the base took each lock (rollouts with a soak need it). */
  readonly mergedAt: boolean;
  readonly version: string;
  /** git-source's cache directory (the answers are kept under it). */
  readonly cacheRoot: string;
  /** The run's mirror of the repository: asked for only when no answer is kept for this commit. */
  readonly mirror: () => Promise<Mirror>;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The state of one downstream, from the kept answer or read from its mirror (then kept). */
export async function readDownstream(input: DownstreamReadInput): Promise<DownstreamRead> {
  const stored = await storedRead(input);
  if (stored) return stored;
  const mirror = await input.mirror();
  // the mirror may be newer than ls-remote's answer: read (and keep) what it has
  const commit = mirror.heads.get(input.branch) ?? input.commit;
  const read = await readAt(mirror.dir, commit, input);
  await storeRead({ ...input, commit }, read);
  return read;
}

function kptfileOf(directory: string): string {
  return directory === '' ? 'Kptfile' : `${directory}/Kptfile`;
}

/** A ref as a Kptfile may name one (a tag, a branch): what a message or a proposal's title may say of it. */
const SAFE_REF = /^[A-Za-z0-9._/-]{1,200}$/;

/**
 * A Kptfile's upstream ref and lock commit (none readable: none). The downstream's content is a
 * stranger's: a ref that is no plain ref name and a commit that is no full commit id are not taken.
 */
function lockOf(text: string | undefined): { ref?: string; commit?: string } {
  if (text === undefined) return {};
  try {
    const v = parseYamlDocument(text).toJS() as { upstreamLock?: { git?: { ref?: unknown; commit?: unknown } } } | null;
    const git = v?.upstreamLock?.git;
    return {
      ...(typeof git?.ref === 'string' && SAFE_REF.test(git.ref) ? { ref: git.ref } : {}),
      ...(typeof git?.commit === 'string' && isFullCommit(git.commit) ? { commit: git.commit.toLowerCase() } : {}),
    };
  } catch {
    return {}; // not ours to judge: an unreadable Kptfile has no lock the policy compares
  }
}

async function readAt(dir: string, commit: string, input: DownstreamReadInput): Promise<DownstreamRead> {
  const { directories, env } = input;
  const objects = [...directories.map((d) => `${commit}:${kptfileOf(d)}`), `${commit}:${DOWNSTREAM_POLICY_FILE}`];
  const reads = await readObjects({ dir, objects, maxBytes: KPTFILE_MAX_BYTES, env });
  const states = new Map<string, DownstreamState>();
  for (const [i, d] of directories.entries()) {
    const r = reads[i];
    const lock = lockOf(r?.kind === 'found' ? r.content.toString('utf8') : undefined);
    states.set(d, { baseCommit: commit, ...lock });
  }
  const policy = reads[directories.length];
  const team: TeamFile | undefined =
    policy?.kind === 'too-large' || (policy?.kind === 'found' && policy.content.length > DOWNSTREAM_POLICY_MAX_BYTES)
      ? { tooLarge: policy.kind === 'found' ? policy.content.length : policy.size }
      : policy?.kind === 'found'
        ? { text: policy.content.toString('utf8') }
        : undefined;
  if (input.mergedAt) {
    const merged = await mergesOf(dir, commit, states, env);
    for (const [d, at] of merged) states.set(d, { ...states.get(d)!, mergedAt: at });
  }
  return { baseCommit: commit, states, ...(team ? { team } : {}) };
}

/**
 * When the base branch took each package's lock commit: the newest commit of its first-parent
 * history (a merge commit, as a merge button makes it, or a squashed one) whose Kptfile has the
 * lock and whose first parent's has not. One `git log` for every package, then the first parents'
 * Kptfiles read in one batch per round, a few rounds at most (a lock found in none: not known).
 */
async function mergesOf(
  dir: string,
  commit: string,
  states: ReadonlyMap<string, DownstreamState>,
  env: DownstreamReadInput['env'],
): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  const locked = [...states].filter(([, s]) => s.commit !== undefined);
  if (locked.length === 0) return out;
  const paths = locked.map(([d]) => kptfileOf(d));
  const { stdout } = await runGit(
    ['log', '--first-parent', '-m', `--max-count=${MERGE_SEARCH_COMMITS}`, '--format=%x00%H %ct', '--name-only', commit, '--', ...paths],
    { cwd: dir, env },
  );
  // path → the commits that touched it, newest first
  const touching = new Map<string, { sha: string; at: Date }[]>();
  for (const record of stdout.split('\0').slice(1)) {
    const [head = '', ...names] = record.split('\n');
    const [sha = '', time = '0'] = head.trim().split(' ');
    for (const name of names.map((n) => n.trim()).filter(Boolean)) {
      const list = touching.get(name) ?? [];
      list.push({ sha, at: new Date(Number(time) * 1000) });
      touching.set(name, list);
    }
  }
  let pending = locked.map(([d, s]) => ({ directory: d, lock: s.commit!, commits: touching.get(kptfileOf(d)) ?? [], next: 0 }));
  for (let round = 0; round < MERGE_SEARCH_ROUNDS && pending.length > 0; round++) {
    pending = pending.filter((p) => p.next < p.commits.length);
    const reads = await readObjects({
      dir,
      objects: pending.map((p) => `${p.commits[p.next]!.sha}^:${kptfileOf(p.directory)}`),
      maxBytes: KPTFILE_MAX_BYTES,
      env,
    });
    const left: typeof pending = [];
    for (const [i, p] of pending.entries()) {
      const r = reads[i];
      const before = lockOf(r?.kind === 'found' ? r.content.toString('utf8') : undefined).commit;
      if (before !== p.lock) out.set(p.directory, p.commits[p.next]!.at);
      else left.push({ ...p, next: p.next + 1 });
    }
    pending = left;
  }
  return out;
}

type Stored = {
  readonly key: string;
  readonly states: readonly { directory: string; ref?: string; commit?: string; mergedAt?: string }[];
  readonly team?: TeamFile | undefined;
};

function fileOf(input: Pick<DownstreamReadInput, 'cacheRoot' | 'url' | 'branch'>): string {
  const where = hashOf({ url: repositoryIdentity(input.url), branch: input.branch }).slice(0, 32);
  return join(input.cacheRoot, 'run-policy-states', `${where}.json`);
}

function keyOf(input: Pick<DownstreamReadInput, 'url' | 'branch' | 'commit' | 'directories' | 'mergedAt' | 'version'>): string {
  return hashOf({
    url: repositoryIdentity(input.url),
    branch: input.branch,
    commit: input.commit,
    directories: [...input.directories].sort(),
    mergedAt: input.mergedAt,
    version: input.version,
  });
}

async function storedRead(input: DownstreamReadInput): Promise<DownstreamRead | undefined> {
  let stored: Stored;
  try {
    stored = JSON.parse(await readFile(fileOf(input), 'utf8')) as Stored;
  } catch {
    return undefined;
  }
  if (stored?.key !== keyOf(input) || !Array.isArray(stored.states)) return undefined;
  const states = new Map<string, DownstreamState>();
  for (const s of stored.states) {
    states.set(s.directory, {
      baseCommit: input.commit,
      ...(s.ref !== undefined ? { ref: s.ref } : {}),
      ...(s.commit !== undefined ? { commit: s.commit } : {}),
      ...(s.mergedAt !== undefined ? { mergedAt: new Date(s.mergedAt) } : {}),
    });
  }
  return { baseCommit: input.commit, states, ...(stored.team ? { team: stored.team } : {}) };
}

/** Keep the answer read at `input.commit`; a cache that cannot be written only costs the next run a read. */
async function storeRead(input: DownstreamReadInput, read: DownstreamRead): Promise<void> {
  const file = fileOf(input);
  const stored: Stored = {
    key: keyOf(input),
    states: [...read.states].map(([directory, s]) => ({
      directory,
      ...(s.ref !== undefined ? { ref: s.ref } : {}),
      ...(s.commit !== undefined ? { commit: s.commit } : {}),
      ...(s.mergedAt !== undefined ? { mergedAt: s.mergedAt.toISOString() } : {}),
    })),
    ...(read.team ? { team: read.team } : {}),
  };
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await mkdir(join(input.cacheRoot, 'run-policy-states'), { recursive: true });
    await writeFile(tmp, JSON.stringify(stored));
    await rename(tmp, file);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
