import type { Io } from '../command.js';

/** Progress lines go to stderr; stdout is kept for results. */
export function progressTo(io: Io): (line: string) => void {
  return (line) => io.stderr(`${line}\n`);
}

/**
 * Progress held back until the command has done its work: on success `flush` prints it; on
 * failure it is dropped, so that the first line on stderr is the error itself.
 */
export function heldProgress(io: Io): { line: (line: string) => void; flush: () => void } {
  const lines: string[] = [];
  return {
    line: (line) => void lines.push(line),
    flush: () => {
      if (lines.length > 0) io.stderr(`${lines.join('\n')}\n`);
      lines.length = 0;
    },
  };
}
