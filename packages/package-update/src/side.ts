import { sep } from 'node:path';
import { withoutCredentials } from '@kdelta/git-source';

/** A fetched version of the package (upstream or origin): where it was read from, and its name for errors. */
export interface Side {
  readonly path: string;
  readonly label: string;
}

/** `upstream (https://host/repo/pkg@v2)`: how a side's files are named in errors. */
export function sideLabel(side: 'upstream' | 'origin', repo: string, directory: string | undefined, ref: string): string {
  const dir = (directory ?? '/').replace(/^\/+/, '');
  return `${side} (${withoutCredentials(repo).replace(/\/+$/, '')}${dir ? `/${dir}` : ''}${ref ? `@${ref}` : ''})`;
}

/**
 * Runs `fn` (sync or async); an error naming a file of a fetched side by the scratch directory it
 * was read from is re-labelled with the side and the file's path in the package (`upstream
 * (…@v2): deploy.yaml: …`): the scratch directory means nothing to the user and is gone already.
 * Both the message and an error's `file` field are re-labelled: the CLI puts a `file` its message
 * does not contain in front of the message.
 */
export function labelled<T>(sides: readonly Side[], fn: () => T): T {
  let out: T;
  try {
    out = fn();
  } catch (error) {
    throw relabel(sides, error);
  }
  if (out instanceof Promise) return out.catch((error: unknown) => Promise.reject(relabel(sides, error))) as T;
  return out;
}

function relabel(sides: readonly Side[], error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const rename = (text: string) => {
    let out = text;
    for (const side of sides) {
      if (side.path === '') continue;
      out = out.split(`${side.path}${sep}`).join(`${side.label}: `).split(side.path).join(side.label);
    }
    return out;
  };
  const message = rename(error.message);
  if (message !== error.message) error.message = message;
  const located = error as unknown as { file?: unknown };
  if (typeof located.file === 'string') {
    const file = rename(located.file);
    if (file !== located.file) located.file = file;
  }
  return error;
}
