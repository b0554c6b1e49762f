import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { addMergeComments } from '@kdelta/kptfile-model';
import { makeTempDir } from './temp.js';
import { isKrmPath } from './tree.js';

/** A fresh scratch directory in the OS temp directory (removed by the caller, or on a signal). */
export function scratchDir(prefix: string): string {
  return makeTempDir(tmpdir(), prefix);
}

/** Move a directory tree: a rename, or a copy and a removal when `to` is on another filesystem. */
export function moveTree(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    copyTreeFast(from, to);
    rmSync(from, { recursive: true, force: true });
  }
}

/** Copy a whole directory tree as is: `cp -a` where there is one (much faster), else node's cpSync. */
export function copyTreeFast(from: string, to: string): void {
  if (process.platform !== 'win32') {
    try {
      execFileSync('cp', ['-a', '--', from, to], { stdio: 'ignore' });
      return;
    } catch {
      rmSync(to, { recursive: true, force: true });
    }
  }
  cpSync(from, to, { recursive: true, verbatimSymlinks: true });
}

/** Copy a directory tree (symlinks kept as links), skipping `.git`. */
export function copyTree(from: string, to: string): void {
  cpSync(from, to, { recursive: true, verbatimSymlinks: true, filter: (src) => basename(src) !== '.git' });
}

/** Every document of the file already has its merge comment and identifier (cheap text check). */
function alreadyMarked(text: string): boolean {
  const kinds = text.match(/^kind:/gm)?.length ?? 0;
  if (kinds === 0) return false;
  const comments = text.match(/^metadata:\s*#\s*kpt-merge:/gm)?.length ?? 0;
  const ids = text.match(/internal\.kpt\.dev\/upstream-identifier:/g)?.length ?? 0;
  return comments === kinds && ids === kinds;
}

/** Add `# kpt-merge:` comments and upstream-identifier annotations to every resource file under `dir`. */
export function addMergeCommentsToTree(dir: string): void {
  const walk = (abs: string, rel: string): { path: string; text: string }[] => {
    const out: { path: string; text: string }[] = [];
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = join(abs, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) out.push(...walk(p, r));
      else if (e.isFile() && isKrmPath(r)) out.push({ path: p, text: readFileSync(p, 'utf8') });
    }
    return out;
  };
  const files = walk(dir, '');
  // kpt skips the whole tree when any file fails to parse
  const updated = files.map((f) => ({ ...f, next: alreadyMarked(f.text) ? f.text : addMergeComments(f.text) }));
  for (const f of updated) if (f.next !== f.text) writeFileSync(f.path, f.next);
}
