import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type FetchedPackage, type UrlCredentials, fetchPackage, withoutCredentials } from '@kdelta/git-source';
import { scratchDir } from './fs-util.js';

export interface FetchContext {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly progress: (line: string) => void;
  /**
   * Lines said at once even when progress is held: what a command already changed, such as the
   * recovery of a swap an interrupted update left half done, which stands whether or not the
   * command itself then succeeds.
   */
  readonly notice?: (line: string) => void;
  /** Scratch directories to remove at the end. */
  readonly scratch: string[];
  /**
   * Credentials given on the command line, by repository URL (without credentials): they reach
   * git for that repository only, in its environment, and are never recorded.
   */
  readonly credentials?: ReadonlyMap<string, UrlCredentials>;
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
  // A repo read from a Kptfile written by an older tool may carry credentials of its own:
  // git-source takes them out of the URL and uses them in preference to these.
  const credentials = ctx.credentials?.get(withoutCredentials(repo));
  const fetched = await fetchPackage({
    repo,
    ...(credentials ? { credentials } : {}),
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
