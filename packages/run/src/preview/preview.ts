import type { Conflict, ResourceReport } from '@kdelta/merge-core';
import type { JobAction, RunReport, VariantResult } from '../report/result.js';
import type { FileChange } from '../propose/proposal-body.js';
import type { RenderFailureReport } from '../jobs/render.js';
import { RunError } from '../errors.js';
import { DEFAULT_CONFIG_DIR, run, type RunOptions } from '../run.js';
import { type CheckedSettings, overSettings } from '../settings/settings.js';

/**
 * `kdelta preview`: what a candidate change would propose to every downstream, computed by the
 * run's own dry run (one place computes a proposal) and summarised. Nothing is written: no push,
 * no proposal, no record; the downstreams are only read (one mirror each), each upstream tree
 * fetched once.
 */

/** The change under review. */
export type PreviewCandidate =
  /** A ref of an upstream repository that is not a release yet (a pull request's head, a branch). */
  | {
      readonly kind: 'upstream-ref';
      readonly repository: string;
      readonly url: string;
      readonly ref: string;
      readonly commit: string;
    }
  /** The control repository's work tree as it is (changed revisions, selectors, templates). */
  | { readonly kind: 'control'; readonly config: string };

/** What the change does to one variant's downstream. */
export type PreviewImpact =
  /** The package is new in the downstream: a new variant. */
  | 'created'
  /** The package changes. */
  | 'changed'
  /** The variant is gone: its package is removed (deletionPolicy delete) or let go (orphan). */
  | 'removed'
  | 'orphaned'
  /** Nothing to propose, or the open proposal already proposes exactly this. */
  | 'unchanged'
  /** kdelta would leave it alone: a human's branch, `kdelta:stop`, a declined change, a package it does not own. */
  | 'left-alone'
  | 'failed';

export interface PreviewVariant {
  readonly variant: string;
  readonly downstream: string;
  readonly impact: PreviewImpact;
  /** What the run would do (its dry-run action). */
  readonly action: JobAction;
  readonly changes: readonly FileChange[];
  /** The resources the update adds, changes or removes. */
  readonly resources: readonly ResourceReport[];
  readonly conflicts: readonly Conflict[];
  readonly renderFailure?: RenderFailureReport | undefined;
  readonly upstream?: VariantResult['upstream'];
  /** Why it is left alone, or why it failed. */
  readonly message?: string | undefined;
  /** Its rollout wave, when an update policy with waves governs it. */
  readonly wave?: { readonly name: string; readonly index: number } | undefined;
}

/** The variants of one rollout wave, summarised as the whole preview is. */
export interface PreviewWave {
  readonly name: string;
  readonly summary: PreviewSummary;
}

export interface PreviewSummary {
  /** Variants the change was computed for (the downstreams looked at). */
  readonly total: number;
  readonly conflicted: number;
  /** Conflicting fields, most common first: how many downstreams conflict on each. */
  readonly fields: readonly { readonly path: string; readonly count: number }[];
  readonly renderFailed: number;
  /** Render failures by function and reason (the function's first result, else the error), most common first. */
  readonly renderFailures: readonly { readonly function?: string | undefined; readonly reason: string; readonly count: number }[];
  readonly created: number;
  readonly changed: number;
  readonly removed: number;
  readonly unchanged: number;
  readonly leftAlone: number;
  readonly failed: number;
}

export interface PreviewReport {
  readonly version: string;
  readonly candidate: PreviewCandidate;
  readonly summary: PreviewSummary;
  /** Every variant, in name order. */
  readonly variants: readonly PreviewVariant[];
  /** The variants update policies put in rollout waves, per wave in the waves' order; absent when none. */
  readonly waves?: readonly PreviewWave[] | undefined;
  readonly warnings: readonly string[];
}

export interface PreviewOptions extends Omit<RunOptions, 'dryRun' | 'upstreamRef' | 'onProgress'> {
  /** The upstream Repository (its name) whose packages `upstreamRef` is of; optional when the variants have one upstream. */
  readonly upstream?: string | undefined;
  /** Preview this ref of the upstream (`refs/pull/7/head`, a branch, a commit); absent: the control work tree. */
  readonly upstreamRef?: string | undefined;
  readonly onProgress?: RunOptions['onProgress'];
}

const PREVIEW_DRY_RUN: CheckedSettings = { values: { dryRun: true }, origins: { dryRun: { type: 'option', name: 'dryRun' } } };

/** Compute the preview: the run's dry run, with the candidate, summarised. Writes nothing. */
export async function preview(options: PreviewOptions): Promise<PreviewReport> {
  const { upstream, upstreamRef, ...rest } = options;
  if (upstream !== undefined && upstreamRef === undefined)
    throw new RunError('invalid-option', `an upstream Repository ("${upstream}") needs the ref to preview`);
  if (upstreamRef !== undefined && upstreamRef.trim() === '') throw new RunError('invalid-option', 'the upstream ref is empty');
  const report = await run({
    ...rest,
    dryRun: true,
    // a door's settings are over the options: the dry run is put over them too, whatever they say
    ...(rest.settings ? { settings: overSettings(PREVIEW_DRY_RUN, rest.settings) } : {}),
    ...(upstreamRef !== undefined ? { upstreamRef: { repository: upstream, ref: upstreamRef } } : {}),
  });
  return previewOf(report, { config: options.config ?? DEFAULT_CONFIG_DIR });
}

