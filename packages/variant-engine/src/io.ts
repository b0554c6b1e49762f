import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * Package directory I/O for the variant commands. Private stand-in until kptfile-model's package
 * read/write covers what is needed here: all files of the package (subdirectories included, `.git`
 * skipped), and an all-or-nothing write of the changed files.
 */
export async function readPackageFiles(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(rel: string): Promise<void> {
    const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      if (e.name === '.git') continue;
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(relPath);
      else if (e.isFile()) out.set(relPath, await fs.readFile(path.join(dir, relPath), 'utf8'));
    }
  }
  await walk('');
  return out;
}

/**
 * Write files into `dir`: each goes to a temporary sibling first, then all are renamed into place,
 * so a failure before the renames leaves the package untouched.
 */
export async function writePackageFiles(dir: string, files: ReadonlyMap<string, string>): Promise<void> {
  const staged: { tmp: string; dest: string }[] = [];
  try {
    for (const [rel, text] of files) {
      const dest = path.join(dir, ...rel.split('/'));
      const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomBytes(6).toString('hex')}.tmp`);
      await fs.mkdir(path.dirname(dest), { recursive: true });
      await fs.writeFile(tmp, text, 'utf8');
      staged.push({ tmp, dest });
    }
  } catch (error) {
    await Promise.all(staged.map((s) => fs.rm(s.tmp, { force: true })));
    throw error;
  }
  for (const s of staged) await fs.rename(s.tmp, s.dest);
}
