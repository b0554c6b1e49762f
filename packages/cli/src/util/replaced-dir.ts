import { realpathSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/**
 * A package is written by swapping in a new directory (all or nothing), so a shell whose working
 * directory is the package, or inside it, is left in the old one until it enters it again. The
 * command's own working directory is the shell's: when it is there, say so (to a person at a
 * terminal: the commands print it only when stderr is one).
 */
export function replacedDirectoryNote(dir: string, cwd: string): string | undefined {
  const rel = relative(real(dir), real(cwd));
  if (rel !== '' && (rel === '..' || rel.startsWith('../') || isAbsolute(rel))) return undefined;
  return 'note: the package directory was replaced as a whole (an all-or-nothing write): a shell in it sees the new files after `cd .`\n';
}
