import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import * as core from '@actions/core';
import { ControlError, preview, renderPreview, withInterruptCleanup, type PreviewReport, type RunProgress } from '@kdelta/run';
import { InputError, secretInputs, settingsFromInputs, type InputReader } from './inputs.js';
import { previewMarker, upsertComment } from './preview-comment.js';
import { previewConnection, previewPlan, type PreviewPlan, type WorkflowEvent } from './preview-inputs.js';

/**
 * `mode: preview`: inputs → the preview (the run's dry run of the change under review) → one
 * comment on the reviewed pull request, the job summary, outputs. Nothing else is written.
 */

/** A job summary holds 1 MiB; a comment, 65536 characters (less the marker). */
const SUMMARY_LIMIT = 900_000;
const COMMENT_LIMIT = 60_000;

/** The repository the workspace is a checkout of (its `origin`), when it is one. */
async function workspaceRepository(workspace: string): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)('git', ['remote', 'get-url', 'origin'], { cwd: workspace, encoding: 'utf8' });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** `owner/name` of a repository URL (no credentials), or `workspace`: part of the comment's marker. */
function slugOf(url: string | undefined): string {
  const parts = (url ?? '')
    .replace(/\.git$/i, '')
    .split(/[/:]/)
    .filter(Boolean);
  return parts.length >= 2 ? parts.slice(-2).join('/') : 'workspace';
}

/** The workflow's event: its name, repository and pull request (from `GITHUB_EVENT_PATH`). */
export async function readWorkflowEvent(env: Readonly<Record<string, string | undefined>>): Promise<unknown> {
  if (!env.GITHUB_EVENT_PATH) return undefined;
  try {
    return JSON.parse(await readFile(env.GITHUB_EVENT_PATH, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function progressLine(event: RunProgress): string {
  if (event.type === 'planned') return `${event.total} variant(s) to preview`;
  const r = event.result;
  return `[${event.done}/${event.total}] ${r.variant} → ${r.downstream}: ${r.error ? `failed (${r.error.split('\n')[0]})` : r.action}`;
}

function outputs(report: PreviewReport): Record<string, string> {
  const s = report.summary;
  return {
    conflicts: String(s.conflicted),
    'render-failed': String(s.renderFailed),
    created: String(s.created),
    removed: String(s.removed),
    unchanged: String(s.unchanged),
    failed: String(s.failed),
    preview: JSON.stringify(s),
  };
}

export async function previewMain(input: InputReader, event: WorkflowEvent): Promise<void> {
  const env = process.env;
  const workspace = env.GITHUB_WORKSPACE || process.cwd();
  let plan: PreviewPlan;
  let settings: ReturnType<typeof settingsFromInputs>;
  // the tokens first: whatever happens next, they are masked in the log
  const commentToken = input('comment-token').trim();
  for (const secret of secretInputs(input)) core.setSecret(secret);
  const ofWorkspace = await workspaceRepository(workspace);
  try {
    // `mode` is the Action's here: the run's modes are the run's setting
    settings = settingsFromInputs((name) => (name === 'mode' ? '' : input(name)), { workspace, env });
    // downstreams on another GitHub than the workflow's (a GHES upstream's own preview): read there
    settings = previewConnection(input, settings, env.GITHUB_SERVER_URL || 'https://github.com');
    plan = previewPlan(input, event, {
      serverUrl: env.GITHUB_SERVER_URL || 'https://github.com',
      workspaceRepository: ofWorkspace,
    });
  } catch (error) {
    core.setFailed(error instanceof InputError ? error.message : `cannot read the inputs: ${String(error)}`);
    return;
  }
  core.info(
    `kdelta preview: ${plan.upstreamRef ? `upstream ${plan.upstream ?? '(the one upstream)'} at ${plan.upstreamRef}` : `the control resources in ${settings.config}`}; nothing is written${plan.comment ? `, but one comment on ${plan.comment.repository}#${plan.comment.number}` : ''}`,
  );
  let report: PreviewReport;
  try {
    report = await withInterruptCleanup((signal) =>
      core.group('Preview', () =>
        preview({
          ...settings.options,
          upstream: plan.upstream,
          upstreamRef: plan.upstreamRef,
          signal,
          onProgress: (e) => core.info(progressLine(e)),
        }),
      ),
    );
  } catch (error) {
    core.setFailed(
      error instanceof ControlError
        ? `the control configuration has a problem: ${error.message}`
        : `kdelta preview stopped: ${error instanceof Error ? error.message : String(error)}`,
    );
    return;
  }
  for (const w of report.warnings) core.warning(w);
  for (const [name, value] of Object.entries(outputs(report))) core.setOutput(name, value);
  if (env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(renderPreview(report, { format: 'markdown', limit: SUMMARY_LIMIT })).write();
  if (plan.comment) {
    const token = commentToken || settings.token;
    try {
      const done = await upsertComment(
        { apiUrl: env.GITHUB_API_URL || 'https://api.github.com', token, repository: plan.comment.repository, number: plan.comment.number },
        previewMarker(`${slugOf(ofWorkspace)} ${settings.config}`),
        renderPreview(report, { format: 'markdown', limit: COMMENT_LIMIT }),
      );
      core.setOutput('comment-url', done.url);
      core.info(`kdelta preview: comment ${done.action}: ${done.url}`);
    } catch (error) {
      core.setFailed(error instanceof Error ? error.message : String(error));
      return;
    }
  }
  if (report.summary.failed > 0) {
    const first = report.variants.find((v) => v.impact === 'failed');
    core.setFailed(
      `${report.summary.failed} variant(s) could not be previewed; ${first?.variant} → ${first?.downstream}: ${first?.message ?? 'failed'}`,
    );
  }
}
