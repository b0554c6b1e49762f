import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runGit } from '@kdelta/git-source';
import { ForgeError } from '../errors.js';
import type { PublishCommitInput } from '../forge.js';
import { type GitHubClient, keyOf } from './client.js';

/**
 * Signed commits: the commit made through GitHub's git data API, so GitHub signs it and marks it
 * verified, instead of a git push.
 */

/** A blob's bytes as they are (runGit reads text). */
async function blobBytes(dir: string, sha: string): Promise<Buffer> {
  const { stdout } = await promisify(execFile)('git', ['cat-file', 'blob', sha], {
    cwd: dir,
    encoding: 'buffer',
    maxBuffer: 512 * 1024 * 1024,
  });
  return stdout;
}

type TreeEntry = { path: string; mode: string; type: 'blob'; sha: string | null };

/**
 * A ref write GitHub refuses because the branch moved since it was read: made by someone else
 * meanwhile (422 "Reference already exists"), or moved off the tip kdelta built on (422 "Update is
 * not a fast forward"). Left alone, as a push whose lease went stale is.
 */
async function moved(what: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (error instanceof ForgeError && /\b422\b.*(reference already exists|not a fast.forward)/i.test(error.message)) {
      const answer = error.message.replace(/^GitHub: cannot .*?: (?=422)/, '');
      throw new ForgeError('branch-moved', `cannot ${what}: it was made or moved since kdelta read it (GitHub: ${answer}): left alone`);
    }
    throw error;
  }
}

/**
 * The commit through the git data API: blobs for the changed files, a tree on the base's tree,
 * the commit (author given, committer left to GitHub, which signs it), then the branch.
 */
export function createCommits(client: GitHubClient): { publishCommit(input: PublishCommitInput): Promise<string> } {
  /** The changed files of the commit as tree entries, each new blob uploaded. */
  async function treeOf(input: PublishCommitInput, where: string): Promise<TreeEntry[]> {
    const repo = client.repoOf(input.target.repo);
    const diff = (await runGit(['diff-tree', '-r', '-z', '--no-renames', input.baseCommit, input.commit], { cwd: input.dir })).stdout;
    const fields = diff.split('\0').filter((s) => s !== '');
    const tree: TreeEntry[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      // `:<old mode> <new mode> <old sha> <new sha> <status>` then the path
      const [, newMode, newSha, status] = /^:\d+ (\d+) [0-9a-f]+ ([0-9a-f]+) ([A-Z])/.exec(fields[i]!) ?? [];
      const path = fields[i + 1]!;
      if (status === 'D') {
        tree.push({ path, mode: '100644', type: 'blob', sha: null });
        continue;
      }
      const content = await blobBytes(input.dir, newSha!);
      const blob = await client.call<{ sha: string }>(`upload ${path} for ${where}`, 'POST /repos/{owner}/{repo}/git/blobs', {
        ...repo,
        content: content.toString('base64'),
        encoding: 'base64',
      });
      tree.push({ path, mode: newMode!, type: 'blob', sha: blob.sha });
    }
    return tree;
  }

  return {
    async publishCommit(input) {
      const repo = client.repoOf(input.target.repo);
      const where = `${input.target.head} in ${keyOf(repo)}`;
      const tree = await treeOf(input, where);
      const baseTree = (await runGit(['rev-parse', `${input.baseCommit}^{tree}`], { cwd: input.dir })).stdout.trim();
      const madeTree = await client.call<{ sha: string }>(`write the tree for ${where}`, 'POST /repos/{owner}/{repo}/git/trees', {
        ...repo,
        base_tree: baseTree,
        tree,
      });
      const commit = await client.call<{ sha: string }>(`make the commit for ${where}`, 'POST /repos/{owner}/{repo}/git/commits', {
        ...repo,
        message: input.message,
        tree: madeTree.sha,
        parents: [input.baseCommit],
        author: { name: input.author.name, email: input.author.email },
      });
      const ref = `heads/${input.target.head}`;
      // The ref goes into the path segment by segment (a `{ref}` parameter would encode its slashes).
      const refPath = ref.split('/').map(encodeURIComponent).join('/');
      if (input.expectedHead) {
        const now = await client.call<{ object: { sha: string } }>(`read ${where}`, `GET /repos/{owner}/{repo}/git/ref/${refPath}`, {
          ...repo,
        });
        if (now.object.sha !== input.expectedHead) {
          throw new ForgeError(
            'branch-moved',
            `branch ${where} moved to ${now.object.sha.slice(0, 12)} since it was read (expected ${input.expectedHead.slice(0, 12)}): left alone`,
          );
        }
        // on the tip it read (a human's commits carried forward): a fast-forward, which GitHub checks
        const force = input.baseCommit !== input.expectedHead;
        await moved(`move ${where}`, () =>
          client.call(`move ${where}`, `PATCH /repos/{owner}/{repo}/git/refs/${refPath}`, { ...repo, sha: commit.sha, force }),
        );
      } else {
        await moved(`create ${where}`, () =>
          client.call(`create ${where}`, 'POST /repos/{owner}/{repo}/git/refs', { ...repo, ref: `refs/${ref}`, sha: commit.sha }),
        );
      }
      return commit.sha;
    },
  };
}
