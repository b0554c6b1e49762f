import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type FetchedPackage, fetchPackage } from '@kdelta/git-source';
import { scratchDir } from './fs-util.js';

export interface FetchContext {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly progress: (line: string) => void;
  /** Scratch directories to remove at the end. */
  readonly scratch: string[];
}

/** Fetch `repo`'s `directory` at `ref` into a new scratch directory; returns the package path. */
export async function fetchToScratch(
  ctx: FetchContext,
  repo: string,
  directory: string,
  ref: string | undefined,
): Promise<FetchedPackage & { path: string }> {
  const holder = scratchDir('fetch');
  ctx.scratch.push(holder);
  const dest = join(holder, 'pkg');
  const cacheDir = ctx.env.KDELTA_CACHE_DIR;
  const fetched = await fetchPackage({
    repo,
    directory,
    dest,
    cwd: ctx.cwd,
    env: ctx.env,
    ...(ref !== undefined ? { ref } : {}),
    ...(cacheDir ? { cacheDir } : {}),
  });
  return { ...fetched, path: dest };
}

export function cleanScratch(ctx: FetchContext): void {
  for (const d of ctx.scratch.splice(0)) rmSync(d, { recursive: true, force: true });
}
