import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParsedTexts, parseYamlDocument, type ParsedTexts } from '@kdelta/merge-core';
import { hideCredentials, isGitError } from '@kdelta/git-source';
import { createFetchMemo, type FetchMemo, type GitOptions, getPackageTree, updatePackageTree } from '@kdelta/package-update';
import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import type { SourceTrust } from '@kdelta/git-source';
import type { FileContent, PackageFiles } from './file-content.js';
import { packageFilesOf, packageTreeOf } from './package-files.js';
import { RunError } from '../errors.js';
import { createUpstreamChangesMemo, upstreamChanges, type UpstreamChanges, type UpstreamChangesInput } from './upstream-changes.js';

/**
 * The injected step of a run, on `@kdelta/package-update`: kpt's `pkg get` the first time, kpt's
 * `pkg update` (3-way merge from the Kptfile's lock) after. The run holds packages in memory, and
 * so does the step: the downstream package goes to the library's in-memory update as a tree and
 * comes back as one, bytes, modes and symlinks and all; only git's fetches touch the disk.
 */

/**
 * What a relative repository in package content is resolved against when the run names no
 * directory: a path with nothing in it (never created), as no directory of this machine is the
 * package's.
 */
const NO_WORKING_DIRECTORY = join(tmpdir(), 'kdelta-package-has-no-directory');

export interface MaterializeInput {
  readonly variant: string;
  readonly upstream: {
    /** Repository URL or absolute path, as in the Repository's `spec.git.repo`. */
    readonly repo: string;
    /** Package directory in the upstream repository (no leading `/`; '' for the root). */
    readonly directory: string;
    /** The ref the variant names (tag, branch or commit): what the Kptfile's `upstream.git.ref` records. */
    readonly ref: string;
    /** The full commit `ref` resolved to: fetch exactly this one. */
    readonly commit: string;
  };
  readonly downstream: {
    /** The package's name (the Kptfile's `metadata.name`). */
    readonly package: string;
    /** The package as it is on the downstream's base branch; undefined the first time. */
    readonly local: PackageFiles | undefined;
  };
  /** Cache directory for upstream fetches (git-source's). */
  readonly cacheDir?: string | undefined;
  /** Directory a relative upstream repository is resolved against. */
  readonly cwd?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The repositories the user named (the control resources', the forge's): every repository the
   * package's content names is fetched under it. Absent: package-update's default.
   */
  readonly trust?: SourceTrust | undefined;
}

export interface MaterializeResult {
  /**
   * The whole package after get (first time) or update (3-way merge of the lock's commit, the
   * new upstream and `local`): every file, the Kptfile's `upstream` and `upstreamLock` set to
   * the input's ref and commit. The variant's mutations are applied after, by the run.
   */
  readonly files: PackageFiles;
  readonly conflicts: readonly Conflict[];
  /** What happened to each resource (empty for a first get). */
  readonly resources: readonly ResourceReport[];
  /** What upstream changed since the package's lock (an update only; a step of a test may leave it out). */
  readonly upstreamChanges?: UpstreamChanges | undefined;
  readonly lock: { readonly repo: string; readonly directory: string; readonly ref: string; readonly commit: string };
}

/** Get or update a package: throws on failure (the run reports it for that variant alone). */
export type Materialize = (input: MaterializeInput) => Promise<MaterializeResult>;

/** `/a/b` as Kptfiles record a package directory; '' (the repository root) is `/`. */
function kptDirectory(directory: string): string {
  return `/${directory.replace(/^\/+|\/+$/g, '')}`;
}

/**
 * The Kptfile's `upstream` pointed at the variant's repository and directory (its ref is the
 * update's own argument). The lock is left alone: it is the merge's origin.
 */
