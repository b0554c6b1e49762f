import { credentialsFor } from './auth.js';
import { assertContentSource, CREDENTIAL_REPOSITORIES_SETTING, type SourceTrust } from './trust.js';
import { GitError } from './errors.js';
import { readLocalRefs } from './local-refs.js';
import { runGit, WITHHELD_CREDENTIALS_ENV } from './exec.js';
import { type UrlCredentials, assertSafeArgument, isFullCommit, repoLocation, splitCredentials } from './url.js';

export interface RemoteOptions {
  /** Repository: https/ssh/file:// URL or a local path. */
  readonly repo: string;
  /** Directory that relative local paths are resolved against (default process.cwd()). */
  readonly cwd?: string;
  /** An access token for https (else KDELTA_GIT_TOKEN / GITHUB_TOKEN, else git's helpers). */
  readonly token?: string;
  /** What `token` is, for the message when the server refuses it ("the `token` input"). */
  readonly tokenName?: string | undefined;
  /**
   * A user and password for an http(s) `repo` given without them (credentials written into
   * `repo` itself take precedence). Passed to git in the environment only.
   */
  readonly credentials?: UrlCredentials;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Set when package content named `repo` (a nested Kptfile), not the user: the user's
   * credentials go only to the repositories `trust` holds, and a repository on this machine is refused
   * unless the user named it or allowed local upstreams (see {@link SourceTrust}).
   */
  readonly trust?: SourceTrust;
  /** The file that named `repo` (a Kptfile), for the message of a refusal. */
  readonly namedBy?: string;
}

export interface RemoteRef {
  /** Full ref name, e.g. `refs/heads/main`, `refs/tags/v1`. */
  readonly name: string;
  /** The commit it points to (annotated tags peeled). */
  readonly commit: string;
}

export type RefKind = 'branch' | 'tag' | 'commit';

export interface ResolvedRef {
  /** The ref as asked. */
  readonly ref: string;
  readonly kind: RefKind;
  /** Full ref name on the remote (`refs/tags/…`); absent for a commit. */
  readonly fullName?: string;
  /** Full 40-hex commit id; absent only for an abbreviated commit not resolvable remotely. */
  readonly commit?: string;
}

/**
 * Where the repository is (its URL without credentials: the only form that is stored, printed or
 * used as a cache key) and what git needs to reach it (the credentials, in the environment).
 */
export function remoteContext(options: RemoteOptions) {
  const location = repoLocation(options.repo, options.cwd);
  if (options.trust) assertContentSource(location, options.trust, options.namedBy);
  const creds = credentialsFor(location, {
    token: options.token,
    tokenName: options.tokenName,
    urlCredentials: splitCredentials(options.repo).credentials,
    userCredentials: options.credentials,
    env: options.env ?? process.env,
    trust: options.trust,
  });
  const env: Record<string, string | undefined> = { ...options.env, ...creds.env };
  if (creds.withheld) {
    env[WITHHELD_CREDENTIALS_ENV] =
      `${options.namedBy ? `${options.namedBy}: ` : ''}upstream repository "${location.url}" was read without credentials, as package content names it and you did not: if it is private, list it in ${CREDENTIAL_REPOSITORIES_SETTING} to send it yours`;
  }
  return { location, env, secrets: creds.secrets };
}

/** Every ref of the remote (`git ls-remote`), annotated tags peeled to their commit. */
export async function listRemoteRefs(options: RemoteOptions & { patterns?: readonly string[] }): Promise<RemoteRef[]> {
  const { location, env, secrets } = remoteContext(options);
  for (const p of options.patterns ?? []) assertSafeArgument(p, 'ref');
  // a repository on this machine: its files say what ls-remote would, without starting git
  if ((options.patterns ?? []).length === 0) {
    const local = await readLocalRefs(location, options.env);
    if (local) return local;
  }
  const { stdout } = await runGit(['ls-remote', '--', location.url, ...(options.patterns ?? [])], { env, secrets });
  return parseLsRemote(stdout);
}

