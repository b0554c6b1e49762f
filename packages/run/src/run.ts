import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  cloneBare,
  defaultCacheDir,
  hideCredentials,
  listRemoteRefs,
  sourceTrust,
  stopRunningGit,
  type Author,
  type RemoteRef,
} from '@kdelta/git-source';
import { makeTempDir, removeTempDir, sweepAbandonedWork } from '@kdelta/kptfile-model';
import { Budget } from './forges/budget.js';
import { createLocalForge } from './forges/local.js';
import { checkOutputPath } from '@kdelta/kptfile-model';
import type { Forge, ProposalTarget } from './forges/forge.js';
import type { GitHubForgeOptions, GitHubRunOptions } from './forges/github/github.js';
import { loadControl } from './control/control.js';
import { interrupted, type JobContext } from './context.js';
import { findRemovals, proposedRemovals, removalLabel, removalTarget, runRemovalJob, type Removal } from './jobs/removal.js';
import { removalGuard } from './plan/removal-guard.js';
import { runVariantJob, variantTarget } from './jobs/variant.js';
import { findRetiredDrafts, retiredLabel, runRetireJob, type RetiredDraft } from './jobs/retire.js';
import { deferredResult, failure, resultWithoutCredentials, type RunReport, type VariantResult } from './report/result.js';
import { checkoutMirror, mirrorHeads, type Mirror } from './propose/workspace.js';
import { createPackageUpdateMaterialize, type Materialize } from './jobs/materialize.js';
import { findControlIdentity } from './control/ownership.js';
import { findMergedRemovals, type MergedRemoval, recordMergedRemoval } from './propose/settle.js';
import { storedRemovals, storeRemovals } from './plan/removal-scan.js';
import { hashOf, planRun, repositoryUrl, type VariantPlan } from './plan/plan.js';
import { inShard, type Shard } from './plan/shard.js';
import { pool } from './pool.js';
import { findControlRepository, type ControlRepository } from './control/control-repository.js';
import { findUpdatePlans, runUpdateJob, updateTarget, type UpdatePlan } from './jobs/update.js';
import { describeCollision, findCollisions, type PlannedProposal } from './plan/names.js';
import { RunError } from './errors.js';
import { DEFAULT_BRANCH_PREFIX } from './settings/branch-prefix.js';
import {
  type CheckedSettings,
  DEFAULT_AUTHOR,
  DEFAULT_CONCURRENCY,
  normaliseSettings,
  overSettings,
  resolveSettings,
  type RunMode,
} from './settings/settings.js';
import { optionSettings } from './settings/settings-sources.js';
import { scopeToUpstreamRef, type UpstreamRef, type UpstreamScope } from './preview/preview-scope.js';
import { githubRepoOf } from './forges/github/repo.js';
import { jobKey, NO_TICKS, type DashboardTicks } from './dashboard/dashboard.js';
import {
  dashboardRepositoryProblem,
  dashboardTarget,
  openDashboard,
  type DashboardOptions,
  type DashboardReport,
  type OpenedDashboard,
} from './dashboard/dashboard-run.js';

export const KDELTA_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

export const DEFAULT_CONFIG_DIR = '.kdelta';
export { DEFAULT_AUTHOR, DEFAULT_BRANCH_PREFIX, DEFAULT_CONCURRENCY, type RunMode };

export type RunProgress =
  | { readonly type: 'planned'; readonly total: number }
  | { readonly type: 'done'; readonly result: VariantResult; readonly done: number; readonly total: number };

