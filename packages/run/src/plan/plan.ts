import { createHash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { hideCredentials, isFullCommit, isGitError, repositoryIdentity, type RemoteRef } from '@kdelta/git-source';
import { RunError } from '../errors.js';
import { PACKAGE_CONTEXT_FILE, PACKAGE_CONTEXT_NAME } from '@kdelta/kptfile-model';
import {
  expandPackageVariantSet,
  injectionInputs,
  upstreamRefCandidates,
  withPackageVariantDefaults,
  type KubeObject,
  type PackageVariant,
} from '@kdelta/variant-engine';
import {
  ControlError,
  describeSource,
  UPSTREAM_POLICY_ANNOTATION,
  UPSTREAM_PRERELEASES_ANNOTATION,
  type ControlConfig,
  type ControlIssue,
  type RepositorySpec,
  type Source,
} from '../control/control.js';
import { objectNameProblem } from './names.js';
import { followLatestRelease } from './releases.js';
import { checkPolicies } from '../policy/select.js';

/**
 * From control resources to one plan per variant: sets expanded, repositories looked up. What can
 * be checked without the network is checked here and reported as a ControlError (nothing runs);
 * what needs the upstream (does the revision exist?) is resolved per variant by `resolveUpstream`,
 * so one bad revision fails that variant alone.
 */

export type { UpstreamPolicy, VariantPlan } from './variant-plan.js';
import type { UpstreamPolicy, VariantPlan } from './variant-plan.js';

export interface Plan {
  readonly variants: readonly VariantPlan[];
  /** Downstream repositories the run looks at (for variants that are gone). */
  readonly downstreams: readonly { readonly repository: RepositorySpec; readonly url: string }[];
  readonly warnings: readonly string[];
}

export function repositoryUrl(repo: RepositorySpec, cwd: string): string {
  const r = repo.repo;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(r) || /^[^/]+@[^/:]+:/.test(r) || isAbsolute(r)) return r;
  return resolve(cwd, r);
}

function joinDir(...parts: string[]): string {
  return parts
    .flatMap((p) => p.split('/'))
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}

