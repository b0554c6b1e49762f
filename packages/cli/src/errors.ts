/**
 * How the CLI reports a failure: one place maps every error to its exit code and its text.
 * Commands throw; `main` catches and calls these two. (Conflicts with `--on-conflict fail` are
 * not errors: commands return exit 3 for them.)
 */
import { KdeltaError, locationParts } from '@kdelta/errors';
import { ExitCode, UsageError } from './command.js';

export type CliInputErrorCode =
  | 'invalid-yaml'
  | 'invalid-variant' // a PackageVariant or PackageVariantSet that fails validation
  | 'invalid-object' // an `--objects` document that is not a usable KRM object
  | 'duplicate-object' // the same object given twice under `--objects`
  | 'not-a-package' // a directory with no Kptfile where a kpt package is needed
  | 'unwritable-output' // an output path (a flag's) that cannot be written: checked before anything is written
  | 'variant-not-applied'; // the variant engine could not apply a valid PackageVariant to the package

/** A file the user gave that cannot be used; names the file, the document and why. */
export class CliInputError extends KdeltaError {
  override readonly name = 'CliInputError';
  declare readonly code: CliInputErrorCode;
  constructor(
    code: CliInputErrorCode,
    message: string,
    at: { file?: string | undefined; document?: number | string | undefined; path?: string | undefined } = {},
  ) {
    super({ code, message, ...at });
  }
}

/** Every thrown failure is exit 1 (DESIGN.md's contract); kinds differ only in how they are printed. */
export function exitCodeFor(_error: unknown): number {
  return ExitCode.failure;
}

/** The stderr text for an error thrown by command `name` (`kdelta pkg get`). */
export function formatError(error: unknown, name: string, env: Readonly<Record<string, string | undefined>> = {}): string {
  const debug = env['KDELTA_DEBUG'] && error instanceof Error && error.stack ? `${error.stack}\n` : '';
  if (error instanceof UsageError) return `${name}: ${error.message}\nRun \`${name} --help\` for usage.\n`;
  if (error instanceof KdeltaError) {
    // A message that does not say where gets the known location in front of it.
    const missing = locationParts(error).filter((part) => !error.message.includes(part.replace(/^\./, '')));
    return `${name}: ${[...missing, error.message].join(': ')}\n${debug}`;
  }
  return `${name}: ${error instanceof Error ? error.message : String(error)}\n${debug}`;
}