export interface RunOptions {
  /** The control repository's work tree: relative paths are resolved against it. */
  readonly cwd: string;
  /**
   * The settings as a door (the CLI's flags, the Action's inputs) read and checked them: taken as
   * they are, over the loose options below, which a library caller may give instead (checked here
   * by the same rules).
   */
  readonly settings?: CheckedSettings | undefined;
  /** Config directory (default `.kdelta`). */
  readonly config?: string | undefined;
  /** A forge, or `local` (default): proposals as files under `proposalsDir`. */
  readonly forge?: Forge | 'local' | 'github' | undefined;
  /** The github forge's pull request options and connection (used when forge is 'github'). */
  readonly github?: (GitHubRunOptions & Pick<GitHubForgeOptions, 'pacing' | 'clock' | 'onToken'>) | undefined;
  /** Proposal branches are `<branchPrefix><variant>` (default `kdelta/`). */
  readonly branchPrefix?: string | undefined;
  /**
   * Content-creating API requests this run may make (github forge; default 400, GitHub's ~500 an
   * hour less a margin). When spent, the variants left are reported as 'deferred'.
   */
  readonly budget?: number | undefined;
  /**
   * Removals this run may newly make for gone variants (default 5): packages to delete or orphan
   * and open proposals to close, counted on the whole plan (alike in every shard), removal
   * proposals already open left out (plan/removal-guard.ts). When more are due it makes none of
   * them, does every other job, and reports each as failed (`removals-held`).
   */
  readonly maxRemovals?: number | undefined;
  /** The local forge's directory (default `<config>/proposals`). */
  readonly proposalsDir?: string | undefined;
  readonly mode?: RunMode | undefined;
  /** Compute everything, write nothing (no push, no proposal). */
  readonly dryRun?: boolean | undefined;
  /**
   * A preview of an upstream ref (preview.ts): only the variants of that upstream run, pinned to
   * the ref's commit; no package update or removal is looked for. Use with `dryRun`.
   */
  readonly upstreamRef?: UpstreamRef | undefined;
  readonly shard?: Shard | string | undefined;
  readonly concurrency?: number | undefined;
  /** Gets or updates a package (default: package-update'''s get and 3-way update). */
  readonly materialize?: Materialize | undefined;
  /** Render the Kptfile pipeline after the mutations (default true). */
  readonly render?: boolean | undefined;
  /** Let the pipelines' `exec:` functions run (default false: such a render fails, and is reported). */
  readonly allowExec?: boolean | undefined;
  /**
   * The container images the pipelines may run (patterns, see fn-render's `imageAllowed`; default:
   * kpt's function catalogues). A preview of an upstream ref (`upstreamRef`) runs none unless given.
   */
  readonly allowedImages?: readonly string[] | undefined;
  /**
   * Let package content (a nested Kptfile) name upstream repositories on this machine (default:
   * `KDELTA_ALLOW_LOCAL_UPSTREAMS=1` in `env`, else refused: their files would be pushed).
   */
  readonly allowLocalUpstreams?: boolean | undefined;
  /** Whole hosts that get the run's credentials (the older form of `credentialRepositories`). */
  readonly credentialHosts?: readonly string[] | undefined;
  /**
   * More repositories that get the run's credentials when package content names them (besides
   * `KDELTA_CREDENTIAL_REPOSITORIES`): `owner/repo`, `owner/*`, `host/path/repo`, a URL, or a
   * whole host written as one (git-source's `parseRepositoryPattern`).
   */
  readonly credentialRepositories?: readonly string[] | undefined;
  readonly author?: Author | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** git-source's cache of upstream repositories. */
  readonly cacheDir?: string | undefined;
  readonly onProgress?: ((event: RunProgress) => void) | undefined;
  /**
   * Stops the run: no job starts after it, a running job stops at its next step, and the git
   * processes of this process are ended; the run then rejects with a RunError `interrupted`, its
   * work directories removed. Proposals already made stay as they are (each is whole).
   */
  readonly signal?: AbortSignal | undefined;
  /** Recorded in fingerprints and proposals (default: this package's version). */
  readonly version?: string | undefined;
  /**
   * The fleet dashboard (default: kept, except in a dry run): an issue of the control repository
   * on GitHub, `<proposalsDir>/dashboard.md` on the local forge; `false`: none.
   */
  readonly dashboard?: DashboardOptions | false | undefined;
}

/** A removal the run did not start: its failure, with the reason. */
function notRun(r: { variant: string; downstream: string }, dryRun: boolean, code: string, why: string): VariantResult {
  return { variant: r.variant, downstream: r.downstream, dryRun, conflicts: [], conflictCount: 0, ...failure(code, why) };
}

function memo<T>(make: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>();
  return (key) => {
    let hit = cache.get(key);
    if (!hit) {
      hit = make(key);
      cache.set(key, hit);
    }
    return hit;
  };
}

