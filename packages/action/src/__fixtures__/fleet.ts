import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitEnv } from '@kdelta/test-support';
import { main } from '../main.js';

// Real repositories on disk for the Action's tests are @kdelta/test-support's fleet (the workspace
// is its control repository); what is the Action's own are two runners: one starts the committed
// bundle as GitHub's runner does (a smoke test per forge), the other runs the Action's `main` in
// this process with the same environment, for the tests of what the Action does.
export { createFleet, type Fleet, packageVariant, repository } from '@kdelta/test-support';

// ---------------------------------------------------------------------------------------------
// Running the bundle as the runner does
// ---------------------------------------------------------------------------------------------

export const BUNDLE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');

export interface ActionRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly outputs: Record<string, string>;
  readonly summary: string;
  /** The file of the `report-path` output, read before the runner's temp directory goes. */
  readonly reportFile?: string;
}

/** GITHUB_OUTPUT's format: `name<<DELIMITER\nvalue\nDELIMITER` (or `name=value`). */
export function parseOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i]!);
      out[heredoc[1]!] = value.join('\n');
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return out;
}

/** Input names as the runner passes them: `INPUT_` + the name upper-cased, spaces to `_` (hyphens kept). */
export function inputEnv(inputs: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.replace(/ /g, '_').toUpperCase()}`, v]));
}

/**
 * Start the bundle and wait for it. Asynchronous on purpose: a fake GitHub served from this same
 * process must keep answering while the Action runs.
 */
export async function runAction(
  workspace: string,
  inputs: Readonly<Record<string, string>>,
  extraEnv: Record<string, string> = {},
): Promise<ActionRun> {
  const files = mkdtempSync(join(tmpdir(), 'kdelta-action-files-'));
  try {
    const outputFile = join(files, 'output');
    const summaryFile = join(files, 'summary');
    writeFileSync(outputFile, '');
    writeFileSync(summaryFile, '');
    const env: Record<string, string | undefined> = { ...gitEnv };
    // Nothing of the test runner's own environment that looks like an input or a runner file.
    for (const k of Object.keys(env)) if (k.startsWith('INPUT_') || k.startsWith('GITHUB_')) delete env[k];
    const child = spawn(process.execPath, [BUNDLE], {
      cwd: workspace,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...env,
        GITHUB_WORKSPACE: workspace,
        GITHUB_OUTPUT: outputFile,
        GITHUB_STEP_SUMMARY: summaryFile,
        KDELTA_CACHE_DIR: join(files, 'cache'),
        ...inputEnv(inputs),
        ...extraEnv,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => void (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => void (stderr += t));
    const status = await new Promise<number | null>((done, fail) => {
      child.on('error', fail);
      child.on('close', (code) => done(code));
    });
    return {
      status,
      stdout,
      stderr,
      outputs: parseOutputFile(readFileSync(outputFile, 'utf8')),
      summary: readFileSync(summaryFile, 'utf8'),
    };
  } finally {
    rmSync(files, { recursive: true, force: true });
  }
}

/**
 * The job summary file of {@link runMain}: one path for the process, because @actions/core keeps the
 * first GITHUB_STEP_SUMMARY it reads. The file is made for each run and removed after it.
 */
const SUMMARY_FILE = join(tmpdir(), `kdelta-action-summary-${process.pid}`);

/**
 * The Action's `main` (its sources) in this process, given what the runner gives the bundle
 * (inputs as INPUT_* variables, the output and summary files, the workspace) and its output captured:
 * the same run as {@link runAction}'s without a process and a bundle to load. The environment,
 * stdout, stderr and exit code of this process are restored after it.
 */
export async function runMain(
  workspace: string,
  inputs: Readonly<Record<string, string>>,
  extraEnv: Record<string, string> = {},
): Promise<ActionRun> {
  const files = mkdtempSync(join(tmpdir(), 'kdelta-action-files-'));
  const savedEnv = { ...process.env };
  const write = { stdout: process.stdout.write, stderr: process.stderr.write };
  const exitCode = process.exitCode;
  let stdout = '';
  let stderr = '';
  try {
    const outputFile = join(files, 'output');
    writeFileSync(outputFile, '');
    writeFileSync(SUMMARY_FILE, '');
    Object.assign(process.env, gitEnv);
    // Nothing of the test runner's own environment that looks like an input or a runner file.
    for (const k of Object.keys(process.env)) if (k.startsWith('INPUT_') || k.startsWith('GITHUB_')) delete process.env[k];
    Object.assign(process.env, {
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: SUMMARY_FILE,
      RUNNER_TEMP: files,
      KDELTA_CACHE_DIR: join(files, 'cache'),
      ...inputEnv(inputs),
      ...extraEnv,
    });
    process.exitCode = undefined;
    process.stdout.write = ((chunk: string | Uint8Array) => {
      stdout += String(chunk);
      return true;
    }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    }) as typeof process.stderr.write;
    // the forge's waits shortened, as the run's own GitHub tests do (the bundle's test keeps them)
    await main({ pacing: { writeSpacing: false, retryAfterUnitMs: 20 } });
    const failed = process.exitCode !== undefined && process.exitCode !== 0;
    const outputs = parseOutputFile(readFileSync(outputFile, 'utf8'));
    const reportPath = outputs['report-path'];
    return {
      status: failed ? Number(process.exitCode) : 0,
      stdout,
      stderr,
      outputs,
      ...(reportPath && existsSync(reportPath) ? { reportFile: readFileSync(reportPath, 'utf8') } : {}),
      summary: readFileSync(SUMMARY_FILE, 'utf8'),
    };
  } finally {
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
    process.exitCode = exitCode;
    for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
    Object.assign(process.env, savedEnv);
    rmSync(files, { recursive: true, force: true });
    if (existsSync(SUMMARY_FILE)) rmSync(SUMMARY_FILE);
  }
}
