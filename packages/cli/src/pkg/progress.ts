import type { Io } from '../command.js';

/** Progress lines go to stderr; stdout is kept for results. */
export function progressTo(io: Io): (line: string) => void {
  return (line) => io.stderr(`${line}\n`);
}