/**
 * `kdelta run`: control resources → variants → one job each → proposals. Bad control resources
 * throw a ControlError before anything is read from or written to a repository; after that,
 * every variant ends as a result value and the run itself does not throw for one of them.
 */
export async function run(options: RunOptions): Promise<RunReport> {
  const configArg = options.config ?? DEFAULT_CONFIG_DIR;
  // a bad option stops the run before anything is read
  const runOptionSettings = normaliseSettings(
    optionSettings({ ...options, forge: typeof options.forge === 'string' ? options.forge : undefined }),
  );
  const door = options.settings ? overSettings(options.settings, runOptionSettings) : runOptionSettings;
  const dashboardRepository = options.dashboard ? options.dashboard.repository : undefined;
  const repositoryProblem = dashboardRepository !== undefined ? dashboardRepositoryProblem(dashboardRepository) : undefined;
  if (repositoryProblem) throw new RunError('invalid-option', `run option dashboard.repository: ${repositoryProblem}`);
  const control = await loadControl({ dir: resolve(options.cwd, configArg), display: configArg });
  const plan = planRun(control, { cwd: options.cwd });
  // the rules of a flag, an input and RunSettings, and the one precedence (settings.ts)
  const settings = resolveSettings(door, control.settings, { config: configArg });
  const { mode, shard, concurrency, branchPrefix } = settings;
  const forgeChoice = typeof options.forge === 'object' ? options.forge : settings.forge;
  const env = options.env ?? process.env;
  const proposalsDir = resolve(options.cwd, settings.proposalsDir);
  if (forgeChoice === 'local' && !settings.dryRun) {
    const origin = settings.origins.proposalsDir;
    await checkOutputPath({
      path: proposalsDir,
      shown: settings.proposalsDir,
      // read as "<what> <path>: <why>"
      what: origin?.type === 'field' ? `RunSettings ${origin.field}` : origin?.type === 'option' ? origin.name : 'the proposals directory',
      kind: 'directory',
    });
  }
  // a budget nobody chose is the default, which a server without rate limits lifts (Budget)
  const budget =
    forgeChoice === 'github' ? new Budget(settings.origins.budget?.type === 'default' ? undefined : settings.budget) : undefined;
  const connection = options.github ?? {};
  const forge =
    forgeChoice === 'local'
      ? createLocalForge({
          dir: proposalsDir,
          displayRoot: options.cwd,
          branchPrefix,
        })
      : forgeChoice === 'github'
        ? // loaded only for GitHub: a local run never loads Octokit
          (await import('./github.js')).createGitHubForge({
            ...definedOnly({
              token: connection.token,
              apiUrl: connection.apiUrl,
              serverUrl: connection.serverUrl,
              graphqlUrl: connection.graphqlUrl,
              app: connection.app,
              tokenName: connection.tokenName,
              pacing: connection.pacing,
              clock: connection.clock,
              onToken: connection.onToken,
            }),
            ...settings.github,
            env,
            budget,
            branchPrefix,
          })
        : forgeChoice;
  const warnings = [...plan.warnings];

  // The repositories the user named, and so the only ones the run's credentials go to: every
  // Repository of the control resources, and the patterns listed. A repository only a package's
  // content names gets none, even on the forge's server (git-source's SourceTrust): there, "the
  // same host" is every repository the token can read.
  const trust = sourceTrust({
    named: control.repositories.map((r) => repositoryUrl(r, options.cwd)),
    repositories: [...settings.credentialRepositories, ...settings.credentialHosts],
    // `owner/repo` names a repository of the GitHub the run proposes on
    githubServer: forge.name === 'github' ? forge.serverUrl : undefined,
    // the forge's token for its own server, for fetches as for ls-remote (only on the hosts above)
    tokenFor: (url) => forge.gitToken?.(url),
    tokenName: (url) => forge.gitTokenName?.(url),
    cwd: options.cwd,
    env,
    ...(settings.allowLocalUpstreams !== undefined ? { allowLocal: settings.allowLocalUpstreams } : {}),
  });
  const tokenFor = (url: string): { token?: string; tokenName?: string | undefined } => {
    const token = forge.gitToken?.(url);
    return token ? { token, tokenName: forge.gitTokenName?.(url) } : {};
  };
  const controlId = await findControlIdentity(options.cwd, resolve(options.cwd, configArg));
  // What killed runs left behind goes first (their pid in the directory's name no longer runs);
  // this run's directory is registered, so a SIGINT or SIGTERM handler removes it too.
  sweepAbandonedWork();
  const runDir = makeTempDir(tmpdir(), 'run');
  const stopGit = () => stopRunningGit();
  options.signal?.addEventListener('abort', stopGit, { once: true });
  let jobs = 0;
  // One `ls-remote` per repository and run: an upstream's tags, a downstream's branches.
  const remoteRefs = memo<readonly RemoteRef[]>(async (url) => {
    // a GitHub App's token for the repository's owner: a private upstream on the same server
    await forge.prepareGitToken?.(url).catch(() => {});
    return listRemoteRefs({ repo: url, cwd: options.cwd, env, ...tokenFor(url) });
  });
  // The dashboard's ticks are read once, before any job: they decide what this run does first.
  let dashboard: OpenedDashboard | undefined;
  let dashboardReport: DashboardReport | undefined;
  if (!settings.dryRun && !options.upstreamRef && options.dashboard !== false) {
    const repository = forge.name === 'github' ? (dashboardRepository ?? (await githubControlRepository(options.cwd, forge))) : undefined;
    if (forge.name === 'github' && repository === undefined) {
      dashboardReport = {
        outcome: 'skipped',
        reason: 'the control repository on GitHub is not known: give it (--dashboard-repo owner/name; the Action gives GITHUB_REPOSITORY)',
        ticks: { retry: [], allowRemovals: [], repropose: [] },
      };
    } else {
      const opened = await openDashboard(forge, dashboardTarget(repository, mode, shard), budget);
      if ('opened' in opened) dashboard = opened.opened;
      else {
        dashboardReport = opened.skipped;
        if (opened.warning) warnings.push(opened.warning);
      }
    }
  }
  const ticks: DashboardTicks = dashboard?.ticks ?? NO_TICKS;
  const ctx: JobContext = {
    version: options.version ?? KDELTA_VERSION,
    ...(ticks.repropose.size > 0 ? { repropose: ticks.repropose } : {}),
    dryRun: settings.dryRun,
    forge,
    materialize: options.materialize ?? createPackageUpdateMaterialize(),
    render: options.render ?? true,
    allowExec: settings.allowExec,
    // an upstream ref under preview is anyone's pull request: its pipelines run no container
    // image unless the user allowed some for it (built-ins still render the catalogue's functions)
    allowedImages: settings.allowedImages ?? (options.upstreamRef ? [] : undefined),
    author: settings.author,
    env,
    trust,
    cacheDir: options.cacheDir,
    branchPrefix,
    signal: options.signal,
    budget,
    control: controlId,
    checkout: async (url, base, head, name) => {
      const mirror = await ctx.mirror(url);
      const dir = join(runDir, 'jobs', `${++jobs}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`);
      await mkdir(join(runDir, 'jobs'), { recursive: true });
      return checkoutMirror(mirror, url, base, head, dir);
    },
    upstreamRefs: remoteRefs,
    heads: async (url) => headsOf(await remoteRefs(url)),
    mirror: memo<Mirror>(async (url) => {
      const dir = join(runDir, 'mirrors', `${hashOf(url).slice(0, 16)}.git`);
      await mkdir(join(runDir, 'mirrors'), { recursive: true });
      await forge.prepareGitToken?.(url);
      await cloneBare({ repo: url, dest: dir, cwd: options.cwd, env, ...tokenFor(url) });
      return { dir, heads: await mirrorHeads(dir) };
    }),
  };

  try {
    const scope: UpstreamScope | undefined = options.upstreamRef
      ? await scopeToUpstreamRef(plan.variants, options.upstreamRef, ctx.upstreamRefs)
      : undefined;
    const variants = retriedFirst(
      mode === 'updates' ? [] : (scope?.variants ?? plan.variants).filter((v) => inShard(v.name, shard)),
      (v) => jobKey(v.name, variantLabel(v)),
      ticks,
    );
    const total = { n: variants.length };
    let done = 0;
    const report = (raw: VariantResult) => {
      const result = resultWithoutCredentials(raw);
      options.onProgress?.({ type: 'done', result, done: ++done, total: total.n });
      return result;
    };
    // Once the budget is spent no job starts: each is reported deferred for the next run.
    const unlessSpent = (variant: string, downstream: string, job: () => Promise<VariantResult>) => async (): Promise<VariantResult> =>
      budget?.exhausted ? deferredResult({ variant, downstream, dryRun: ctx.dryRun }) : job();
    // Update mode: the control repository's own packages with an upstream.
    let updates: UpdatePlan[] = [];
    let control: ControlRepository | undefined;
    if (mode !== 'variants' && !scope) {
      const found = await findControlRepository(options.cwd);
      if (!found.ok) warnings.push(`update mode skipped: ${found.reason}`);
      else {
        control = found.value;
        try {
          const c = control;
          updates = retriedFirst(
            (await findUpdatePlans(await ctx.mirror(control.url), control, warnings)).filter((u) => inShard(u.name, shard)),
            (u) => jobKey(u.name, updateLabel(c, u)),
            ticks,
          );
        } catch (error) {
          warnings.push(
            `update mode skipped: cannot read the control repository (${control.url}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
          );
        }
      }
    }
    // Packages of variants that are gone, found before any job runs: every proposal of the run is
    // known before the first push, so two that would overwrite each other stop it first.
    const names = new Set(plan.variants.map((v) => v.name));
    let removals: Removal[] = [];
    let drafts: RetiredDraft[] = [];
    if (mode !== 'updates' && !scope) {
      const cacheRoot = options.cacheDir ?? defaultCacheDir(env);
      const found = await pool(plan.downstreams, concurrency, options.signal, async (d) => {
        const downstream = { repository: d.repository.name, url: d.url, branch: d.repository.branch, directory: d.repository.directory };
        try {
          const removed = await removalsOf(ctx, cacheRoot, downstream, names, controlId);
          // a gone variant's proposal that was never merged: closed (one whose package is on the
          // base is a removal's). Only a proposal branch of no current variant needs a clone.
          const gone = [...(await ctx.heads(d.url)).keys()].some(
            (h) => h.startsWith(branchPrefix) && h !== downstream.branch && !names.has(h.slice(branchPrefix.length)),
          );
          const retired = gone ? await findRetiredDrafts(ctx, await ctx.mirror(d.url), downstream, names, controlId) : [];
          const removing = new Set(removed.map((r) => r.variant));
          return { removals: removed, drafts: retired.filter((r) => !removing.has(r.variant)) };
        } catch (error) {
          return {
            removals: [],
            drafts: [],
            warning: `Repository "${d.repository.name}" (${d.url}): cannot look for packages of removed variants: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
          };
        }
      });
      for (const f of found) {
        removals.push(...f.removals);
        drafts.push(...f.drafts);
        if (f.warning) warnings.push(f.warning);
      }
    }
    // The removal guard, decided on the whole plan (alike in every shard): this shard's part of it runs.
    const guard = removalGuard({
      removals,
      drafts,
      proposed: removals.length + drafts.length > settings.maxRemovals ? await proposedRemovals(ctx, removals) : new Set(),
      max: settings.maxRemovals,
      allowed: ticks.allowRemovals,
      mine: (variant) => inShard(variant, shard),
    });
    ({ removals, drafts } = guard);
    const { held } = guard;
    if (guard.warning) warnings.push(guard.warning);
    const collided = checkCollisions({ variants, updates, control, removals, branchPrefix, forge });
    removals = removals.filter((r) => !collided.has(r));
    // merged removals: no job meets them again (the package is gone from the base branch); found
    // now, so that the total below counts them, and recorded after the jobs
    let merged: MergedRemoval[] = [];
    if (mode !== 'updates' && !scope && !forge.tracksMerges) {
      const handled = new Set([...removals, ...held, ...drafts].map((r) => `${r.repository} ${branchPrefix}${r.variant}`));
      const downstreamUrls = new Set(plan.downstreams.map((d) => d.url));
      merged = await findMergedRemovals(ctx, downstreamUrls, handled, (v) => !names.has(v) && inShard(v, shard));
    }
    removals = retriedFirst(removals, (r) => jobKey(r.variant, removalLabel(r)), ticks);
    const jobKeys = [
      ...variants.map((v) => jobKey(v.name, variantLabel(v))),
      ...(control ? updates.map((u) => jobKey(u.name, updateLabel(control!, u))) : []),
      ...removals.map((r) => jobKey(r.variant, removalLabel(r))),
    ];
    const acted: DashboardReport['ticks'] = {
      retry: jobKeys.filter((k) => ticks.retry.has(k)),
      allowRemovals: guard.allowedBy !== undefined ? [guard.allowedBy] : [],
      // a declined proposal's tick acts in its job (propose): known once the jobs ran
      repropose: [],
    };
    // Every job of the run is known now: the progress total never changes after this.
    total.n += updates.length + removals.length + collided.size + held.length + drafts.length + merged.length;
    options.onProgress?.({ type: 'planned', total: total.n });
    const results: VariantResult[] = await pool(variants, concurrency, options.signal, async (v) =>
      report(await unlessSpent(v.name, variantLabel(v), () => runVariantJob(v, ctx))()),
    );
    if (control) {
      const c = control;
      results.push(
        ...(await pool(updates, concurrency, options.signal, async (u) =>
          report(await unlessSpent(u.name, updateLabel(c, u), () => runUpdateJob(u, c, ctx))()),
        )),
      );
    }

    if (mode !== 'updates' && !scope) {
      results.push(
        ...(await pool(removals, concurrency, options.signal, async (r) =>
          report(await unlessSpent(r.variant, removalLabel(r), () => runRemovalJob(r, ctx))()),
        )),
      );
      results.push(
        ...(await pool(drafts, concurrency, options.signal, async (r) =>
          report(await unlessSpent(r.variant, retiredLabel(r), () => runRetireJob(r, ctx))()),
        )),
      );
      for (const [r, why] of collided) {
        results.push(report(notRun({ variant: r.variant, downstream: removalLabel(r) }, ctx.dryRun, 'name-collision', why)));
      }
      for (const h of held) {
        results.push(report(notRun(h, ctx.dryRun, 'removals-held', guard.message ?? '')));
      }
      for (const m of merged) results.push(report(await recordMergedRemoval(ctx, m)));
    }
    // an aborted run reports nothing: the jobs it stopped would read as failures of their own
    if (options.signal?.aborted) throw interrupted(options.signal);
    results.sort((a, b) => (a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : a.downstream < b.downstream ? -1 : 1));
    if (dashboard) {
      const reproposed = [...ticks.repropose].filter((url) => results.some((r) => r.proposal?.url === url && r.action !== 'declined'));
      const written = await dashboard.write(results, { ...acted, repropose: reproposed });
      dashboardReport = written.report;
      if (written.warning) warnings.push(written.warning);
    }
    return {
      version: ctx.version,
      dryRun: ctx.dryRun,
      mode,
      shard,
      results,
      warnings: warnings.map((w) => hideCredentials(w)),
      failed: results.filter((r) => r.error !== undefined).length,
      ...(budget ? { budget: budget.report() } : {}),
      ...(dashboardReport ? { dashboard: dashboardReport } : {}),
      ...(scope ? { upstreamRef: { repository: scope.repository, url: scope.url, ref: scope.ref, commit: scope.commit } } : {}),
    };
  } catch (error) {
    if (options.signal?.aborted) throw interrupted(options.signal);
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', stopGit);
    removeTempDir(runDir);
  }
}

