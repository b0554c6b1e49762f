import { KdeltaError } from '@kdelta/errors';

export type UpdateErrorCode =
  | 'no-upstream' // the package's Kptfile names no upstream to update from
  | 'no-origin' // the version the package was fetched at cannot be had
  | 'not-a-package'
  | 'destination-exists' // `getPackage` into a path that exists already
  | 'unknown-strategy'
  | 'local-changes' // fast-forward refused: the package was changed locally
  | 'subpackage-clash' // a subpackage added in both upstream and local
  | 'update-failed';

/** Why a get or an update refused or failed; nothing was written. */
export class UpdateError extends KdeltaError {
  override readonly name = 'UpdateError';
  declare readonly code: UpdateErrorCode;
  constructor(message: string, code: UpdateErrorCode = 'update-failed', file?: string) {
    super({ code, message, file });
  }
}
