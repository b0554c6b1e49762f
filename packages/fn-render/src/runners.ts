/**
 * Running a function as a process: a local executable (`exec:`) or a container image through
 * docker or podman. The ResourceList goes to stdin, comes back on stdout; stderr is kept for the
 * results. Nothing runs through a shell.
 */
import { spawn, spawnSync } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';

export interface ProcessOutcome {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when the process could not be started at all. */
  readonly spawnError?: string;
}

/** The environment a function process gets: enough to run, none of the caller's secrets. */
export function functionEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'TEMP', 'TMP', 'LANG', 'LC_ALL', 'SYSTEMROOT']) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

export function runProcess(
  command: string,
  args: readonly string[],
  input: string,
  options: { cwd: string; env: Record<string, string> },
): Promise<ProcessOutcome> {
  return new Promise((done) => {
    let child;
    try {
      child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (error) {
      done({ exitCode: 1, stdout: '', stderr: '', spawnError: (error as Error).message });
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let spawnError: string | undefined;
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError =
        e.code === 'ENOENT'
          ? `${command}: no such executable`
          : e.code === 'EACCES'
            ? `${command}: not executable (permission denied)`
            : e.message;
    });
    // a function that exits without reading all of stdin is not an error of ours
    child.stdin.on('error', () => {});
    child.on('close', (code, signal) => {
      done({
        exitCode: spawnError !== undefined ? 1 : (code ?? (signal ? 128 : 1)),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8') + (signal ? `\n(killed by ${signal})` : ''),
        ...(spawnError !== undefined ? { spawnError } : {}),
      });
    });
    child.stdin.end(input);
  });
}

/** The caller's environment without unset entries (for the container runtime's own client). */
export function definedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** kpt's rule for `exec:` paths: relative ones are taken from the directory kpt runs in. */
export function execPath(exec: string, cwd: string): string {
  return isAbsolute(exec) ? exec : resolve(cwd, exec);
}

/**
 * The arguments that run `image` as a function: no network, a read-only root file system, an
 * unprivileged user, and the image exactly as written (no tag added or resolved).
 */
export function containerArgs(image: string): string[] {
  return ['run', '--rm', '-i', '--network', 'none', '--read-only', '--user', 'nobody', '--security-opt', 'no-new-privileges', image];
}

const detected = new Map<string, string | undefined>();

/**
 * The container runtime to use: `KDELTA_CONTAINER_RUNTIME` when set (any command that takes
 * docker's `run` arguments), else `docker` or `podman` whose engine answers `info`. Asked once.
 */
export function detectContainerRuntime(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const named = env['KDELTA_CONTAINER_RUNTIME'];
  if (named !== undefined && named !== '') return named;
  const key = env['PATH'] ?? '';
  if (detected.has(key)) return detected.get(key);
  let found: string | undefined;
  for (const cmd of ['docker', 'podman']) {
    const r = spawnSync(cmd, ['info'], { stdio: 'ignore', timeout: 15_000, env: definedEnv(env) });
    if (r.status === 0) {
      found = cmd;
      break;
    }
  }
  detected.set(key, found);
  return found;
}
