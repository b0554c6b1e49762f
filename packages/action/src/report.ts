import { countResults, type RunReport, type VariantResult } from '@kdelta/run';

/**
 * What the Action shows of a run: its outputs, the job summary, the annotations. Pure renderers
 * of the run's report, unit-tested; main.ts hands their results to the runner.
 */

/** Which count a result adds to: the run's own rule, the Action's outputs of the same names. */
export { countedAs, countResults, type Counted, type Counts } from '@kdelta/run';

/** One entry of the `pull-requests` output. */
export interface PullRequestEntry {
  readonly variant: string;
  readonly downstream: string;
  readonly action: string;
  readonly url: string | null;
  /** The pull request's number on GitHub; null for the local forge (or a dry run that would open one). */
  readonly number: number | null;
  readonly state: string | null;
  readonly conflicts: number;
  /** The package's render failed: the pull request holds it unrendered and says why. */
  readonly renderFailed: boolean;
}

/**
 * The proposals of a run: every result that has a proposal or, in a dry run, would write one.
 * Results with nothing to propose (up to date, not adopted, failed before proposing) are left out.
 */
export function pullRequests(results: readonly VariantResult[]): PullRequestEntry[] {
  return results
    .filter((r) => r.proposal !== undefined || (r.writes && r.action !== 'failed'))
    .map((r) => ({
      variant: r.variant,
      downstream: r.downstream,
      action: r.action,
      url: r.proposal?.url ?? null,
      number: r.proposal && /^\d+$/.test(r.proposal.id) ? Number(r.proposal.id) : null,
      state: r.proposal?.state ?? null,
      conflicts: r.conflictCount,
      renderFailed: r.renderFailure !== undefined,
    }));
}

/**
 * GitHub keeps at most 1 MB of a step's outputs: the inline `pull-requests` list stays well under
 * it (the full report is in the file of `report-path`).
 */
export const PULL_REQUESTS_OUTPUT_BYTES = 512 * 1024;

/** The `pull-requests` JSON: every entry, or as many as fit in `maxBytes` (the file has them all). */
export function pullRequestsOutput(entries: readonly PullRequestEntry[], maxBytes = PULL_REQUESTS_OUTPUT_BYTES): string {
  const all = JSON.stringify(entries);
  if (Buffer.byteLength(all) <= maxBytes) return all;
  const kept: string[] = [];
  let bytes = 2; // []
  for (const entry of entries) {
    const text = JSON.stringify(entry);
    const more = Buffer.byteLength(text) + (kept.length > 0 ? 1 : 0);
    if (bytes + more > maxBytes) break;
    kept.push(text);
    bytes += more;
  }
  return `[${kept.join(',')}]`;
}

/** Every output of the Action, as the strings written to GITHUB_OUTPUT (`reportPath`: where the full report was written). */
export function actionOutputs(report: RunReport, reportPath?: string, maxBytes = PULL_REQUESTS_OUTPUT_BYTES): Record<string, string> {
  const counts = countResults(report.results);
  const entries = pullRequests(report.results);
  const inline = pullRequestsOutput(entries, maxBytes);
  return {
    'pull-requests': inline,
    'pull-requests-truncated': String(inline.length < JSON.stringify(entries).length),
    ...(reportPath ? { 'report-path': reportPath } : {}),
    ...Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, String(v)])),
    'render-failed': String(report.results.filter((r) => r.renderFailure !== undefined).length),
  };
}

/**
 * What to do about a failure whose code says the token may not do something: GitHub refused it
 * (403) without naming a permission, or git was refused a push. The usual cause is the workflow's
 * own token, which reaches only the workflow's repository. A refusal that names the permission
 * (`missing-permission`) already says what to give the token: nothing to add.
 */
export function permissionHint(failed: { readonly code?: string | undefined }): string | undefined {
  if (failed.code !== 'forbidden') return undefined;
  return "the token lacks a permission: it needs contents: write and pull-requests: write on every downstream repository. The workflow's own GITHUB_TOKEN reaches only the workflow's repository and only with the job's `permissions:`; for other repositories pass a GitHub App installation token or a fine-grained token in the `token` input.";
}

// The job summary and the annotations of control errors, for main.ts and the tests in one place.
export { renderSummary, type SummaryOptions } from './summary.js';
export { controlAnnotations, fieldPath, issueLine, type Annotation } from './annotations.js';
