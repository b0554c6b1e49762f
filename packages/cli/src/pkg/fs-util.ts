import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { addMergeComments } from '@kdelta/kptfile-model';
import { isKrmPath } from './tree.js';

/** A fresh scratch directory (removed by the caller). */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `kdelta-${prefix}-`));
}

/** A temporary sibling of `path` (same filesystem, so a rename can replace `path`). */
export function siblingTemp(path: string, tag: string): string {
  return mkdtempSync(join(dirname(path), `.${basename(path)}.kdelta-${tag}-`));
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

/**
 * Run `fn` on a copy of directory `dir`; when it succeeds the copy replaces `dir`, when it throws
 * `dir` is left exactly as it was.
 */
export async function atomically<T>(dir: string, fn: (work: string) => Promise<T>): Promise<T> {
  const holder = siblingTemp(dir, 'work');
  const work = join(holder, 'pkg');
  try {
    copyTreeFast(dir, work);
    const result = await fn(work);
    const backup = join(holder, 'old');
    renameSync(dir, backup);
    try {
      renameSync(work, dir);
    } catch (error) {
      renameSync(backup, dir);
      throw error;
    }
    return result;
  } finally {
    rmSync(holder, { recursive: true, force: true });
  }
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