export function planRun(config: ControlConfig, options: { cwd: string }): Plan {
  const issues: ControlIssue[] = [];
  const warnings: string[] = [];
  const repos = new Map(config.repositories.map((r) => [`${r.namespace}/${r.name}`, r]));
  const candidates: { pv: PackageVariant; source: Source; policy: UpstreamPolicy; prereleases: boolean }[] = [];
  const policyOf = (obj: KubeObject, source: Source): UpstreamPolicy => {
    const v = obj.metadata?.annotations?.[UPSTREAM_POLICY_ANNOTATION];
    if (v === undefined) return 'pinned';
    if (v === 'highest-semver' || v === 'pinned') return v;
    issues.push({
      source,
      field: `metadata.annotations.${UPSTREAM_POLICY_ANNOTATION}`,
      message: `must be "pinned" or "highest-semver" (got "${v}")`,
    });
    return 'pinned';
  };
  const prereleasesOf = (obj: KubeObject, source: Source): boolean => {
    const v = obj.metadata?.annotations?.[UPSTREAM_PRERELEASES_ANNOTATION];
    if (v === undefined || v === 'false') return false;
    if (v === 'true') return true;
    issues.push({
      source,
      field: `metadata.annotations.${UPSTREAM_PRERELEASES_ANNOTATION}`,
      message: `must be "true" or "false" (got "${v}")`,
    });
    return false;
  };

  for (const { value: pv, source } of config.variants)
    candidates.push({ pv, source, policy: policyOf(pv, source), prereleases: prereleasesOf(pv, source) });
  for (const { value: pvs, source } of config.sets) {
    const policy = policyOf(pvs, source);
    const prereleases = prereleasesOf(pvs, source);
    const expanded = expandPackageVariantSet(pvs, { objects: config.objects, followsReleases: true });
    if (!expanded.ok) {
      for (const e of expanded.errors) {
        const m = /^(spec\.[^\s:]+)(?: \([^)]*\))?: (.*)$/s.exec(e);
        issues.push(m ? { source, field: m[1], message: m[2]! } : { source, message: e });
      }
      continue;
    }
    if (expanded.variants.length === 0) {
      issues.push({
        source,
        field: 'spec.targets',
        message: `selects nothing: ${expanded.warnings.join('; ') || 'no target generates a PackageVariant'}`,
      });
      continue;
    }
    for (const w of expanded.warnings) warnings.push(`${describeSource(source)}: ${w}`);
    for (const pv of expanded.variants) candidates.push({ pv, source, policy, prereleases });
  }

  const byName = new Map<string, Source>();
  const byDownstream = new Map<string, { name: string; repository: string }>();
  const variants: VariantPlan[] = [];
  for (const { pv: raw, source, policy, prereleases } of candidates) {
    const pv = withPackageVariantDefaults(raw);
    const name = pv.metadata?.name ?? '';
    const namespace = pv.metadata?.namespace || 'default';
    const before = byName.get(name);
    if (before) {
      issues.push({
        source,
        message: `PackageVariant "${name}" is also defined by ${describeSource(before)}: variant names must be unique`,
      });
      continue;
    }
    byName.set(name, source);
    const spec = pv.spec ?? {};
    const generated = source.kind === 'PackageVariantSet';
    // the name becomes a branch, a record file and an owner annotation: one spelling per variant
    const nameProblem = objectNameProblem(name);
    if (nameProblem) {
      issues.push(
        generated
          ? { source, field: 'spec.targets', message: `generates variant ${nameProblem}` }
          : { source, field: 'metadata.name', message: nameProblem },
      );
      continue;
    }
    const upRepo = repos.get(`${namespace}/${spec.upstream?.repo ?? ''}`);
    const downRepo = repos.get(`${namespace}/${spec.downstream?.repo ?? ''}`);
    if (!upRepo) {
      issues.push({
        source,
        field: 'spec.upstream.repo',
        message: `Repository "${spec.upstream?.repo ?? ''}" does not exist in namespace "${namespace}"`,
      });
    }
    if (!downRepo) {
      issues.push({
        source,
        field: generated ? 'spec.targets' : 'spec.downstream.repo',
        message: `Repository "${spec.downstream?.repo ?? ''}" does not exist in namespace "${namespace}"${generated ? ` (variant "${name}")` : ''}`,
      });
    }
    if (!upRepo || !downRepo) continue;
    // Two Repositories may name one repository (another spelling of its URL): the package is
    // known by the repository and its directory, not by the Repository's name.
    const downUrl = repositoryUrl(downRepo, options.cwd);
    const downDirectory = joinDir(downRepo.directory, spec.downstream?.package ?? '');
    const downstreamKey = `${repositoryIdentity(downUrl)}\0${downDirectory}`;
    const owner = byDownstream.get(downstreamKey);
    if (owner) {
      issues.push({
        source,
        message: `variants "${owner.name}" (Repository "${owner.repository}") and "${name}" (Repository "${downRepo.name}") both write package directory "${downDirectory || '.'}" of ${hideCredentials(downUrl)}: each would overwrite the other's proposal`,
      });
      continue;
    }
    byDownstream.set(downstreamKey, { name, repository: downRepo.name });
    const revision = spec.upstream?.revision;
    variants.push({
      name,
      variant: pv,
      source,
      upstreamField: 'spec.upstream',
      ...(generated ? { set: source.name } : {}),
      upstream: {
        repository: upRepo,
        url: repositoryUrl(upRepo, options.cwd),
        package: spec.upstream?.package ?? '',
        directory: joinDir(upRepo.directory, spec.upstream?.package ?? ''),
        revision: revision === undefined || revision === '' ? undefined : String(revision),
        policy,
        prereleases,
      },
      downstream: {
        repository: downRepo,
        url: downUrl,
        branch: downRepo.branch,
        package: spec.downstream?.package ?? '',
        directory: downDirectory,
      },
      objects: config.objects.filter((o) => (o.metadata?.namespace || 'default') === namespace),
    });
  }
  if (issues.length > 0) throw new ControlError(issues, config.texts);
  variants.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const downstreams = new Map<string, { repository: RepositorySpec; url: string }>();
  for (const r of config.repositories) {
    // Every Repository is looked at for variants that are gone, as Porch's deletion policy acts on
    // the PackageVariant whatever else targets its repository: retiring a repository's last
    // variant removes its package too. The owner and control annotations say which packages are ours.
    downstreams.set(r.name, { repository: r, url: repositoryUrl(r, options.cwd) });
  }
  // at most one policy per variant, every wave label known: alike in every shard, before any job
  checkPolicies({ variants }, config.policies, config.texts);
  return { variants, downstreams: [...downstreams.values()], warnings };
}

export interface ResolvedUpstream {
  /** The ref used: a tag, branch, or commit. */
  readonly ref: string;
  readonly kind: 'tag' | 'branch' | 'commit';
  readonly commit: string;
  /** Why this ref, for the proposal and `kdelta proposals` ("latest release v0.4.1 of catalog/bucket"). */
  readonly reason: string;
}

export type Resolution =
  | { readonly ok: true; readonly value: ResolvedUpstream }
  /** `code`: the job's failure code when it is not `upstream-unresolved` (`no-release`). */
  | { readonly ok: false; readonly error: string; readonly code?: string | undefined };

/**
 * Which ref and commit a variant's upstream names, from the upstream repository's refs (one
 * `ls-remote`): tag `<package>/<revision>`, else tag `<revision>`, else branch `<revision>`,
 * else a full commit id. No revision: the package's latest release, as Porch follows the latest
 * published revision (`followLatestRelease`: `<package>/v<N>`, else `<package>/vX.Y.Z`, else
 * `vX.Y.Z`), and a `no-release` failure when there is none. `highest-semver` takes the latest
 * release whatever the revision.
 */
