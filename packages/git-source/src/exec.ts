import { type ChildProcess, execFile } from 'node:child_process';
import { GitError, classify } from './errors.js';

export interface GitRunOptions {
  /** Working directory (`git -C`). */
  readonly cwd?: string;
  /** Extra environment, merged over process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Secrets to scrub from every message, argument and output that leaves this module. */
  readonly secrets?: readonly string[];
  /** Receives git's progress lines (stderr) as they arrive. */
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

/** Set by credentialsFor: what credentials git was given (a name, never a value), for the message of a refusal. */
export const SENT_CREDENTIALS_ENV = 'KDELTA_SENT_CREDENTIALS';

/**
 * Set by remoteContext when the user's credentials were held back from a repository that package
 * content named: what to say (the file that named it, the repository, the setting that would
 * allow it) when the server then asks for credentials or hides the repository.
 */
export const WITHHELD_CREDENTIALS_ENV = 'KDELTA_WITHHELD_CREDENTIALS';

export interface GitResult {
  readonly stdout: string;
  readonly stderr: string;
}

const baseEnv: Readonly<Record<string, string>> = {
  // Never block on a password prompt: credentials come from the environment or git's helpers.
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
  GCM_INTERACTIVE: 'never',
  // A user's GIT_TRACE* output (possibly to a file) must not show the Authorization header we pass.
  GIT_TRACE_REDACT: '1',
  LC_ALL: 'C',
  LANG: 'C',
};

/** The git processes this process started and that have not exited yet. */
const running = new Set<ChildProcess>();

/**
 * Kill (SIGKILL) every git process this process started that still runs. For a signal handler,
 * before it removes the directories those processes write into and releases the locks they work
 * under: a signal sent to kdelta alone (not to its process group) does not reach them.
 */
export function stopRunningGit(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
  running.clear();
}

/** Run `git <args>` with execFile (no shell); a failure becomes a classified, redacted GitError. */
export function runGit(args: readonly string[], options: GitRunOptions = {}): Promise<GitResult> {
  const secrets = options.secrets ?? [];
  const env = gitProcessEnv(options.env);
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...args],
      { cwd: options.cwd, env, maxBuffer: 512 * 1024 * 1024, encoding: 'utf8', signal: options.signal },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ stdout, stderr });
          return;
        }
        const exitCode = typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : undefined;
        const detail = stderr.trim() || error.message;
        const code = classify(stderr);
        // Credentials were sent and the server still asked for some: they were refused (git's own
        // words, "could not read Username", would send the user looking for a missing one).
        const sent = options.env?.[SENT_CREDENTIALS_ENV];
        const withheld = options.env?.[WITHHELD_CREDENTIALS_ENV];
        const text =
          withheld && (code === 'auth' || code === 'not-a-repository')
            ? `${withheld} (git ${args[0] ?? ''}: ${detail.split('\n').pop()})`
            : code === 'auth' && sent
              ? `git ${args[0] ?? ''} failed: the server refused ${sent} (HTTP 401: bad, expired or revoked credentials)`
              : `git ${args[0] ?? ''} failed: ${detail}${code === 'auth' ? authHint : ''}`;
        reject(
          new GitError({
            code,
            message: text,
            args,
            stderr,
            ...(exitCode !== undefined ? { exitCode } : {}),
            secrets,
          }),
        );
      },
    );
    running.add(child);
    child.once('exit', () => running.delete(child));
    if (options.onProgress && child.stderr) {
      const onProgress = options.onProgress;
      let pending = '';
      child.stderr.on('data', (chunk: string | Buffer) => {
        pending += chunk.toString();
        const parts = pending.split(/\r|\n/);
        pending = parts.pop() ?? '';
        for (const line of parts) if (line.trim()) onProgress(redactLine(line, secrets));
      });
    }
  });
}

/** The environment a git process of this module runs in: `extra` over process.env, never prompting. */
export function gitProcessEnv(extra: Readonly<Record<string, string | undefined>> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...baseEnv, ...extra })) {
    if (v !== undefined) env[k] = v;
  }
  // Variables of an enclosing git (hooks) would point this git at the wrong repository.
  for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_PREFIX']) {
    if (!(extra && k in extra)) delete env[k];
  }
  return env;
}

/** Track a git process started elsewhere in this module, so that {@link stopRunningGit} ends it too. */
export function trackGit(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
}

// Credentials given in a URL are used once and never stored, so a later call may need them again.
const authHint =
  '\n(the repository asked for credentials: give them in the URL, in KDELTA_GIT_TOKEN for https, or through a git credential helper)';

function redactLine(line: string, secrets: readonly string[]): string {
  return new GitError({ code: 'failed', message: line, secrets }).message;
}
