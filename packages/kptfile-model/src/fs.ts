import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { KdeltaError } from '@kdelta/errors';

/** Writes a file atomically: a temporary sibling, then a rename, so readers never see half a file. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.kdelta-tmp`);
  try {
    await writeFile(temp, text);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Every file below a directory whose name passes the filter, as paths relative to it (`/`-separated), sorted. */
export async function listFiles(root: string, accept: (name: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name === '.git' || entry.name === 'node_modules') continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && accept(entry.name)) out.push(relative(root, full).split(sep).join('/'));
    }
  }
  await walk(root);
  return out.sort();
}

export async function readText(path: string): Promise<string> {
  return readFile(path, 'utf8');
}

export interface OutputPath {
  /** Absolute. */
  readonly path: string;
  /** As the user gave it, for the message. */
  readonly shown: string;
  /** What gave it: `--report`, `RunSettings spec.proposalsDir`... */
  readonly what: string;
  /** A file written there, or a directory written into. */
  readonly kind: 'file' | 'directory';
}

/**
 * Whether a command will be able to write an output path, checked before it writes or pushes
 * anything, so a run does not push every branch and then fail on its report. The existing part of
 * the path must be directories (and the path itself of the right kind), and the nearest existing
 * directory must take a new entry: that is tried (a directory made and removed at once), since
 * permission bits do not tell (root) and some file systems refuse what they appear to allow
 * (`/proc`, where a recursive mkdir never returns).
 */
export async function checkOutputPath(out: OutputPath): Promise<void> {
  const fail = (why: string): never => {
    throw new KdeltaError({ code: 'unwritable-output', message: `${out.what} ${out.shown}: ${why}` });
  };
  const info = await stat(out.path).catch(() => undefined);
  if (info?.isDirectory() && out.kind === 'file') fail('is a directory, not a file');
  if (info && !info.isDirectory() && out.kind === 'directory') fail('is a file, not a directory');
  let dir = info?.isDirectory() ? out.path : dirname(out.path);
  for (;;) {
    const found = await stat(dir).catch(() => undefined);
    if (found) {
      if (!found.isDirectory()) fail(`${dir} is a file, not a directory`);
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) fail('no part of the path exists');
    dir = parent;
  }
  let probe: string | undefined;
  try {
    probe = await mkdtemp(join(dir, '.kdelta-probe-'));
  } catch (error) {
    fail(`cannot write in ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (probe) await rmdir(probe).catch(() => undefined);
}