/**
 * The removals of one downstream: from the last run's answer when the branch is at the commit it
 * was found at (nothing cloned), else from a mirror, the answer kept for the next run.
 */
async function removalsOf(
  ctx: JobContext,
  cacheRoot: string,
  downstream: { repository: string; url: string; branch: string; directory: string },
  variants: ReadonlySet<string>,
  control: string | undefined,
): Promise<Removal[]> {
  const commit = (await ctx.heads(downstream.url)).get(downstream.branch);
  if (commit === undefined) return []; // no branch, no package
  const key = { ...downstream, variants, control, version: ctx.version };
  const stored = await storedRemovals(cacheRoot, { ...key, commit });
  if (stored) return stored;
  const mirror = await ctx.mirror(downstream.url);
  const removals = await findRemovals(mirror, downstream, variants, control);
  const scanned = mirror.heads.get(downstream.branch);
  if (scanned !== undefined) await storeRemovals(cacheRoot, { ...key, commit: scanned }, removals);
  return removals;
}

function headsOf(refs: readonly RemoteRef[]): ReadonlyMap<string, string> {
  const heads = new Map<string, string>();
  for (const r of refs) if (r.name.startsWith('refs/heads/')) heads.set(r.name.slice('refs/heads/'.length), r.commit);
  return heads;
}

