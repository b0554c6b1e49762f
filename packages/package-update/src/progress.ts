/** A progress line, in kpt's wording (`Updating package "x" with strategy "resource-merge".`). */
export interface ProgressEvent {
  readonly message: string;
}

export type ProgressListener = (event: ProgressEvent) => void;

export function progressLines(listener: ProgressListener | undefined): (line: string) => void {
  return listener ? (message) => listener({ message }) : () => undefined;
}
