import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  cloneBare,
  defaultCacheDir,
  listRemoteRefs,
  serverTokenName,
  sourceTrust,
  stopRunningGit,
  type Author,
  type RemoteRef,
  type SourceTrust,
} from '@kdelta/git-source';
import { serverTokenOf } from './control/server-tokens.js';
import { checkOutputPath, makeTempDir, removeTempDir, sweepAbandonedWork } from '@kdelta/kptfile-model';
import type { ControlConfig } from './control/control.js';
import { Budget } from './forges/budget.js';
import type { Forge } from './forges/forge.js';
import type { GitHubForgeOptions, GitHubRunOptions } from './forges/github/github.js';
import { createLocalForge } from './forges/local.js';
import { createPackageUpdateMaterialize, type Materialize, type MaterializeInput } from './jobs/materialize.js';
import type { DashboardTicks } from './dashboard/dashboard.js';
import { hashOf, repositoryUrl } from './plan/plan.js';
import { checkoutMirror, mirrorHeads, type Mirror, type Workspace } from './propose/workspace.js';
import type { ResolvedSettings } from './settings/settings.js';
import { upToDateMemo, type UpToDateMemo } from './propose/up-to-date-memo.js';
import { RunError } from './errors.js';

/** What every job of one run shares: the forge, the mirrors, the budget, the run's settings. */

export interface JobContext {
  readonly version: string;
  readonly dryRun: boolean;
  readonly forge: Forge;
  readonly materialize: Materialize;
  /** Run the package's Kptfile pipeline after the mutations, as Porch renders after every change. */
  readonly render: boolean;
  /** Let `exec:` functions of the pipelines run (`--allow-exec`): each is any program on the runner. */
  readonly allowExec?: boolean | undefined;
  /** The container images the pipelines may run; undefined: the render's default (kpt's catalogues). */
  readonly allowedImages?: readonly string[] | undefined;
  readonly author: Author;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The repositories the user named: see {@link MaterializeInput.trust}. */
  readonly trust?: SourceTrust | undefined;
  readonly cacheDir?: string | undefined;
  /**
   * Where a change found up to date is remembered (propose/up-to-date-memo.ts); none in a dry run
   * (its report lists every resource) or with a `materialize` of the caller's (its output is not kdelta's).
   */
  readonly upToDate?: UpToDateMemo | undefined;
  /** Proposal branches are `<branchPrefix><variant>` (default `kdelta/`). */
  readonly branchPrefix: string;
  /** Content-creating requests this run may still make (a forge that counts them). */
  readonly budget?: Budget | undefined;
  upstreamRefs(url: string): Promise<readonly RemoteRef[]>;
  mirror(url: string): Promise<Mirror>;
  /** A repository's branches → commits, as one `git ls-remote` of the run reports them (nothing cloned). */
  heads(url: string): Promise<ReadonlyMap<string, string>>;
  /**
   * A workspace on branch `base` of the repository `url` (its mirror's), knowing where `head`
   * is on the remote; `name` names its scratch directory.
   */
  checkout(url: string, base: string, head: string, name: string): Promise<Workspace>;
  /** This run's control repository (`controlIdentity`): which recorded packages are its own. */
  readonly control?: string | undefined;
  /** What the packages it writes record (`findControlRecord`): its remote URL; none without one. */
  readonly controlRecord?: string | undefined;
  /** Declined proposals (their URLs) a person asked to propose again (the dashboard's "re-propose"). */
  readonly repropose?: ReadonlySet<string> | undefined;
  /** Aborted: the run is stopping (a signal); each job stops at its next {@link checkpoint}. */
  readonly signal?: AbortSignal | undefined;
}

/** The run was stopped (RunOptions.signal): what run() rejects with. */
export function interrupted(signal: AbortSignal): RunError {
  const reason = signal.reason instanceof Error ? signal.reason.message : typeof signal.reason === 'string' ? signal.reason : '';
  return new RunError('interrupted', `the run was interrupted${reason && !/aborted/i.test(reason) ? ` (${reason})` : ''}`);
}

/**
 * Between two steps of a job or a run: one turn of the event loop, so that a signal that arrived
 * during the synchronous work before (a merge, a render) is handled now and not after the whole
 * run, then stop when the run was aborted.
 */
export async function checkpoint(signal: AbortSignal | undefined): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (signal?.aborted) throw interrupted(signal);
}

/**
 * Runs `fn` with the run's scratch directory, removed after it whatever happens. What killed runs
 * left behind goes first (their pid in the directory's name no longer runs); this run's directory
 * is registered, so a SIGINT or SIGTERM handler removes it too. An abort of `signal` ends the
 * run's git processes, and the run rejects as interrupted.
 */
