import { credentialsFor, type GitError, isGitError, repoLocation, runGit } from '@kdelta/git-source';

/**
 * Two runs at once (a schedule and a release) can compute the same proposal: the first push
 * wins, the second's lease is stale. When the branch now holds exactly what this run was about to
 * push (the same tree on the same base), nothing was lost: the winner's commit is the proposal,
 * and this run goes on as if it had found it there.
 *
 * Returns the winner's commit, or undefined when the push failed for another reason or the
 * branch holds something else (the caller rethrows).
 */
export async function identicalWinner(
  error: unknown,
  ws: { readonly dir: string; readonly baseCommit: string },
  commit: string,
  remote: {
    readonly repo: string;
    readonly branch: string;
    readonly token?: string | undefined;
    readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  },
): Promise<string | undefined> {
  if (!isGitError(error) || !lostRace(error)) return undefined;
  try {
    const location = repoLocation(remote.repo, ws.dir);
    const creds = credentialsFor(location, { token: remote.token, env: remote.env ?? process.env });
    await runGit(['fetch', '--quiet', '--no-tags', '--', location.url, `+refs/heads/${remote.branch}:refs/kdelta/winner`], {
      cwd: ws.dir,
      env: { ...remote.env, ...creds.env },
      secrets: creds.secrets,
    });
    const [winner, winnerTree, ourTree, ...parents] = (
      await runGit(['rev-parse', 'refs/kdelta/winner', 'refs/kdelta/winner^{tree}', `${commit}^{tree}`, 'refs/kdelta/winner^@'], {
        cwd: ws.dir,
      })
    ).stdout
      .trim()
      .split('\n');
    return winnerTree === ourTree && parents.length === 1 && parents[0] === ws.baseCommit ? winner : undefined;
  } catch {
    return undefined;
  }
}

/** A push refused because the branch moved under it: a stale lease, or the server's ref lock taken by the other push. */
function lostRace(error: GitError): boolean {
  if (error.code === 'stale-lease' || error.code === 'non-fast-forward') return true;
  return /cannot lock ref|failed to update ref|reference already exists/i.test(`${error.stderr}\n${error.message}`);
}
