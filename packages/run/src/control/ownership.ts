import { resolve } from 'node:path';
import { remoteUrl, repoLocation, withoutCredentials, workTreeRoot } from '@kdelta/git-source';
import { findControlRepository } from './control-repository.js';

/**
 * Which control repository wrote a variant's package: beside the owner annotation (the variant's
 * name) on the downstream Kptfile. One downstream repository may take packages from several
 * control repositories; each proposes removing only its own packages. A package without it was
 * written before it existed and is judged by its owner alone, as then.
 */
export const CONTROL_ANNOTATION = 'kdelta.dev/control-repository';

/**
 * A repository URL as the same for every clone of it: `host/path`, whatever the transport
 * (`https://`, `ssh://`, `git@host:path`), without credentials, user, `.git` or trailing `/`.
 * A local path stays as it is.
 */
export function controlIdentity(url: string): string {
  const clean = withoutCredentials(url.trim());
  const strip = (path: string) => path.replace(/\/+$/, '').replace(/\.git$/, '');
  const remote = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^/:]+)(?::\d+)?(\/.*)?$/i.exec(clean);
  if (remote && !/^file:/i.test(clean)) return `${remote[1]!.toLowerCase()}${strip(remote[2] ?? '')}`;
  const scp = /^(?:[^@/]+@)?([^/:]+):(?!\/\/)(.+)$/.exec(clean);
  if (scp) return `${scp[1]!.toLowerCase()}/${strip(scp[2]!.replace(/^\/+/, ''))}`;
  return strip(clean.replace(/^file:\/\//i, ''));
}

/** This run's control repository: its `origin`, else its work tree; outside git, the config directory. */
export async function findControlIdentity(cwd: string, configDir: string): Promise<string> {
  const found = await findControlRepository(cwd);
  return found.ok ? controlIdentity(found.value.url) : resolve(configDir);
}

/**
 * What a package records as the control repository that wrote it: the control repository's
 * `origin` URL, credentials removed, the same from every clone and runner. A control repository
 * without a remote (or outside git) records nothing: its path names one machine's directory (a
 * runner's temporary work tree), which no other clone could match and which says nothing to a
 * reviewer of the downstream.
 */
export async function findControlRecord(cwd: string): Promise<string | undefined> {
  const root = await workTreeRoot({ cwd });
  if (root === undefined) return undefined;
  const origin = await remoteUrl({ dir: root });
  if (origin === undefined) return undefined;
  let kind: string;
  try {
    kind = repoLocation(origin, root).kind;
  } catch {
    return undefined; // a remote git would refuse to fetch from: nothing worth recording
  }
  return kind === 'local' || kind === 'file' ? undefined : withoutCredentials(origin);
}

/** Whether a package's recorded control repository is this run's (`control`: its {@link controlIdentity}). */
export function writtenBy(recorded: string, control: string | undefined): boolean {
  return control !== undefined && controlIdentity(recorded) === control;
}
