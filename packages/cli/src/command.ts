import { KdeltaError } from '@kdelta/errors';

/** What every `kdelta` command is: a name, its help, and a run function over plain arguments. */
export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Set when stderr is a terminal (a live view may redraw it): its width. */
  readonly stderrTerminal?: { readonly columns: number } | undefined;
  /** Aborted when the command is interrupted (SIGINT, SIGTERM): long commands stop between steps. */
  readonly signal?: AbortSignal | undefined;
}

export interface Command {
  /** Words that select the command, e.g. `['pkg', 'get']`. */
  readonly path: readonly string[];
  /** One line for the command list. */
  readonly summary: string;
  /** The full `--help` text. */
  readonly help: string;
  run(args: readonly string[], io: Io): Promise<number>;
}

/** A problem with what the user typed or gave us: printed as `kdelta <cmd>: <message>`, exit 1. */
export class UsageError extends KdeltaError {
  override readonly name = 'UsageError';
  declare readonly code: 'usage';
  constructor(message: string) {
    super({ code: 'usage', message });
  }
}

/** Exit codes of the CLI contract (DESIGN.md). */
export const ExitCode = {
  ok: 0,
  failure: 1,
  conflicts: 3,
} as const;
