// The CLI in process, its output captured: what the pkg command tests (and the conformance
// scenarios of @kdelta/test-support) run.
import { main } from '../../main.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(args: string[], cwd: string, env: Record<string, string | undefined>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd,
    env,
  });
  return { code, stdout, stderr };
}
