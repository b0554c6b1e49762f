import { mkdir, rm, stat } from 'node:fs/promises';
import { GitError } from './errors.js';

const staleMs = 10 * 60 * 1000;

/** Run `fn` holding a directory lock (mkdir is atomic); a lock older than 10 minutes is stale. */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>, timeoutMs = 5 * 60 * 1000): Promise<T> {
  const started = Date.now();
  let delay = 20;
  for (;;) {
    try {
      await mkdir(lockPath);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const info = await stat(lockPath).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > staleMs) {
        await rm(lockPath, { recursive: true, force: true });
        continue;
      }
      if (Date.now() - started > timeoutMs) throw new GitError({ code: 'lock-timeout', message: `timed out waiting for the cache lock ${lockPath}` });
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 500);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { recursive: true, force: true });
  }
}
