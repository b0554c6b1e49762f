import { join, relative, resolve } from 'node:path';
import { hideCredentials, isFullCommit, listRemoteRefs, repositoryIdentity } from '@kdelta/git-source';
import { DEFAULT_CONFIG_DIR, loadControl, type RepositorySpec } from '../control/control.js';
import { RunError } from '../errors.js';
import { readLocalStatuses, setLocalStatus, type LocalStatus, type LocalStatusState } from '../forges/local-statuses.js';
import { repositoryUrl } from '../plan/plan.js';

/**
 * `kdelta status`: the health signals a person sets on the local forge (where no Flux or Argo CD
 * posts a commit status), for a rollout to read. The downstream is a Repository of the control
 * resources; the commit, the head of its branch unless given.
 */

export interface LocalStatusOptions {
  /** The control repository's work tree. */
  readonly cwd: string;
  readonly config?: string | undefined;
  /** The local forge's records (default `<config>/proposals`): statuses.json lives there. */
  readonly proposalsDir?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

function dirOf(options: LocalStatusOptions): string {
  return resolve(options.cwd, options.proposalsDir ?? join(options.config ?? DEFAULT_CONFIG_DIR, 'proposals'));
}

/** The Repository `given` names: its name, or its repository's path or URL. */
async function repositoryNamed(options: LocalStatusOptions, given: string): Promise<{ repository: RepositorySpec; url: string }> {
  const config = options.config ?? DEFAULT_CONFIG_DIR;
  const control = await loadControl({ dir: resolve(options.cwd, config), display: config });
  const all = control.repositories.map((repository) => ({ repository, url: repositoryUrl(repository, options.cwd) }));
  const identity = repositoryIdentity(
    /^[a-z][a-z0-9+.-]*:\/\//i.test(given) || /^[^/]+@[^/:]+:/.test(given) ? given : resolve(options.cwd, given),
  );
  const byName = all.filter((r) => r.repository.name === given);
  const found = byName.length > 0 ? byName : all.filter((r) => repositoryIdentity(r.url) === identity);
  if (found.length === 1) return found[0]!;
  const listing = all.map((r) => `  ${r.repository.name}  ${hideCredentials(r.url)}`).join('\n');
  if (found.length === 0)
    throw new RunError(
      'no-such-repository',
      `no Repository of ${config} is "${given}" (by name, path or URL); its Repositories:\n${listing}`,
    );
  throw new RunError(
    'no-such-repository',
    `${found.length} Repositories of ${config} are "${given}": name one by its namespace's name:\n${found.map((r) => `  ${r.repository.namespace}/${r.repository.name}`).join('\n')}`,
  );
}

/** Set a status on a downstream's commit (default: the head of the Repository's branch); returns it as kept and the file. */
export async function setDownstreamStatus(
  options: LocalStatusOptions & {
    readonly downstream: string;
    readonly name: string;
    readonly state: LocalStatusState;
    readonly commit?: string | undefined;
    readonly description?: string | undefined;
    readonly now?: Date | undefined;
  },
): Promise<{ status: LocalStatus; file: string }> {
  if (options.commit !== undefined && !isFullCommit(options.commit))
    throw new RunError('invalid-option', `--commit: a full commit id, as \`git rev-parse\` prints it (got "${options.commit}")`);
  const { repository, url } = await repositoryNamed(options, options.downstream);
  let commit = options.commit?.toLowerCase();
  if (commit === undefined) {
    const ref = `refs/heads/${repository.branch}`;
    const refs = await listRemoteRefs({ repo: url, cwd: options.cwd, env: options.env, patterns: [ref] });
    commit = refs.find((r) => r.name === ref)?.commit;
    if (commit === undefined)
      throw new RunError('branch-missing', `Repository "${repository.name}": ${hideCredentials(url)} has no branch "${repository.branch}"`);
  }
  const dir = dirOf(options);
  const shown = relative(options.cwd, dir) || '.';
  const status = await setLocalStatus(
    dir,
    {
      repo: url,
      downstream: repository.name,
      commit,
      name: options.name,
      state: options.state,
      description: options.description,
      at: options.now ?? new Date(),
    },
    shown,
  );
  return { status, file: join(shown, 'statuses.json') };
}

/** The statuses set so far, oldest first. */
export async function listDownstreamStatuses(options: LocalStatusOptions): Promise<LocalStatus[]> {
  const dir = dirOf(options);
  return readLocalStatuses(dir, relative(options.cwd, dir) || '.');
}
