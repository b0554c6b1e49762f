// Command lines of the scenarios (`pkg get …`, `pkg update …`) run through the library's API,
// printing what the CLI prints: the progress lines, then its closing lines.
import { defaultBranch } from '@kdelta/git-source';
import { getPackage, updatePackage } from '../index.js';
import { parseGetArgs, parseUpdateArgs } from './args.js';

export interface DriveResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function split(argv: readonly string[]): { positionals: string[]; strategy: string | undefined } {
  const positionals: string[] = [];
  let strategy: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--strategy') strategy = argv[++i];
    else if (a.startsWith('--strategy=')) strategy = a.slice('--strategy='.length);
    else positionals.push(a);
  }
  return { positionals, strategy };
}

export async function drive(argv: readonly string[], cwd: string, env: Record<string, string | undefined>): Promise<DriveResult> {
  let stderr = '';
  const progress = ({ message }: { message: string }) => void (stderr += `${message}\n`);
  const [, command, ...rest] = argv;
  const { positionals, strategy } = split(rest);
  try {
    if (command === 'get') {
      const args = await parseGetArgs(positionals, { cwd, strategy, defaultBranch: (repo) => defaultBranch({ repo, cwd, env }) });
      const result = await getPackage({ ...args, cwd, env, progress });
      stderr += `Fetched ${args.repo}${args.directory === '/' ? '' : args.directory}@${args.ref} (${result.commit.slice(0, 12)}) into ${result.destination}\n`;
      return { code: 0, stdout: '', stderr };
    }
    const args = parseUpdateArgs(positionals, { cwd, strategy });
    const result = await updatePackage({
      dir: args.pkgPath,
      ...(args.ref ? { ref: args.ref } : {}),
      ...(args.strategy ? { strategy: args.strategy } : {}),
      displayRoot: cwd,
      cwd,
      env,
      progress,
    });
    if (result.conflicts.length > 0) {
      const n = result.conflicts.length;
      stderr += `${n} conflict${n === 1 ? '' : 's'} between local and upstream changes (kdelta pkg diff shows them before an update):\n`;
      for (const c of result.conflicts) stderr += `  ${c.package}: ${c.message}\n`;
    }
    return { code: 0, stdout: '', stderr };
  } catch (error) {
    return { code: 1, stdout: '', stderr: `${stderr}kdelta: ${error instanceof Error ? error.message : String(error)}\n` };
  }
}