export async function inRunDirectory<T>(signal: AbortSignal | undefined, fn: (runDir: string) => Promise<T>): Promise<T> {
  sweepAbandonedWork();
  const runDir = makeTempDir(tmpdir(), 'run');
  const stopGit = () => stopRunningGit();
  signal?.addEventListener('abort', stopGit, { once: true });
  try {
    return await fn(runDir);
  } catch (error) {
    if (signal?.aborted) throw interrupted(signal);
    throw error;
  } finally {
    signal?.removeEventListener('abort', stopGit);
    // removed asynchronously first: a run's mirrors and checkouts are thousands of files, which a
    // synchronous removal deletes one by one on the main thread (seconds at 100 variants); the
    // thread pool deletes several at once. removeTempDir then unregisters it (and removes what is left).
    await rm(runDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    removeTempDir(runDir);
  }
}

/** The github forge's connection, as `run()` is given it (used when the forge is 'github'). */
export type GitHubConnection = GitHubRunOptions & Pick<GitHubForgeOptions, 'pacing' | 'clock' | 'onToken'>;

/**
 * Where the run's proposals go: the forge given, or the one the settings name, with the write
 * budget a GitHub run counts its requests against. The local forge's directory is checked first:
 * a run that cannot write its records writes nothing.
 */
export async function openForge(input: {
  readonly forge: Forge | undefined;
  readonly settings: ResolvedSettings;
  readonly cwd: string;
  readonly github: GitHubConnection | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}): Promise<{ forge: Forge; budget: Budget | undefined }> {
  const { settings, cwd, env } = input;
  const { branchPrefix } = settings;
  const forgeChoice = input.forge ?? settings.forge;
  const proposalsDir = resolve(cwd, settings.proposalsDir);
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
  const connection = input.github ?? {};
  const forge =
    forgeChoice === 'local'
      ? createLocalForge({ dir: proposalsDir, displayRoot: cwd, branchPrefix })
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
  return { forge, budget };
}

/** What a run's jobs share, made once: see {@link JobContext}. */
export function createJobContext(input: {
  readonly cwd: string;
  readonly control: ControlConfig;
  readonly settings: ResolvedSettings;
  readonly forge: Forge;
  readonly budget: Budget | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** This run's control repository (`controlIdentity`). */
  readonly controlId: string | undefined;
  /** What downstream Kptfiles record of the control repository: its remote URL, never a local path. */
  readonly controlRecord?: string | undefined;
  readonly ticks: DashboardTicks;
  /** The run's scratch directory: mirrors and checkouts go under it. */
  readonly runDir: string;
  readonly version: string;
  readonly materialize?: Materialize | undefined;
  readonly render?: boolean | undefined;
  /** A preview of an upstream ref: anyone's pull request. */
  readonly previewing: boolean;
  readonly cacheDir?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}): JobContext {
  const { cwd, settings, forge, env, runDir } = input;
  // The repositories the user named, and so the only ones the run's credentials go to: every
  // Repository of the control resources, and the patterns listed. A repository only a package's
  // content names gets none, even on the forge's server (git-source's SourceTrust): there, "the
  // same host" is every repository the token can read.
  const trust = sourceTrust({
    named: input.control.repositories.map((r) => repositoryUrl(r, cwd)),
    repositories: [...settings.credentialRepositories, ...settings.credentialHosts],
    // `owner/repo` names a repository of the GitHub the run proposes on
    githubServer: forge.name === 'github' ? forge.serverUrl : undefined,
    // the forge's token for its own server, for fetches as for ls-remote (only on the hosts above)
    tokenFor: (url) => forge.gitToken?.(url),
    tokenName: (url) => forge.gitTokenName?.(url),
    // a token per other git server (a GHES upstream of a github.com run): to the repositories above on it only
    serverTokens: settings.serverTokens,
    cwd,
    env,
    ...(settings.allowLocalUpstreams !== undefined ? { allowLocal: settings.allowLocalUpstreams } : {}),
  });
  const tokenFor = (url: string): { token?: string; tokenName?: string | undefined } => {
    const token = forge.gitToken?.(url);
    if (token) return { token, tokenName: forge.gitTokenName?.(url) };
    const server = serverTokenOf(trust, url);
    return server ? { token: server.token, tokenName: serverTokenName(server.server) } : {};
  };
  let jobs = 0;
  // One `ls-remote` per repository and run: an upstream's tags, a downstream's branches.
  const remoteRefs = memo<readonly RemoteRef[]>(async (url) => {
    // a GitHub App's token for the repository's owner: a private upstream on the same server
    await forge.prepareGitToken?.(url).catch(() => {});
    return listRemoteRefs({ repo: url, cwd, env, ...tokenFor(url) });
  });
  const { ticks } = input;
  const render = input.render ?? true;
  // an upstream ref under preview is anyone's pull request: its pipelines run no container
  // image unless the user allowed some for it (built-ins still render the catalogue's functions)
  const allowedImages = settings.allowedImages ?? (input.previewing ? [] : undefined);
  const ctx: JobContext = {
    version: input.version,
    ...(ticks.repropose.size > 0 ? { repropose: ticks.repropose } : {}),
    dryRun: settings.dryRun,
    forge,
    materialize: input.materialize ?? createPackageUpdateMaterialize(),
    render,
    allowExec: settings.allowExec,
    allowedImages,
    author: settings.author,
    env,
    trust,
    cacheDir: input.cacheDir,
    upToDate:
      input.materialize || settings.dryRun
        ? undefined
        : upToDateMemo(input.cacheDir ?? defaultCacheDir(env), {
            render,
            allowExec: settings.allowExec,
            allowedImages,
            version: input.version,
            controlRecord: input.controlRecord,
          }),
    branchPrefix: settings.branchPrefix,
    signal: input.signal,
    budget: input.budget,
    control: input.controlId,
    controlRecord: input.controlRecord,
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
      await cloneBare({ repo: url, dest: dir, cwd, env, ...tokenFor(url) });
      return { dir, heads: await mirrorHeads(dir) };
    }),
  };
  return ctx;
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

function headsOf(refs: readonly RemoteRef[]): ReadonlyMap<string, string> {
  const heads = new Map<string, string>();
  for (const r of refs) if (r.name.startsWith('refs/heads/')) heads.set(r.name.slice('refs/heads/'.length), r.commit);
  return heads;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
