import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@actions/core';
import {
  ControlError,
  reportJson,
  run,
  withInterruptCleanup,
  type GitHubForgeOptions,
  type RunProgress,
  type RunReport,
} from '@kdelta/run';
import { InputError, secretInputs, settingsFromInputs, type ActionSettings, type InputReader } from './inputs.js';
import { previewMain, readWorkflowEvent } from './preview-main.js';
import { isPreview, workflowEvent } from './preview-inputs.js';
import { actionOutputs, controlAnnotations, countResults, permissionHint, renderSummary } from './report.js';

/**
 * The Action: inputs → run → outputs, job summary, annotations. Everything the runner sees goes
 * through @actions/core (the token is masked before anything is logged).
 */

/** Actions whose message says why nothing was written (`deferred` comes with the API budget). */
const EXPLAINED: ReadonlySet<string> = new Set(['blocked', 'declined', 'deferred']);

function progressLine(event: RunProgress): string {
  if (event.type === 'planned') return `${event.total} job(s) planned`;
  const r = event.result;
  const where = r.proposal ? ` ${r.proposal.url}` : '';
  const why = r.error ?? (EXPLAINED.has(r.action) ? r.message : undefined);
  return `[${event.done}/${event.total}] ${r.variant} → ${r.downstream}: ${r.action}${where}${why ? ` (${why.split('\n')[0]})` : ''}`;
}

function readSettings(): ActionSettings {
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd();
  // The secrets first: whatever happens next, they are masked in the log.
  for (const secret of secretInputs((name) => core.getInput(name))) core.setSecret(secret);
  const settings = settingsFromInputs((name) => core.getInput(name), { workspace, env: process.env });
  const github = settings.options.github;
  // every installation token is masked the moment it exists
  return github?.app
    ? { ...settings, options: { ...settings.options, github: { ...github, onToken: (t) => core.setSecret(t) } } }
    : settings;
}

function reportControlError(error: ControlError, workspace: string): void {
  const annotations = controlAnnotations(error.issues, (file) => {
    try {
      return readFileSync(join(workspace, file), 'utf8');
    } catch {
      return undefined;
    }
  });
  for (const a of annotations) {
    core.error(a.message, {
      title: a.title,
      ...(a.file ? { file: a.file } : {}),
      ...(a.startLine ? { startLine: a.startLine } : {}),
    });
  }
  core.setFailed(
    `${error.issues.length === 1 ? 'the control configuration has a problem' : `the control configuration has ${error.issues.length} problems`} (annotated on the files): fix it and run again; nothing was read from or written to any repository`,
  );
}

function failureMessage(report: RunReport): string {
  const failed = report.results.filter((r) => r.action === 'failed');
  const first = failed[0];
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more: see the job summary)` : '';
  const hint = failed.map((r) => permissionHint(r)).find((h) => h !== undefined);
  const what =
    failed.length === report.results.length
      ? `every variant failed (${failed.length})`
      : `${failed.length} of ${report.results.length} variant(s) failed; the others ran`;
  return `${what}. ${first ? `${first.variant} → ${first.downstream}: ${first.error ?? 'failed'}` : ''}${more}${hint ? `\n${hint}` : ''}`;
}

/**
 * What the runner cannot set: `pacing` shortens the GitHub forge's waits between writes and after a
 * rate limit (tests against a local server); the bundle's start passes nothing.
 */
export interface MainOverrides {
  readonly pacing?: GitHubForgeOptions['pacing'];
}

export async function main(overrides: MainOverrides = {}): Promise<void> {
  const event = workflowEvent(process.env, await readWorkflowEvent(process.env));
  const input: InputReader = (name) => core.getInput(name);
  if (isPreview(input, event)) return previewMain(input, event);
  let settings: ActionSettings;
  try {
    settings = readSettings();
  } catch (error) {
    core.setFailed(error instanceof InputError ? error.message : `cannot read the inputs: ${String(error)}`);
    return;
  }
  const { options } = settings;
  const { dryRun, shard } = options.settings.values;
  core.info(
    `kdelta: config ${settings.config}, forge ${settings.forge}${dryRun ? ', dry run (nothing is written)' : ''}${shard ? `, shard ${shard.index}/${shard.count}` : ''}`,
  );
  let report: RunReport;
  try {
    // A cancelled workflow sends SIGINT, then SIGTERM: the run stops between steps, its git
    // processes and work directories go, and the step ends at once.
    report = await withInterruptCleanup((signal) =>
      core.group('Run', () =>
        run({
          ...options,
          ...(overrides.pacing && options.github ? { github: { ...options.github, pacing: overrides.pacing } } : {}),
          signal,
          onProgress: (event) => core.info(progressLine(event)),
        }),
      ),
    );
  } catch (error) {
    if (error instanceof ControlError) reportControlError(error, options.cwd);
    else {
      const text = error instanceof Error ? error.message : String(error);
      const hint = permissionHint(error instanceof Error ? (error as { code?: string }) : {});
      core.setFailed(`kdelta run stopped: ${text}${hint ? `\n${hint}` : ''}`);
    }
    return;
  }

  // The whole report in a file (a step's outputs hold 1 MB at most: thousands of variants do not fit)
  const reportPath = join(
    process.env.RUNNER_TEMP || tmpdir(),
    `kdelta-report-${process.env.GITHUB_RUN_ID ?? 'local'}-${process.env.GITHUB_JOB ?? 'job'}-${process.pid}.json`,
  );
  await writeFile(reportPath, reportJson(report));
  for (const [name, value] of Object.entries(actionOutputs(report, reportPath))) core.setOutput(name, value);
  for (const w of report.warnings) core.warning(w);
  for (const r of report.results) {
    if (r.action === 'failed') core.error(r.error ?? 'failed', { title: `kdelta: ${r.variant} → ${r.downstream}` });
    else if (r.action === 'blocked') core.warning(r.message ?? 'blocked', { title: `kdelta: ${r.variant} → ${r.downstream}` });
    // proposed all the same: the pull request says it is unrendered, the run page says so too
    if (r.renderFailure)
      core.warning(`render failed, proposed unrendered: ${r.renderFailure.message}`, { title: `kdelta: ${r.variant} → ${r.downstream}` });
  }
  const counts = countResults(report.results);
  core.info(
    `kdelta: ${counts.created} created, ${counts.updated} updated, ${counts.closed} closed, ${counts.unchanged} unchanged, ${counts.deferred} deferred, ${counts.failed} failed`,
  );
  if (report.dashboard?.url) core.info(`kdelta: dashboard ${report.dashboard.url} (${report.dashboard.outcome})`);
  if (process.env.GITHUB_STEP_SUMMARY) {
    await core.summary.addRaw(renderSummary(report, { title: settings.config })).write();
  }
  if (counts.failed > 0) core.setFailed(failureMessage(report));
}
