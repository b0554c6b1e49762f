import { basename } from 'node:path';
import { currentBranch, remoteUrl, workTreeRoot } from '@kdelta/git-source';

/** The control repository as a downstream: where its branches are pushed and proposed. */
export interface ControlRepository {
  /** The repository's name (the local forge's folder): its top-level directory's name. */
  readonly name: string;
  /** Its work tree's top-level directory. */
  readonly root: string;
  /** Where branches are pushed: its `origin` remote, else the work tree itself. */
  readonly url: string;
  /** The branch proposals go into: the work tree's current branch. */
  readonly branch: string;
}

/** The git repository `cwd` is in, or undefined (with the reason) when there is none to use. */
export async function findControlRepository(cwd: string): Promise<{ ok: true; value: ControlRepository } | { ok: false; reason: string }> {
  const root = await workTreeRoot({ cwd });
  if (root === undefined) return { ok: false, reason: `${cwd} is not in a git repository` };
  const branch = await currentBranch({ dir: root });
  if (branch === undefined) return { ok: false, reason: `the control repository (${root}) is not on a branch (detached HEAD)` };
  const origin = await remoteUrl({ dir: root });
  const name =
    basename(root)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '') || 'control';
  return { ok: true, value: { name, root, url: origin || root, branch } };
}
