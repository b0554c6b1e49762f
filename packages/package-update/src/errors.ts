/** A package that cannot be updated (as asked): the message says which and why. */
export class UpdateError extends Error {
  override readonly name = 'UpdateError';
}