function pointUpstreamAt(text: string, input: MaterializeInput, file: string): string | undefined {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) throw new RunError('invalid-kptfile', `${file}: invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const directory = kptDirectory(input.upstream.directory);
  const repo = doc.getIn(['upstream', 'git', 'repo']);
  const current = doc.getIn(['upstream', 'git', 'directory']);
  if (repo === input.upstream.repo && typeof current === 'string' && kptDirectory(current) === directory) return undefined;
  doc.setIn(['upstream', 'type'], 'git');
  doc.setIn(['upstream', 'git', 'repo'], input.upstream.repo);
  doc.setIn(['upstream', 'git', 'directory'], directory);
  return doc.toString();
}

/** The Kptfile's upstreamLock: the commit the package was last fetched at, and where from. */
function lockOf(kptfile: string): { readonly repo?: string; readonly commit: string } | undefined {
  const v = parseYamlDocument(kptfile).toJS() as { upstreamLock?: { git?: { repo?: unknown; commit?: unknown } } } | null;
  const git = v?.upstreamLock?.git;
  if (typeof git?.commit !== 'string') return undefined;
  return typeof git.repo === 'string' ? { repo: git.repo, commit: git.commit } : { commit: git.commit };
}

/** `local`'s Kptfile with `upstream` and `upstreamLock` taken from `fetched`. */
export function withProvenanceOf(local: string, fetched: string, file: string): string {
  const doc = parseYamlDocument(local);
  if (doc.errors.length > 0) throw new RunError('invalid-kptfile', `${file}: invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const from = parseYamlDocument(fetched).toJS() as { upstream?: unknown; upstreamLock?: unknown };
  doc.setIn(['upstream'], doc.createNode(from.upstream));
  doc.setIn(['upstreamLock'], doc.createNode(from.upstreamLock));
  return doc.toString();
}

function checkName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
    throw new RunError('invalid-name', `package name "${name}" cannot name a directory (letters, digits, ".", "_" and "-")`);
  return name;
}

/**
 * A materialize step for one run: the default one, with each first-time get made once per
 * upstream commit and package name (a set fans one package out to many repositories), and each
 * upstream and origin a get or an update reads fetched once per run, shared by every one that
 * needs it.
 */
export function createPackageUpdateMaterialize(): Materialize {
  const gets = new Map<string, Promise<PackageFiles>>();
  const fetches = createFetchMemo();
  const changes = createUpstreamChangesMemo();
  const upstreamParses = createUpstreamParses();
  return (input) => {
    if (input.downstream.local) return materialize(input, fetches, changes, upstreamParses);
    const key = JSON.stringify([
      input.upstream.repo,
      input.upstream.directory,
      input.upstream.ref,
      input.upstream.commit,
      input.downstream.package,
      input.cwd ?? '',
    ]);
    let files = gets.get(key);
    if (!files) {
      files = materialize(input, fetches).then((r) => r.files);
      gets.set(key, files);
      files.catch(() => gets.delete(key)); // a failure is not remembered: the next variant tries again
    }
    return files.then((f) => ({ files: new Map(f), conflicts: [], resources: [], lock: { ...input.upstream } }));
  };
}

/** Get (no local package) or 3-way update (a local package with a lock) through package-update. */
export const packageUpdateMaterialize: Materialize = (input) => materialize(input, undefined, upstreamChanges);

/**
 * The parses of origin and upstream texts, kept for a whole run: a set fans one package out to
 * many downstreams, whose updates all read the same two versions of it (a preview of 1,000
 * variants parsed them 1,000 times). Readers never change a parsed document (see
 * {@link ParsedTexts}), so one parse serves them all. A local text is the downstream's own and
 * is let go with its update. Bounded: past {@link UPSTREAM_PARSES_CHARS} characters of text it
 * starts again, so a run over many large packages holds no more than an update of one.
 */
function createUpstreamParses(): (update: ParsedTexts) => ParsedTexts {
  let shared = createParsedTexts();
  const seen = new Set<string>();
  let chars = 0;
  return (update) => ({
    stream(text, file, side) {
      if (side === 'local') return update.stream(text, file, side);
      if (!seen.has(text)) {
        if (chars + text.length > UPSTREAM_PARSES_CHARS) {
          shared = createParsedTexts();
          seen.clear();
          chars = 0;
        }
        seen.add(text);
        chars += text.length;
      }
      return shared.stream(text, file, side);
    },
  });
}

/** How much origin and upstream text a run keeps parsed (characters): many packages, or one large one. */
const UPSTREAM_PARSES_CHARS = 16 * 1024 * 1024;

