import type { Author, RemoteRef, SourceTrust } from '@kdelta/git-source';
import type { Budget } from './forges/budget.js';
import type { Forge } from './forges/forge.js';
import type { Materialize, MaterializeInput } from './jobs/materialize.js';
import type { Mirror, Workspace } from './propose/workspace.js';
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