/**
 * Proposals that would share a branch, a forge record or a package directory. Between variants
 * and package updates (the control resources) it is a plan error: nothing runs. A removal is read
 * from a downstream's content, so one that collides fails alone (the map: why), not the run.
 */
function checkCollisions(input: {
  variants: readonly VariantPlan[];
  updates: readonly UpdatePlan[];
  control: ControlRepository | undefined;
  removals: readonly Removal[];
  branchPrefix: string;
  forge: Forge;
}): Map<Removal, string> {
  const { branchPrefix, forge } = input;
  const planned: PlannedProposal[] = [
    ...input.variants.map((v) => ({
      label: `variant "${v.name}"`,
      target: variantTarget(v, branchPrefix),
      directory: v.downstream.directory,
    })),
    ...(input.control
      ? input.updates.map((u) => ({
          label: `package update "${u.name}" (${u.directory || '.'})`,
          target: updateTarget(u, input.control!, branchPrefix),
          directory: u.directory,
        }))
      : []),
  ];
  const recordOf = forge.recordOf
    ? (t: ProposalTarget) => {
        try {
          return forge.recordOf!(t);
        } catch {
          return undefined; // a name no record can have: that job fails on its own
        }
      }
    : undefined;
  const planError = findCollisions(planned, recordOf);
  if (planError.length > 0) throw new RunError('name-collision', planError.map(describeCollision).join('\n'));
  const byRemoval = new Map<PlannedProposal, Removal>();
  for (const r of input.removals) {
    byRemoval.set(
      {
        label: `the removal of package "${r.directory || '.'}" (variant "${r.variant}" is gone)`,
        target: removalTarget(r, branchPrefix),
        directory: r.directory,
      },
      r,
    );
  }
  const out = new Map<Removal, string>();
  for (const c of findCollisions([...planned, ...byRemoval.keys()], recordOf)) {
    const r = byRemoval.get(c.second);
    if (r && !out.has(r)) out.set(r, `${describeCollision(c)}: left alone`);
  }
  return out;
}

