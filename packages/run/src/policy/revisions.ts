import { compareSemanticVersions, parseSemanticVersion, type Release, type SemanticVersion } from '@kdelta/git-source';
import { formatDuration } from './duration.js';
import { globMatch } from './glob.js';
import type { DownstreamPolicy, DownstreamState, PolicyRevision, UpdatePolicy, UpdateType } from './policy.js';

/**
 * Which release an update policy lets a variant be proposed, from the upstream package's releases
 * (git-source's `listReleases`), what the downstream has (DownstreamState), the fleet's policy and
 * the team's narrowing: the highest release newer than the current one whose semver step the
 * policy (and the team) allows, that neither ignores, and that is old enough. With `separateMajor`
 * a major release is chosen apart (its own proposal) and the main proposal keeps to the current
 * major. When none is due, `why` says what holds the newer ones back. Pure: the tags' dates are
 * given (read by the caller only for {@link releaseCandidates}, and only when an age is asked).
 */

export interface RevisionInput {
  /** The upstream package's releases, oldest first (`listReleases`, pre-releases as the variant counts them). */
  readonly releases: readonly Release[];
  /** What the downstream's base branch has of the package (none: a new package). */
  readonly current: Pick<DownstreamState, 'ref' | 'commit'> | undefined;
  readonly policy: Pick<UpdatePolicy, 'name' | 'updateTypes' | 'ignore' | 'minimumReleaseAgeMs' | 'separateMajor'>;
  /** The team's narrowing (its ignore, update types and minimum age add to the fleet's). */
  readonly team?: Pick<DownstreamPolicy, 'file' | 'ignore' | 'updateTypes' | 'minimumReleaseAgeMs'> | undefined;
  /** The upstream package as messages name it (`blueprints/basens`). */
  readonly package: string;
  readonly now: Date;
  /** When each tag was made (its tag's date, else its commit's), by tag name: needed for the candidates when an age is asked. */
  readonly dates?: ReadonlyMap<string, Date> | undefined;
}

export interface RevisionChoice {
  /** The release to propose on the variant's branch (undefined: none is due). */
  readonly target?: PolicyRevision | undefined;
  /** A major release proposed on its own branch (separateMajor). */
  readonly major?: PolicyRevision | undefined;
  /** Why no release is proposed (or why a newer one waits), in words. */
  readonly why?: string | undefined;
}

type Version = { readonly kind: 'semver'; readonly semver: SemanticVersion } | { readonly kind: 'revision'; readonly n: number };

/** A release's version, as its convention orders it: Porch's `v<N>` by N, the others by semver. */
function versionOf(release: Pick<Release, 'version' | 'convention'>): Version | undefined {
  if (release.convention === 'revision') {
    const m = /^v(0|[1-9]\d*)$/.exec(release.version);
    return m ? { kind: 'revision', n: Number(m[1]) } : undefined;
  }
  const semver = parseSemanticVersion(release.version);
  return semver ? { kind: 'semver', semver } : undefined;
}

function compareVersions(a: Version, b: Version): number | undefined {
  if (a.kind === 'revision' && b.kind === 'revision') return Math.sign(a.n - b.n);
  if (a.kind === 'semver' && b.kind === 'semver') return compareSemanticVersions(a.semver, b.semver);
  return undefined;
}

/**
 * The semver step from `from` to `to`. Porch's revisions (`v<N>`) carry none: update types do not
 * apply to them. From a ref that is no version (a branch, a commit), the step is not known and
 * counts as the widest, a major.
 */
function updateTypeOf(from: Version | undefined, to: Version): UpdateType | undefined {
  if (to.kind === 'revision') return undefined;
  if (from?.kind !== 'semver') return 'major';
  if (to.semver.major !== from.semver.major) return 'major';
  if (to.semver.minor !== from.semver.minor) return 'minor';
  return 'patch';
}

/** Where the downstream is among the releases: the release its lock commit or ref names, else its ref read as a version. */
function currentVersion(releases: readonly Release[], current: RevisionInput['current']): { version?: Version; label: string } | undefined {
  if (!current || (current.ref === undefined && current.commit === undefined)) return undefined;
  const byRef = current.ref === undefined ? undefined : releases.find((r) => r.tag === current.ref || r.version === current.ref);
  const byCommit = byRef ?? (current.commit === undefined ? undefined : releases.findLast((r) => r.commit === current.commit));
  if (byCommit) return { version: versionOf(byCommit), label: byCommit.version };
  const ref = current.ref ?? '';
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  const convention = releases[0]?.convention ?? 'repository-semver';
  const version = versionOf({ version: last, convention }) ?? versionOf({ version: last, convention: 'repository-semver' });
  return { version, label: ref || (current.commit ?? '').slice(0, 12) };
}

/** `v2.*`, `1.4.0`, `basens/v1.4.0`: the pattern of a policy's `ignore` that matches a tag, its version, or the version without its `v`. */
export function ignores(patterns: readonly string[], release: Pick<Release, 'tag' | 'version'>): string | undefined {
  const names = [release.tag, release.version, release.version.replace(/^v/, '')];
  return patterns.find((p) => names.some((n) => globMatch(p, n)));
}

/** An age as a policy writes a duration, to the minute (`2h`, `1d3h20m`). */
function ageOf(ms: number): string {
  return ms < 60_000 ? 'less than a minute' : formatDuration(Math.floor(ms / 60_000) * 60_000);
}

/** An instant to the minute: `2026-12-02T10:00Z`. */
function minute(date: Date): string {
  return date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z');
}