export function resolveUpstream(plan: VariantPlan, refs: readonly RemoteRef[]): Resolution {
  const byName = new Map(refs.map((r) => [r.name, r.commit]));
  const { upstream } = plan;
  const where = `${describeSource(plan.source)}: ${plan.upstreamField}.revision`;
  if (upstream.policy === 'highest-semver' || upstream.revision === undefined)
    return followLatestRelease({ ...upstream, source: plan.source, upstreamField: plan.upstreamField }, refs);
  const tags = upstreamRefCandidates({ package: upstream.package, revision: upstream.revision });
  const named = `revision "${upstream.revision}"`;
  for (const t of tags) {
    const commit = byName.get(`refs/tags/${t}`);
    if (commit) return { ok: true, value: { ref: t, kind: 'tag', commit, reason: named } };
  }
  const branchCommit = byName.get(`refs/heads/${upstream.revision}`);
  if (branchCommit) return { ok: true, value: { ref: upstream.revision, kind: 'branch', commit: branchCommit, reason: named } };
  if (isFullCommit(upstream.revision))
    return { ok: true, value: { ref: upstream.revision, kind: 'commit', commit: upstream.revision.toLowerCase(), reason: named } };
  return {
    ok: false,
    error: `${where}: "${upstream.revision}" is not a tag (${tags.map((t) => `"${t}"`).join(' or ')}), a branch or a full commit of ${upstream.url}`,
  };
}

/**
 * A git-level failure of a variant's job (`git ls-remote failed: … does not appear to be a git
 * repository`, `branch "mian" does not exist in …`) said with the Repository resource it comes
 * from, its file and field, so a user knows which control file to fix. Which Repository: the one
 * whose URL the message names (the downstream's when both do). Other failures: the message as is.
 */
export function withRepositoryOf(plan: VariantPlan, error: unknown, message: string): string {
  const branchMissing = error instanceof RunError && error.code === 'branch-missing';
  if (!branchMissing && !isGitError(error)) return message;
  const names = (url: string) => [url, hideCredentials(url), repositoryIdentity(url)].some((u) => u !== '' && message.includes(u));
  const repository = names(plan.downstream.url)
    ? plan.downstream.repository
    : names(plan.upstream.url)
      ? plan.upstream.repository
      : undefined;
  if (!repository) return message;
  return `${describeSource(repository.source)}: ${branchMissing ? 'spec.git.branch' : 'spec.git.repo'}: ${message}`;
}

/**
 * Why the variant's mutations could not be applied, as the job reports it. A package without the
 * package context that `spec.packageContext` needs gets the two remedies: Porch creates that
 * ConfigMap only for a package new in a deployment repository, so either the
 * Repository says `deployment: true`, or the upstream package carries the ConfigMap.
 */
export function applyFailureMessage(
  plan: VariantPlan,
  failure: { readonly errors: readonly string[]; readonly file?: string | undefined; readonly code?: string | undefined },
): string {
  const text = failure.errors.join('; ');
  const said = failure.file && !text.startsWith(`${failure.file}:`) ? `${failure.file}: ${text}` : text;
  if (failure.code !== 'missing-file' || failure.file !== PACKAGE_CONTEXT_FILE) return said;
  const repository = plan.downstream.repository;
  const where = `${PACKAGE_CONTEXT_FILE} of ${hideCredentials(plan.upstream.url)} ${plan.upstream.directory || '/'}`;
  const deployment = (repository.object.spec as { deployment?: unknown } | undefined)?.deployment === true;
  return deployment
    ? `${said}. The package was not new, so it did not get one: add the "${PACKAGE_CONTEXT_NAME}" ConfigMap to the upstream package (${where}) or to the downstream package`
    : `${said}. Porch creates it only for a package new in a deployment repository: mark Repository "${repository.name}" (${describeSource(repository.source)}) with spec.deployment: true, or add the "${PACKAGE_CONTEXT_NAME}" ConfigMap to the upstream package (${where})`;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function hashOf(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}

/**
 * What a variant's result depends on, as one hash: the upstream (repository, directory, ref and
 * commit), the variant (name and spec, templates already rendered), the Repository objects it
 * targets (their spec: `deployment` gives a new package its package context), the objects its
 * injection reads (variant-engine's `injectionInputs`), and kdelta's version (the engine's output).
 * Nothing else of the control resources: a label on a Repository no variant reads, or an object
 * nothing injects, changes no fingerprint, so it neither turns an open proposal `updated` nor
 * proposes a declined one again. Equal fingerprints mean an equal result, so an open proposal
 * with this fingerprint needs nothing done.
 */
export function fingerprintOf(plan: VariantPlan, upstream: { readonly ref: string; readonly commit: string }, version: string): string {
  return hashOf({
    upstreamCommit: upstream.commit,
    upstream: {
      repo: plan.upstream.url,
      directory: plan.upstream.directory,
      ref: upstream.ref,
      repository: specOf(plan.upstream.repository),
    },
    name: plan.name,
    spec: plan.variant.spec ?? {},
    downstream: {
      repo: plan.downstream.url,
      branch: plan.downstream.branch,
      directory: plan.downstream.directory,
      repository: specOf(plan.downstream.repository),
    },
    injected: injectionInputs(plan.variant, plan.objects),
    version,
  }).slice(0, 32);
}

/** A Repository's spec (its labels select, they are not read by the variant it is selected for). */
function specOf(repository: RepositorySpec): unknown {
  return (repository.object as { spec?: unknown }).spec ?? {};
}
