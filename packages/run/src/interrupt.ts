import { constants } from 'node:os';
import { releaseHeldLocks, stopRunningGit } from '@kdelta/git-source';
import { removeAllTempDirs } from '@kdelta/package-update';

/**
 * Run a command with SIGINT and SIGTERM handlers that remove its temporary and work directories and
 * its cache locks, then exit with 128 + the signal number, as a shell reports a signal. `finally`
 * blocks do not run when a signal ends the process; without this an interrupted command would leave
 * full copies of packages behind. A swap of a package is never half done when a handler runs: it is
 * synchronous, and handlers run between turns of the event loop (see kptfile-model's swap.ts).
 */
export async function withInterruptCleanup<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const handler = (signal: NodeJS.Signals) => {
    // The handler runs between two turns of the event loop: a run checks for the abort between its
    // steps (each one a turn), so it gets here within one synchronous step of the signal.
    controller.abort(new Error(`interrupted by ${signal}`));
    // first the git processes: a signal sent to kdelta alone leaves them writing into the
    // directories removed next, under the locks released last
    stopRunningGit();
    removeAllTempDirs();
    releaseHeldLocks();
    process.exit(128 + (constants.signals[signal] ?? 0));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  try {
    return await fn(controller.signal);
  } finally {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  }
}
