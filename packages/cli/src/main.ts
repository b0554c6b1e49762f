import { readFileSync } from 'node:fs';
import type { Command, Io } from './command.js';
import { commands } from './commands/index.js';
import { exitCodeFor, formatError } from './errors.js';
import { withInterruptCleanup } from '@kdelta/run';

const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function overview(): string {
  const width = Math.max(...commands.map((c) => c.path.join(' ').length), 8);
  const lines = commands.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`);
  return [
    'kdelta keeps every copy of a kpt package current without losing local edits.',
    '',
    'Usage: kdelta <command> [flags]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `kdelta <command> --help` for the flags of a command.',
    '',
  ].join('\n');
}

/** The longest command whose words start argv. */
function findCommand(argv: readonly string[]): { command: Command; rest: readonly string[] } | undefined {
  let best: Command | undefined;
  for (const c of commands) {
    if (c.path.every((word, i) => argv[i] === word) && (!best || c.path.length > best.path.length)) best = c;
  }
  return best && { command: best, rest: argv.slice(best.path.length) };
}

export function defaultIo(): Io {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    stderrTerminal: process.stderr.isTTY && process.env.TERM !== 'dumb' ? { columns: process.stderr.columns || 80 } : undefined,
  };
}

export async function main(argv: readonly string[], io: Io = defaultIo()): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout(overview());
    return 0;
  }
  if (argv[0] === '--version' || argv[0] === 'version') {
    io.stdout(`kdelta ${version}\n`);
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = commands.filter((c) => c.path[0] === argv[0]);
    if (group.length > 0 && (argv.length === 1 || argv[1] === '--help' || argv[1] === '-h')) {
      const width = Math.max(...group.map((c) => c.path.join(' ').length));
      const list = `Commands under "${argv[0]}":\n${group.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`).join('\n')}\n`;
      // `kdelta pkg` alone names no command: a usage error (stderr, exit 1); with --help, the answer.
      if (argv.length === 1) {
        io.stderr(`kdelta ${argv[0]}: a subcommand is required\n\n${list}`);
        return 1;
      }
      io.stdout(list);
      return 0;
    }
    io.stderr(`kdelta: unknown command "${argv.slice(0, 2).join(' ')}"\n\n${overview()}`);
    return 1;
  }
  const { command, rest } = found;
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(command.help.endsWith('\n') ? command.help : `${command.help}\n`);
    return 0;
  }
  try {
    return await withInterruptCleanup((signal) => command.run(rest, { ...io, signal: io.signal ?? signal }));
  } catch (error) {
    io.stderr(formatError(error, `kdelta ${command.path.join(' ')}`, io.env));
    return exitCodeFor(error);
  }
}
