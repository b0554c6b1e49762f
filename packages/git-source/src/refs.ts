import { credentialsFor } from './auth.js';
import { assertContentSource, type SourceTrust } from './trust.js';
import { GitError } from './errors.js';
import { runGit } from './exec.js';
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
   * credentials go only to the hosts `trust` holds, and a repository on this machine is refused
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
  return { location, env: { ...options.env, ...creds.env }, secrets: creds.secrets };
}

/** Every ref of the remote (`git ls-remote`), annotated tags peeled to their commit. */
export async function listRemoteRefs(options: RemoteOptions & { patterns?: readonly string[] }): Promise<RemoteRef[]> {
  const { location, env, secrets } = remoteContext(options);
  for (const p of options.patterns ?? []) assertSafeArgument(p, 'ref');
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
