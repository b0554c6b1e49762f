import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryIdentity, withoutCredentials } from '@kdelta/git-source';
import { writeFileAtomic } from '@kdelta/kptfile-model';
import { ForgeError } from './errors.js';
import type { CommitSignal } from './forge.js';

/**
 * The local forge's health signals: what a person says of a downstream commit (`kdelta status
 * set`), as Flux or Argo CD post a commit status on GitHub. Kept in `<proposals dir>/statuses.json`,
 * the latest per repository, commit and name. Parsing and editing are pure; the two functions at
 * the end read and write the file.
 */

export const LOCAL_STATUSES_FILE = 'statuses.json';

export type LocalStatusState = 'success' | 'failure' | 'pending';
export const LOCAL_STATUS_STATES: readonly LocalStatusState[] = ['success', 'failure', 'pending'];

export interface LocalStatus {
  /** The downstream repository, as `repositoryIdentity` spells it (no credentials). */
  readonly repo: string;
  /** The Repository's name, for people reading the file and the listing. */
  readonly downstream: string;
  readonly commit: string;
  /** The status's name (a rollout's `health.name`). */
  readonly name: string;
  readonly state: LocalStatusState;
  readonly description?: string | undefined;
  /** When it was set (ISO 8601). */
  readonly at: string;
}

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The statuses of the file's text; a file that is not as kdelta writes it is an error naming the entry and field. */
export function parseLocalStatuses(text: string, file: string): LocalStatus[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ForgeError('invalid-statuses-file', `${file}: not JSON: ${(error as Error).message}`, { file });
  }
  const list = (data as { statuses?: unknown } | null)?.statuses;
  if (!Array.isArray(list)) throw new ForgeError('invalid-statuses-file', `${file}: expected {"statuses": [...]}`, { file });
  return list.map((entry: unknown, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    const field = (name: string, ok: (v: unknown) => boolean, expected: string, optional = false) => {
      const v = e[name];
      if ((optional && v === undefined) || ok(v)) return v;
      throw new ForgeError('invalid-statuses-file', `${file}: statuses[${i}].${name}: expected ${expected} (got ${JSON.stringify(v)})`, {
        file,
        path: `statuses[${i}].${name}`,
      });
    };
    const text = (v: unknown) => typeof v === 'string' && v !== '';
    return {
      repo: field('repo', text, 'a repository') as string,
      downstream: field('downstream', text, 'a Repository name') as string,
      commit: field('commit', (v) => typeof v === 'string' && COMMIT.test(v), 'a full commit id') as string,
      name: field('name', text, 'a status name') as string,
      state: field('state', (v) => LOCAL_STATUS_STATES.includes(v as LocalStatusState), 'success, failure or pending') as LocalStatusState,
      description: field('description', (v) => typeof v === 'string', 'text', true) as string | undefined,
      at: field('at', text, 'a date') as string,
    };
  });
}

export function renderLocalStatuses(statuses: readonly LocalStatus[]): string {
  return `${JSON.stringify({ statuses }, null, 2)}\n`;
}

const sameSlot = (a: LocalStatus, b: Pick<LocalStatus, 'repo' | 'commit' | 'name'>) =>
  a.repo === b.repo && a.commit === b.commit && a.name === b.name;

/** The list with `status` in its slot (repository, commit, name): the latest replaces the one before. */
export function withLocalStatus(statuses: readonly LocalStatus[], status: LocalStatus): LocalStatus[] {
  return [...statuses.filter((s) => !sameSlot(s, status)), status];
}

/** A downstream's signal of that name on a commit, as a rollout reads it. */
export function localSignal(statuses: readonly LocalStatus[], repo: string, commit: string, name: string): CommitSignal {
  const found = statuses.find((s) => sameSlot(s, { repo: repositoryIdentity(repo), commit, name }));
  return found ? { state: found.state, ...(found.description ? { description: found.description } : {}) } : { state: 'missing' };
}

/** The statuses of a proposals directory (none when it has no file). */
export async function readLocalStatuses(dir: string, display = dir): Promise<LocalStatus[]> {
  const file = join(dir, LOCAL_STATUSES_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return parseLocalStatuses(text, join(display, LOCAL_STATUSES_FILE));
}

/** Set a status (replacing the one in its slot) and write the file at once, whole; returns the status as kept. */
export async function setLocalStatus(
  dir: string,
  input: Omit<LocalStatus, 'repo' | 'at'> & { readonly repo: string; readonly at: Date },
  display = dir,
): Promise<LocalStatus> {
  const status: LocalStatus = {
    repo: repositoryIdentity(withoutCredentials(input.repo)),
    downstream: input.downstream,
    commit: input.commit,
    name: input.name,
    state: input.state,
    ...(input.description !== undefined ? { description: input.description } : {}),
    at: input.at.toISOString(),
  };
  const before = await readLocalStatuses(dir, display);
  await writeFileAtomic(join(dir, LOCAL_STATUSES_FILE), renderLocalStatuses(withLocalStatus(before, status)));
  return status;
}
