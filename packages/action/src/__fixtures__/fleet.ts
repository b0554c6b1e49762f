import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitEnv } from '@kdelta/test-support';

// Real repositories on disk for the Action's tests are @kdelta/test-support's fleet (the workspace
// is its control repository); what is the Action's own is a runner that starts the committed
// bundle as GitHub's runner does.
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
