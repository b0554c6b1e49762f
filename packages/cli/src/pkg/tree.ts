import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const KPTFILE = 'Kptfile';

/** A file of a package: path relative to the package root (`/`-separated) and its bytes. */
export interface PkgFile {
  readonly path: string;
  readonly text: string;
}

export function isKrmPath(path: string): boolean {
  const base = path.split('/').pop() ?? '';
  return base !== KPTFILE && /\.ya?ml$/i.test(base);
}

export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isSkipped(name: string): boolean {
  return name === '.git';
}

/**
 * The files of one package (not those of its subpackages: directories holding a Kptfile), with
 * the empty directories it contains (kpt keeps those). Symlinks are skipped, as kpt does.
 */
export function packageFiles(root: string): { files: PkgFile[]; dirs: string[] } {
  const files: PkgFile[] = [];
  const dirs: string[] = [];
  if (!existsSync(root)) return { files, dirs };
  const walk = (abs: string, rel: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (isSkipped(entry.name)) continue;
      const childAbs = join(abs, entry.name);
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (existsSync(join(childAbs, KPTFILE))) continue; // a subpackage
        dirs.push(childRel);
        walk(childAbs, childRel);
      } else if (entry.isFile()) {
        files.push({ path: childRel, text: readFileSync(childAbs, 'utf8') });
      }
    }
  };
  walk(root, '');
  return { files, dirs };
}

/** Relative paths of all packages under `root` (including `.` for the root when it has a Kptfile), nested ones included. */
export function subpackagePaths(root: string, options: { includeRemote?: boolean; recurseIntoRemote?: boolean } = {}): string[] {
  const out: string[] = [];
  if (!existsSync(root)) return out;
  const walk = (abs: string, rel: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (!entry.isDirectory() || isSkipped(entry.name)) continue;
      const childAbs = join(abs, entry.name);
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (existsSync(join(childAbs, KPTFILE))) {
        const remote = hasUpstream(join(childAbs, KPTFILE));
        if (remote && !options.includeRemote) continue;
        out.push(childRel);
        if (remote && !options.recurseIntoRemote) continue;
      }
      walk(childAbs, childRel);
    }
  };
  walk(root, '');
  return out.sort();
}

/** Whether a Kptfile names an upstream (a remote package), judged leniently. */
export function hasUpstream(kptfilePath: string): boolean {
  try {
    const data = parse(readFileSync(kptfilePath, 'utf8')) as { upstream?: { git?: unknown } } | null;
    return Boolean(data?.upstream?.git);
  } catch {
    return false;
  }
}