export function parseLsRemote(stdout: string): RemoteRef[] {
  const direct = new Map<string, string>();
  const peeled = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^([0-9a-f]{40,64})\t(.+)$/.exec(line.trim());
    if (!m) continue;
    const [, sha, name] = m as unknown as [string, string, string];
    if (name.endsWith('^{}')) peeled.set(name.slice(0, -3), sha);
    else direct.set(name, sha);
  }
  return [...direct].map(([name, sha]) => ({ name, commit: peeled.get(name) ?? sha }));
}

/** Tags of the remote, short names (`v1`, `pkg/dir/v2`), with their commits, sorted by name. */
export async function listTags(options: RemoteOptions): Promise<RemoteRef[]> {
  const refs = await listRemoteRefs(options);
  return refs
    .filter((r) => r.name.startsWith('refs/tags/'))
    .map((r) => ({ name: r.name.slice('refs/tags/'.length), commit: r.commit }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The remote's default branch (what its HEAD points to), e.g. `main`. */
export async function defaultBranch(options: RemoteOptions): Promise<string> {
  const { location, env, secrets } = remoteContext(options);
  const { stdout } = await runGit(['ls-remote', '--symref', '--', location.url, 'HEAD'], { env, secrets });
  const m = /^ref:\s+refs\/heads\/(\S+)\s+HEAD$/m.exec(stdout);
  if (m?.[1]) return m[1];
  throw new GitError({ code: 'failed', message: `cannot tell the default branch of ${location.url}: the remote has no HEAD`, secrets });
}

/**
 * Candidate full names for `ref`, in git's order of precedence (tags before branches), with
 * the package-scoped tag `<packagePath>/<ref>` (Porch's revision tags) first when given.
 */
export function refCandidates(ref: string, packagePath?: string): string[] {
  const out: string[] = [];
  const dir = (packagePath ?? '').replace(/^\/+|\/+$/g, '');
  if (ref.startsWith('refs/')) out.push(ref);
  if (dir) out.push(`refs/tags/${dir}/${ref}`);
  out.push(`refs/tags/${ref}`, `refs/heads/${ref}`);
  return out;
}

/** Pick the remote ref that `ref` names among `refs`. */
export function pickRef(ref: string, refs: readonly RemoteRef[], packagePath?: string): ResolvedRef | undefined {
  const byName = new Map(refs.map((r) => [r.name, r.commit]));
  for (const name of refCandidates(ref, packagePath)) {
    const commit = byName.get(name);
    if (commit) {
      const kind: RefKind = name.startsWith('refs/tags/') ? 'tag' : name.startsWith('refs/heads/') ? 'branch' : 'tag';
      return { ref, kind, fullName: name, commit };
    }
  }
  return undefined;
}

/**
 * The commit `ref` names among a remote's refs, as `pkg get` and `pkg update` take it: a tag, a
 * branch, a full ref name, a full commit id, or an abbreviated commit id of a tag or branch tip
 * (one commit only). Undefined when none matches (an abbreviated id of an older commit needs a
 * fetch: see {@link resolveRef}).
 */
export function pickCommit(ref: string, refs: readonly RemoteRef[], packagePath?: string): string | undefined {
  const picked = pickRef(ref, refs, packagePath)?.commit ?? refs.find((r) => r.name === ref)?.commit;
  if (picked) return picked;
  if (isFullCommit(ref)) return ref.toLowerCase();
  if (!/^[0-9a-f]{4,39}$/i.test(ref)) return undefined;
  const id = ref.toLowerCase();
  const commits = new Set(refs.map((r) => r.commit.toLowerCase()).filter((c) => c.startsWith(id)));
  return commits.size === 1 ? [...commits][0] : undefined;
}

/**
 * Resolve a branch, tag (`<packagePath>/<ref>` or plain) or commit on the remote, asking the
 * remote every time (a moved tag is never served stale). A full commit id resolves to itself; an
 * abbreviated one that no ref matches comes back without `commit` (a fetch resolves it).
 */
export async function resolveRef(options: RemoteOptions & { ref: string; packagePath?: string }): Promise<ResolvedRef> {
  assertSafeArgument(options.ref, 'ref');
  if (isFullCommit(options.ref)) return { ref: options.ref, kind: 'commit', commit: options.ref.toLowerCase() };
  const refs = await listRemoteRefs(options);
  const picked = pickRef(options.ref, refs, options.packagePath);
  if (picked) return picked;
  if (/^[0-9a-f]{4,39}$/i.test(options.ref)) return { ref: options.ref, kind: 'commit' };
  const { location, secrets } = remoteContext(options);
  throw new GitError({
    code: 'unknown-revision',
    message: `unknown revision or path not in the working tree: "${options.ref}" is not a branch, tag or commit of ${location.url}`,
    secrets,
  });
}

/**
 * Whether a tag now points somewhere else than `lockedCommit` (a floating tag that moved).
 */
export async function detectMovedRef(
  options: RemoteOptions & { ref: string; lockedCommit: string; packagePath?: string },
): Promise<{ moved: boolean; commit: string | undefined; resolved: ResolvedRef }> {
  const resolved = await resolveRef(options);
  const commit = resolved.commit;
  return { moved: commit !== undefined && commit !== options.lockedCommit.toLowerCase(), commit, resolved };
}

/** A semantic version `vX.Y.Z` or `vX.Y.Z-pre.release` (the leading `v` optional, build metadata allowed). */
export interface SemanticVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release identifiers (`rc.1` → ['rc', '1']); empty for a release. */
  readonly prerelease: readonly string[];
}

const SEMVER_TAG =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export function parseSemanticVersion(text: string): SemanticVersion | undefined {
  const m = SEMVER_TAG.exec(text);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), prerelease: m[4] ? m[4].split('.') : [] };
}

