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
    cpSync(dir, work, { recursive: true, verbatimSymlinks: true });
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
  const updated = files.map((f) => ({ ...f, next: addMergeComments(f.text) }));
  for (const f of updated) if (f.next !== f.text) writeFileSync(f.path, f.next);
}