interface Newer {
  readonly release: Release;
  readonly updateType: UpdateType | undefined;
  /** Why it may not be proposed whatever its age (an update type not allowed, ignored). */
  readonly excluded?: string | undefined;
}

/** The releases newer than what the downstream has, highest first, each with its step and what excludes it. */
function newerReleases(input: RevisionInput): Newer[] {
  const { releases, policy, team } = input;
  const current = currentVersion(releases, input.current);
  const allowedTypes = [...policy.updateTypes].filter((t) => team?.updateTypes === undefined || team.updateTypes.has(t));
  const out: Newer[] = [];
  for (const release of [...releases].reverse()) {
    const version = versionOf(release);
    if (!version) continue;
    if (current?.version) {
      const order = compareVersions(version, current.version);
      if (order !== undefined && order <= 0) break;
    }
    // a new package takes what it is given: there is no step to compare
    const updateType = current ? updateTypeOf(current.version, version) : undefined;
    const ignoredBy = ignores(policy.ignore, release);
    const teamIgnored = team ? ignores(team.ignore, release) : undefined;
    let excluded: string | undefined;
    if (ignoredBy !== undefined) excluded = `${release.version} is ignored by policy ${policy.name} ("${ignoredBy}")`;
    else if (teamIgnored !== undefined) excluded = `${release.version} is ignored by ${team!.file} ("${teamIgnored}")`;
    else if (updateType !== undefined && !policy.updateTypes.has(updateType))
      excluded = `${release.version} is a ${updateType} update, and policy ${policy.name} allows ${listed(policy.updateTypes)}`;
    else if (updateType !== undefined && !allowedTypes.includes(updateType))
      excluded = `${release.version} is a ${updateType} update, and ${team!.file} allows ${listed(team!.updateTypes!)}`;
    out.push({ release, updateType, excluded });
  }
  return out;
}

function listed(types: ReadonlySet<UpdateType>): string {
  const order: readonly UpdateType[] = ['patch', 'minor', 'major'];
  const named = order.filter((t) => types.has(t));
  return named.length > 0 ? named.join(', ') : 'no update';
}

/** The releases that may be proposed but for their age, highest first: the tags whose dates a minimum release age needs. */
export function releaseCandidates(input: RevisionInput): Release[] {
  return newerReleases(input)
    .filter((n) => n.excluded === undefined)
    .map((n) => n.release);
}

/** The minimum release age that applies: the fleet's, or the team's when longer. */
function minimumAge(input: RevisionInput): { ms: number; by: string } {
  const team = input.team?.minimumReleaseAgeMs;
  if (team !== undefined && team > input.policy.minimumReleaseAgeMs) return { ms: team, by: input.team!.file };
  return { ms: input.policy.minimumReleaseAgeMs, by: `policy ${input.policy.name}` };
}

/** The policy's choice for one variant: see {@link RevisionChoice}. */
export function chooseRevisions(input: RevisionInput): RevisionChoice {
  const newer = newerReleases(input);
  const age = minimumAge(input);
  const current = currentVersion(input.releases, input.current);
  // what holds each newer release back, by its place among them (0: the highest)
  const held: { readonly at: number; readonly text: string }[] = [];
  const eligible: Newer[] = [];
  for (const [at, n] of newer.entries()) {
    const hold = (text: string) => held.push({ at, text });
    if (n.excluded !== undefined) {
      hold(n.excluded);
      continue;
    }
    if (age.ms > 0) {
      const made = input.dates?.get(n.release.tag);
      // a tag whose date is not known is not known to be old enough
      if (made === undefined) {
        hold(`${n.release.version}: its date is not known, and ${age.by} asks ${formatDuration(age.ms)}`);
        continue;
      }
      const old = input.now.getTime() - made.getTime();
      if (old < age.ms) {
        const from = new Date(made.getTime() + age.ms);
        hold(`${n.release.version} is ${ageOf(old)} old, ${age.by} asks ${formatDuration(age.ms)}: proposed from ${minute(from)}`);
        continue;
      }
    }
    eligible.push(n);
  }
  const separate = input.policy.separateMajor && current !== undefined;
  const major = separate ? eligible.find((n) => n.updateType === 'major') : undefined;
  const target = eligible.find((n) => !separate || n.updateType !== 'major');
  const revision = (n: Newer, what: string): PolicyRevision => {
    // what waits above it, said with the reason it was not taken
    const above = held.filter((h) => h.at < newer.indexOf(n)).map((h) => h.text);
    const waits = above.length > 0 ? `; newer ones wait: ${above.slice(0, 2).join('; ')}` : '';
    const step = n.updateType ? `, a ${n.updateType} update` : '';
    return {
      ref: n.release.tag,
      commit: n.release.commit,
      reason: `${what} ${n.release.version} of ${input.package}${step}, allowed by policy ${input.policy.name}${waits}`,
      ...(n.updateType ? { updateType: n.updateType } : {}),
    };
  };
  const words = held.map((h) => h.text);
  const why =
    target !== undefined
      ? undefined
      : major !== undefined
        ? `${major.release.version} is a major update: proposed on its own${words.length > 0 ? `; ${words.slice(0, 2).join('; ')}` : ''}`
        : words.length > 0
          ? words.slice(0, 3).join('; ')
          : current
            ? `no release of ${input.package} is newer than ${current.label}`
            : `${input.package} has no release`;
  return {
    ...(target ? { target: revision(target, 'release') } : {}),
    ...(major ? { major: revision(major, 'major release') } : {}),
    ...(why ? { why } : {}),
  };
}