/** semver.org precedence: a release sorts above its pre-releases; numeric identifiers below alphanumeric ones. */
export function compareSemanticVersions(a: SemanticVersion, b: SemanticVersion): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return Math.sign(b.prerelease.length - a.prerelease.length);
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i];
    const y = b.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Math.sign(Number(x) - Number(y));
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

export interface Release {
  /** The tag's short name (`free5gc-operator/v6`, `catalog/bucket/v0.4.1`, `v0.4.1`). */
  readonly tag: string;
  /** The version part of the tag (`v6`, `v0.4.1`). */
  readonly version: string;
  readonly commit: string;
  /** `package`: a tag `<packagePath>/v<N>` or `<packagePath>/vX.Y.Z`; `repository`: a plain `vX.Y.Z` (the package has none of its own). */
  readonly scope: 'package' | 'repository';
  /** Which naming the tag follows: the first of {@link RELEASE_CONVENTIONS} that has a tag. */
  readonly convention: ReleaseConvention;
}

/**
 * How releases are tagged, in the order they are looked for: Porch's (and Nephio's) revisions of
 * one package, `<package>/v<N>` with an integer N; kpt's semantic versions of one package,
 * `<package>/vX.Y.Z`; a semantic version of the whole repository, `vX.Y.Z`. A package's own tags
 * come first because a repository-wide release says nothing about which revision of this package
 * is the latest: Nephio's catalogs carry both, and the repository's `v1.0.1` is older than most
 * packages' `<package>/v<N>`.
 */
export const RELEASE_CONVENTIONS = ['revision', 'package-semver', 'repository-semver'] as const;
export type ReleaseConvention = (typeof RELEASE_CONVENTIONS)[number];

/** Porch's revision number: `v<N>`, N an integer without leading zeros. */
const REVISION_TAG = /^v(0|[1-9]\d*)$/;