async function materialize(
  input: MaterializeInput,
  fetches: FetchMemo | undefined,
  changesOf: (input: UpstreamChangesInput) => Promise<UpstreamChanges> = upstreamChanges,
  upstreamParses?: (update: ParsedTexts) => ParsedTexts,
): Promise<MaterializeResult> {
  // The package's name is its Kptfile's (getPackageTree records it) and names its files in errors.
  const name = checkName(input.downstream.package || 'pkg');
  const git: GitOptions = {
    cwd: input.cwd ?? NO_WORKING_DIRECTORY,
    env: input.env,
    ...(input.cacheDir ? { cacheDir: input.cacheDir } : {}),
    ...(fetches ? { fetches } : {}),
    ...(input.trust ? { trust: input.trust } : {}),
  };
  const get = async (): Promise<Map<string, FileContent>> => {
    const got = await getPackageTree({
      ...git,
      repo: input.upstream.repo,
      directory: kptDirectory(input.upstream.directory),
      ref: input.upstream.ref,
      name,
    });
    if (got.commit !== input.upstream.commit) throw movedDuringRun(input, got.commit);
    return packageFilesOf(got.tree);
  };
  const local = input.downstream.local;
  if (!local) {
    const files = await get();
    if (!files.has('Kptfile'))
      throw new RunError(
        'not-a-package',
        `${input.upstream.repo} ${kptDirectory(input.upstream.directory)} at ${input.upstream.ref} is not a kpt package (no Kptfile)`,
      );
    return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
  }
  const kptfile = local.get('Kptfile');
  if (typeof kptfile !== 'string') throw new RunError('not-a-package', `package ${input.downstream.package} has no readable Kptfile`);
  const lock = lockOf(kptfile);
  if (!lock) {
    // Adopted, never fetched: there is no origin to merge from. Every local file is kept as it
    // is; upstream's other files are added and the Kptfile records where they came from.
    const files = await get();
    const fetchedKptfile = files.get('Kptfile');
    for (const [path, content] of local) files.set(path, content);
    if (typeof fetchedKptfile === 'string')
      files.set('Kptfile', withProvenanceOf(kptfile, fetchedKptfile, `${input.downstream.package}/Kptfile`));
    return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
  }
  const local2 = new Map(local);
  const pointed = pointUpstreamAt(kptfile, input, `${input.downstream.package}/Kptfile`);
  if (pointed !== undefined) local2.set('Kptfile', pointed);
  // What the merge parses of origin and upstream, the list of what upstream changed reads again:
  // parsed once for both, and for every other update of the run from the same versions.
  const parsed = lock.commit === input.upstream.commit ? undefined : (upstreamParses?.(createParsedTexts()) ?? createParsedTexts());
  const result = await updatePackageTree({ ...git, tree: packageTreeOf(local2, name), name, ref: input.upstream.ref, parsed }).catch(
    (error: unknown) => {
      // The merge's origin is fetched from where the lock says the package came from, which a
      // copy made elsewhere (`kpt pkg get` from another URL) may name: say which file says so.
      if (lock.repo !== undefined && lock.repo !== input.upstream.repo && isGitError(error) && error.message.includes(lock.repo)) {
        throw new RunError(
          'origin-unreachable',
          `${input.downstream.package}/Kptfile: upstreamLock.git.repo ${hideCredentials(lock.repo)}: the package's last upstream commit ${lock.commit.slice(0, 12)}, the origin of its 3-way merge, could not be fetched from there: ${error.message}`,
          { file: `${input.downstream.package}/Kptfile`, path: 'upstreamLock.git.repo' },
        );
      }
      throw error;
    },
  );
  if (result.lock?.git?.commit !== undefined && result.lock.git.commit !== input.upstream.commit)
    throw movedDuringRun(input, result.lock.git.commit);
  return {
    files: packageFilesOf(result.after),
    conflicts: result.conflicts,
    resources: result.resources,
    lock: { ...input.upstream },
    upstreamChanges:
      lock.commit === input.upstream.commit
        ? undefined
        : await changesOf({
            repo: input.upstream.repo,
            directory: input.upstream.directory,
            from: lock.commit,
            to: input.upstream.commit,
            sides: result.upstream,
            parsed,
            cacheDir: input.cacheDir,
            cwd: input.cwd ?? NO_WORKING_DIRECTORY,
            env: input.env,
            trust: input.trust,
          }),
  };
}

function movedDuringRun(input: MaterializeInput, fetched: string): RunError {
  return new RunError(
    'upstream-moved',
    `${input.upstream.repo}: ${input.upstream.ref} moved during the run (resolved to ${input.upstream.commit.slice(0, 12)}, fetched ${fetched.slice(0, 12)}): the next run picks it up`,
  );
}
