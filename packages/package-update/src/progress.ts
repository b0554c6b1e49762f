/**
 * A progress line, in kpt's wording (`Updating package "x" with strategy "resource-merge".`).
 * `recovery` lines say that an interrupted swap of the package was finished or rolled back before
 * the operation began: they are true whatever happens next, so a caller holding progress back
 * until success should show them at once.
 */
export interface ProgressEvent {
  readonly message: string;
  readonly kind?: 'progress' | 'recovery';
}

export type ProgressListener = (event: ProgressEvent) => void;

export function progressLines(listener: ProgressListener | undefined): (line: string) => void {
  return listener ? (message) => listener({ message }) : () => undefined;
}

export function reportRecovery(listener: ProgressListener | undefined, message: string | undefined): void {
  if (message !== undefined) listener?.({ message, kind: 'recovery' });
}
