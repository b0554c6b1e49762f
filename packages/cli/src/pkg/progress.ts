import type { Io } from '../command.js';

/** Progress lines go to stderr; stdout is kept for results. */
export function progressTo(io: Io): (line: string) => void {
  return (line) => io.stderr(`${line}\n`);
}

/**
 * Progress held back until the command has done its work: on success `flush` prints it; on
 * failure it is dropped, so that the first line on stderr is the error itself. With
 * `KDELTA_PROGRESS=live` every line is printed as it comes (a log that follows long work).
 * `notice` prints at once in any case.
 */
export function heldProgress(io: Io): { line: (line: string) => void; flush: () => void; notice: (line: string) => void } {
  const notice = (line: string) => void io.stderr(`${line}\n`);
  if (io.env.KDELTA_PROGRESS === 'live') return { line: notice, flush: () => undefined, notice };
  const lines: string[] = [];
  return {
    notice,
    line: (line) => void lines.push(line),
    flush: () => {
      if (lines.length > 0) io.stderr(`${lines.join('\n')}\n`);
      lines.length = 0;
    },
  };
}