/** Where a job's result puts its downstream. */
export function impactOf(r: VariantResult): PreviewImpact {
  switch (r.action) {
    case 'proposed':
    case 'updated': {
      // the content is there already (the open proposal's, or all but the lock): the change under review does not change it
      if (r.sameContent !== undefined) return 'unchanged';
      const kptfile = r.changes?.find((c) => c.path === 'Kptfile' || c.path.endsWith('/Kptfile'));
      return kptfile?.status === 'added' ? 'created' : 'changed';
    }
    case 'removal-proposed':
      return 'removed';
    case 'orphan-proposed':
      return 'orphaned';
    // closed: the downstream already has this content
    case 'unchanged':
    case 'up-to-date':
    case 'closed':
      return 'unchanged';
    // declined: people said no to exactly this change; it is not proposed again
    case 'blocked':
    case 'not-adopted':
    case 'deferred':
    case 'declined':
      return 'left-alone';
    case 'failed':
      return 'failed';
    default:
      return r.action satisfies never;
  }
}

/** Why a variant a run would write to is unchanged for the preview. */
function sameContentMessage(r: VariantResult): string | undefined {
  switch (r.sameContent) {
    case 'open':
      return 'the open proposal already holds this content (only its text would be rewritten)';
    case 'lock':
      return "only the package's Kptfile upstream lock would move: the change does not touch the package";
    case undefined:
      return undefined;
    default:
      return r.sameContent satisfies never;
  }
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, { item: T; count: number }> {
  const out = new Map<string, { item: T; count: number }>();
  for (const item of items) {
    const k = key(item);
    const hit = out.get(k);
    if (hit) hit.count++;
    else out.set(k, { item, count: 1 });
  }
  return out;
}

const byCount = <T extends { count: number }>(a: T & { key: string }, b: T & { key: string }) =>
  b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A dry run's report as a preview (pure): each variant's impact and the fleet's aggregates. */
export function previewOf(report: RunReport, context: { config: string }): PreviewReport {
  const variants: PreviewVariant[] = report.results.map((r) => {
    const impact = impactOf(r);
    const why = r.error ?? (impact === 'left-alone' || impact === 'unchanged' ? (sameContentMessage(r) ?? r.message) : undefined);
    return {
      variant: r.variant,
      downstream: r.downstream,
      impact,
      action: r.action,
      changes: r.changes ?? [],
      resources: (r.resources ?? []).filter((x) => x.changed || x.action !== 'merged'),
      conflicts: r.conflicts,
      ...(r.renderFailure ? { renderFailure: r.renderFailure } : {}),
      ...(r.upstream ? { upstream: r.upstream } : {}),
      ...(why !== undefined ? { message: why } : {}),
      ...(r.wave ? { wave: r.wave } : {}),
    };
  });
  const waves = byWave(variants);
  return {
    version: report.version,
    candidate: report.upstreamRef ? { kind: 'upstream-ref', ...report.upstreamRef } : { kind: 'control', config: context.config },
    summary: summarise(variants),
    variants,
    ...(waves.length > 0 ? { waves } : {}),
    warnings: report.warnings,
  };
}

/** The variants with a wave, grouped by it: waves in their policy's order (the earliest place a wave has), then by name. */
function byWave(variants: readonly PreviewVariant[]): PreviewWave[] {
  const groups = new Map<string, { index: number; variants: PreviewVariant[] }>();
  for (const v of variants) {
    if (!v.wave) continue;
    const g = groups.get(v.wave.name) ?? { index: v.wave.index, variants: [] };
    g.index = Math.min(g.index, v.wave.index);
    g.variants.push(v);
    groups.set(v.wave.name, g);
  }
  return [...groups]
    .sort(([a, x], [b, y]) => x.index - y.index || (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, g]) => ({ name, summary: summarise(g.variants) }));
}

/** The aggregates of some variants: counts by impact, the conflicting fields and the render failures, most common first. */
function summarise(variants: readonly PreviewVariant[]): PreviewSummary {
  const conflicted = variants.filter((v) => v.conflicts.length > 0);
  // a field counts once per downstream, however many resources conflict on it
  const fieldCounts = countBy(
    conflicted.flatMap((v) => [...new Set(v.conflicts.map((c) => c.path))].map((path) => ({ path, variant: v.variant }))),
    (x) => x.path,
  );
  const renderFailed = variants.filter((v) => v.renderFailure);
  // the function's own words say why; the error repeats the function and its field
  const failureCounts = countBy(
    renderFailed.map((v) => ({ function: v.renderFailure!.function, reason: v.renderFailure!.results[0] ?? v.renderFailure!.message })),
    (f) => `${f.function ?? ''}\n${f.reason}`,
  );
  const count = (impact: PreviewImpact) => variants.filter((v) => v.impact === impact).length;
  return {
    total: variants.length,
    conflicted: conflicted.length,
    fields: [...fieldCounts]
      .map(([key, { count }]) => ({ key, path: key, count }))
      .sort(byCount)
      .map(({ path, count }) => ({ path, count })),
    renderFailed: renderFailed.length,
    renderFailures: [...failureCounts]
      .map(([key, { item, count }]) => ({ key, function: item.function, reason: item.reason, count }))
      .sort(byCount)
      .map(({ key: _key, ...rest }) => (rest.function === undefined ? { reason: rest.reason, count: rest.count } : rest)),
    created: count('created'),
    changed: count('changed'),
    removed: count('removed') + count('orphaned'),
    unchanged: count('unchanged'),
    leftAlone: count('left-alone'),
    failed: count('failed'),
  };
}
