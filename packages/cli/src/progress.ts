import type { ProgressEvent } from '@kdelta/package-update';
import type { Io } from './command.js';

/**
 * Progress held back until the command has done its work: on success `flush` prints it; on
 * failure it is dropped, so that the first line on stderr is the error itself. A recovery line
 * (an interrupted update finished or rolled back) is printed at once: it stays true whatever
 * the command does next.
 */
export function heldProgress(io: Io): { event: (event: ProgressEvent) => void; flush: () => void } {
  const lines: string[] = [];
  return {
    event: ({ message, kind }) => {
      if (kind === 'recovery') io.stderr(`${message}\n`);
      else lines.push(message);
    },
    flush: () => {
      if (lines.length > 0) io.stderr(`${lines.join('\n')}\n`);
      lines.length = 0;
    },
  };
}
