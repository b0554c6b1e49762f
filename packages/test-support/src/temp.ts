import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

/**
 * A new empty directory under the system's temp directory (symlinks resolved, as git and the CLI
 * report paths), removed when the test that asked for it ends, pass or fail. Asked for in a
 * `describe` body instead, it is removed when that describe's tests are done.
 */
export function tempDir(prefix = 'kdelta-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    // not inside a test: vitest refuses onTestFinished, and the enclosing describe collects afterAll
    afterAll(remove);
  }
  return dir;
}