/** A variant's downstream as its result names it: `<Repository>/<package>`. */
function variantLabel(v: VariantPlan): string {
  return `${v.downstream.repository.name}/${v.downstream.package}`;
}

/** A package update's downstream as its result names it: `<control repository>/<directory>`. */
function updateLabel(control: ControlRepository, u: UpdatePlan): string {
  return `${control.name}/${u.directory || '.'}`;
}

/** The jobs a person asked to retry (the dashboard's ticks) first, the others after in their order. */
function retriedFirst<T>(jobs: readonly T[], keyOf: (job: T) => string, ticks: DashboardTicks): T[] {
  if (ticks.retry.size === 0) return [...jobs];
  return [...jobs.filter((j) => ticks.retry.has(keyOf(j))), ...jobs.filter((j) => !ticks.retry.has(keyOf(j)))];
}

/** The control repository as `owner/name` when its `origin` remote is on the forge's server. */
async function githubControlRepository(cwd: string, forge: Forge): Promise<string | undefined> {
  const found = await findControlRepository(cwd);
  if (!found.ok || forge.serverUrl === undefined) return undefined;
  const repo = githubRepoOf(found.value.url, forge.serverUrl);
  return repo.ok ? `${repo.value.owner}/${repo.value.repo}` : undefined;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
