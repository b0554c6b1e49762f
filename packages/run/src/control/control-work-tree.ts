import { runGit } from '@kdelta/git-source';

/**
 * Update mode reads the packages of the control repository from its branch as committed (pushed,
 * when it has an origin), never from the work tree: a Kptfile edited and not committed (a new
 * `upstream.git.ref`) is not seen, and a user who ran `kdelta run` right after the edit would
 * wonder why nothing happened. The warning that says so, or undefined when nothing is unseen.
 */
export async function uncommittedKptfilesWarning(
  control: { readonly root: string; readonly url: string; readonly branch: string },
  directories: readonly string[],
): Promise<string | undefined> {
  if (directories.length === 0) return undefined;
  const kptfiles = directories.map((d) => (d === '' ? 'Kptfile' : `${d}/Kptfile`));
  let status: string;
  try {
    status = (await runGit(['status', '--porcelain=v1', '-z', '--', ...kptfiles], { cwd: control.root })).stdout;
  } catch {
    return undefined; // a work tree git cannot read: the run itself says what is wrong with it
  }
  // `XY path` entries, NUL-separated; a rename's entry is followed by its old path
  const changed = new Set<string>();
  const entries = status.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.length < 4) continue;
    changed.add(entry.slice(3));
    if (entry[0] === 'R' || entry[0] === 'C') i++;
  }
  const unseen = kptfiles.filter((k) => changed.has(k));
  if (unseen.length === 0) return undefined;
  const pushed = control.url !== control.root;
  return `update mode reads branch "${control.branch}" of ${pushed ? `the control repository's origin (${control.url})` : 'the control repository'} as committed, not the work tree: uncommitted changes to ${unseen.join(', ')} are not part of this run (commit${pushed ? ' and push' : ''} them, then run again)`;
}
