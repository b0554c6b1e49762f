// Which commit pairs a mirror holds (`--commits N`): users `pkg update` to a branch tip or a commit as
// often as to a release, so besides tag pairs the differential replays each package's own recent
// changes on the default branch. A package is a top-level directory holding a kpt.dev/v1 Kptfile at
// the newest commit (HEAD: the default branch of a mirror); its last N changes are the last N commits
// of HEAD's first-parent history whose tree of that directory differs from their parent's, and each
// is paired with the change before it (old → new), so that every pair is two states the branch tip
// really had, one after the other as far as this package is concerned.
import { execFileSync } from 'node:child_process';

function git(gitDir, ...args) {
  return execFileSync('git', ['-C', gitDir, ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
}

function tryGit(gitDir, ...args) {
  try {
    return git(gitDir, ...args).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Top-level package directories at `rev` ('' for the repository's root); nested packages come with their parent. */
function packageDirs(gitDir, rev) {
  const dirs = git(gitDir, 'ls-tree', '-r', '--name-only', rev)
    .split('\n')
    .filter((p) => p === 'Kptfile' || p.endsWith('/Kptfile'))
    .map((p) => p.slice(0, -'Kptfile'.length).replace(/\/$/, ''))
    .filter((d) => !d.split('/').includes('testdata'));
  return dirs.filter((d) => !dirs.some((p) => p !== d && (p === '' || d.startsWith(`${p}/`))));
}

const kptfileApiVersion = (gitDir, rev, dir) =>
  /^apiVersion:\s*(\S+)/m.exec(tryGit(gitDir, 'show', `${rev}:${dir ? `${dir}/` : ''}Kptfile`) ?? '')?.[1];

/**
 * The last `count` commit pairs of every package of one mirror (a bare or non-bare git directory).
 * Returns { pairs: [{ repo, gitDir, key, dir, old, new }], skipped: [{ key, tag, reason }] }, `old`
 * and `new` being full commit ids (both tools take one as the ref of `pkg get` and `pkg update`).
 */
export function discoverCommitPairs(gitDir, { repoName = gitDir, count = 1, rev = 'HEAD' } = {}) {
  const head = git(gitDir, 'rev-parse', '--verify', `${rev}^{commit}`).trim();
  const pairs = [];
  const skipped = [];
  for (const dir of packageDirs(gitDir, head)) {
    const key = dir || '.';
    if (kptfileApiVersion(gitDir, head, dir) !== 'kpt.dev/v1') continue;
    const changes = git(gitDir, 'log', '--first-parent', '--format=%H', `-n${count + 1}`, head, '--', dir || '.')
      .split('\n')
      .filter(Boolean)
      .reverse();
    for (let i = 1; i < changes.length; i++) {
      const [o, n] = [changes[i - 1], changes[i]];
      const api = kptfileApiVersion(gitDir, o, dir);
      if (api !== 'kpt.dev/v1') {
        skipped.push({ key, tag: o, reason: api ? `Kptfile ${api} (before kpt 1.0)` : `no Kptfile in ${key} at ${o}` });
        continue;
      }
      const [a, b] = [tryGit(gitDir, 'rev-parse', `${o}:${dir}`), tryGit(gitDir, 'rev-parse', `${n}:${dir}`)];
      if (b === undefined || a === b) {
        skipped.push({ key, tag: n, reason: b === undefined ? `${key} is gone at ${n}` : `${key} unchanged from ${o}` });
        continue;
      }
      pairs.push({ repo: repoName, gitDir, key, dir, old: o, new: n });
    }
  }
  return { pairs, skipped };
}