/** The tag patterns a package's releases are looked for under, in order (`free5gc-operator/v<N>`, …, `vX.Y.Z`). */
export function releaseTagPatterns(packagePath: string | undefined): string[] {
  const dir = (packagePath ?? '').replace(/^\/+|\/+$/g, '');
  return RELEASE_CONVENTIONS.flatMap((convention) => {
    switch (convention) {
      case 'revision':
        return dir ? [`${dir}/v<N>`] : [];
      case 'package-semver':
        return dir ? [`${dir}/vX.Y.Z`] : [];
      case 'repository-semver':
        return ['vX.Y.Z'];
      default:
        return convention satisfies never;
    }
  });
}

/**
 * The latest release of a package among a remote's refs, as Porch follows the latest published
 * revision. The first convention of {@link RELEASE_CONVENTIONS} with a tag decides, and within it
 * the highest: `<packagePath>/v<N>` by N (`v10` after `v9`), else `<packagePath>/vX.Y.Z` by semantic
 * version, else the repository's plain `vX.Y.Z` (the `v` may be left out of a semantic version).
 * Pre-releases (`v1.0.0-rc.1`) count only with `prereleases`. None: undefined.
 */
export function latestRelease(
  refs: readonly RemoteRef[],
  options: { readonly packagePath?: string; readonly prereleases?: boolean } = {},
): Release | undefined {
  return listReleases(refs, options).at(-1);
}

/**
 * Every release of a package among a remote's refs, oldest first: the tags of the first convention
 * of {@link RELEASE_CONVENTIONS} that has one (as {@link latestRelease} picks the highest of them),
 * in that convention's order. An update policy chooses among them (a patch, not the latest major).
 */
export function listReleases(
  refs: readonly RemoteRef[],
  options: { readonly packagePath?: string; readonly prereleases?: boolean } = {},
): Release[] {
  const dir = (options.packagePath ?? '').replace(/^\/+|\/+$/g, '');
  // every tag under `prefix` whose rest (no `/`: `other/v1.0.0` is another package's) `parse` reads
  const pick = <V>(
    prefix: string,
    convention: ReleaseConvention,
    parse: (version: string) => V | undefined,
    compare: (a: V, b: V) => number,
  ): Release[] => {
    const found: { release: Release; version: V }[] = [];
    for (const r of refs) {
      if (!r.name.startsWith(`refs/tags/${prefix}`)) continue;
      const version = r.name.slice(`refs/tags/${prefix}`.length);
      if (version.includes('/')) continue;
      const parsed = parse(version);
      if (parsed === undefined) continue;
      const scope = convention === 'repository-semver' ? 'repository' : 'package';
      found.push({ release: { tag: r.name.slice('refs/tags/'.length), version, commit: r.commit, scope, convention }, version: parsed });
    }
    // stable: of two tags of one version (`v1.0.0` and `1.0.0`), the first listed stays the lower
    return found
      .map((f, i) => ({ ...f, i }))
      .sort((a, b) => compare(a.version, b.version) || b.i - a.i)
      .map((f) => f.release);
  };
  const semver = (version: string): SemanticVersion | undefined => {
    const parsed = parseSemanticVersion(version);
    return parsed && (parsed.prerelease.length === 0 || options.prereleases === true) ? parsed : undefined;
  };
  const revision = (version: string): number | undefined => {
    const m = REVISION_TAG.exec(version);
    return m ? Number(m[1]) : undefined;
  };
  const find = (convention: ReleaseConvention): Release[] => {
    switch (convention) {
      case 'revision':
        return dir ? pick(`${dir}/`, convention, revision, (a, b) => a - b) : [];
      case 'package-semver':
        return dir ? pick(`${dir}/`, convention, semver, compareSemanticVersions) : [];
      case 'repository-semver':
        return pick('', convention, semver, compareSemanticVersions);
      default:
        return convention satisfies never;
    }
  };
  for (const convention of RELEASE_CONVENTIONS) {
    const found = find(convention);
    if (found.length > 0) return found;
  }
  return [];
}
