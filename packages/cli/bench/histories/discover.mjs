// Which release pairs a mirror holds: a package's releases are found from the tag names, in three
// conventions, and paired with the next release of the same package.
//   <name>-vX.Y.Z      blueprints' style: the package is the directory named <name> (without a
//                      "-blueprint" suffix) that holds a Kptfile, or Kptfiles below it
//   <dir>/vX.Y.Z       kpt's own convention: the package is <dir>, which holds a Kptfile at the tag
//   <fn>/vX.Y.Z        kpt-functions-catalog's: where the key is no package directory at the tag, the
//                      packages are the examples/<fn>-* directories holding a Kptfile at the tag (<fn>
//                      being the key's last segment: functions/go/set-namespace/v0.4.1 releases
//                      examples/set-namespace-simple); a version tagged in several families
//                      (set-namespace/, go/set-namespace/, functions/go/set-namespace/) is one release,
//                      and pairs whose package tree did not change are left out
//   vX.Y.Z             a repository release: every top-level package directory at the tag, for the
//                      directories that have no release tags of their own; pairs whose package tree did
//                      not change are left out (they are not releases of that package)
// Pre-releases (a "-" after the version) are left out: their order against releases is not reliable.
import { execFileSync } from 'node:child_process';

const version = String.raw`v(\d+(?:\.\d+){0,2})`;
const named = new RegExp(`^(.+)-${version}$`);
const prefixed = new RegExp(`^(.+)/${version}$`);
const plain = new RegExp(`^${version}$`);

/** The numbers of a version, for ordering (`v0.10` after `v0.9`). */
export function versionNumbers(v) {
  return v.split('.').map(Number);
}

export function compareVersions(a, b) {
  const x = versionNumbers(a);
  const y = versionNumbers(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** A tag's convention and parts, or undefined for a tag that names no release. */
export function parseTag(tag) {
  let m = prefixed.exec(tag);
  if (m) return { style: 'prefixed', key: m[1], version: m[2] };
  m = plain.exec(tag);
  if (m) return { style: 'plain', key: '', version: m[1] };
  m = named.exec(tag);
  if (m) return { style: 'named', key: m[1], version: m[2] };
  return undefined;
}

function git(gitDir, ...args) {
  return execFileSync('git', ['-C', gitDir, ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
}

function createTreeReader(gitDir) {
  const kptfileDirs = new Map();
  const trees = new Map();
  return {
    /** Directories holding a Kptfile at `tag` ('' for the repository's root). */
    kptfileDirs(tag) {
      let dirs = kptfileDirs.get(tag);
      if (!dirs) {
        dirs = git(gitDir, 'ls-tree', '-r', '--name-only', `refs/tags/${tag}`)
          .split('\n')
          .filter((p) => p === 'Kptfile' || p.endsWith('/Kptfile'))
          .map((p) => p.slice(0, -'Kptfile'.length).replace(/\/$/, ''));
        kptfileDirs.set(tag, dirs);
      }
      return dirs;
    },
    /** The tree id of `dir` at `tag`, or undefined where it does not exist. */
    tree(tag, dir) {
      const key = `${tag}\u0000${dir}`;
      if (!trees.has(key)) {
        let id;
        try {
          id = git(gitDir, 'rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}:${dir}`).trim() || undefined;
        } catch {
          id = undefined;
        }
        trees.set(key, id);
      }
      return trees.get(key);
    },
    /** The kpt API version of the Kptfile in `dir` at `tag`, or undefined. */
    kptfileApiVersion(tag, dir) {
      try {
        const text = git(gitDir, 'show', `refs/tags/${tag}:${dir ? `${dir}/` : ''}Kptfile`);
        return /^apiVersion:\s*(\S+)/m.exec(text)?.[1];
      } catch {
        return undefined;
      }
    },
  };
}

/** The function examples a tag `<...>/<fn>/vX.Y.Z` releases: examples/<fn>-* holding a Kptfile. */
function functionExampleDirs(reader, tag, key) {
  const prefix = `examples/${key.split('/').pop()}-`;
  return reader.kptfileDirs(tag).filter((d) => d.startsWith(prefix) && !d.slice(prefix.length).includes('/'));
}

function resolveNamedDir(reader, tag, name) {
  const base = name.replace(/-blueprint$/, '');
  const dirs = reader.kptfileDirs(tag);
  const candidates = new Set();
  for (const d of dirs) {
    const parts = d.split('/');
    const at = parts.lastIndexOf(base);
    if (at >= 0) candidates.add(parts.slice(0, at + 1).join('/'));
  }
  // the shortest path wins: a package's own directory over a subpackage of the same name
  return [...candidates].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b))[0];
}

/**
 * The consecutive release pairs of every package of one mirror (a bare or non-bare git directory).
 * Returns { pairs: [{ repo, gitDir, key, dir, old, new }], skipped: [{ key, reason }] }.
 */
export function discoverPairs(gitDir, { repoName = gitDir } = {}) {
  const reader = createTreeReader(gitDir);
  const tags = git(gitDir, 'for-each-ref', '--format=%(refname)', 'refs/tags')
    .split('\n')
    .filter(Boolean)
    .map((t) => t.slice('refs/tags/'.length));
  const releases = new Map(); // package key -> [{ tag, version, dir }]
  const examples = new Set(); // keys of function examples: unchanged pairs are left out
  const release = (key, r) => {
    if (!releases.has(key)) releases.set(key, []);
    releases.get(key).push(r);
  };
  const plainTags = [];
  const skipped = [];
  for (const tag of tags) {
    const parsed = parseTag(tag);
    if (!parsed) continue;
    if (parsed.style === 'plain') {
      plainTags.push({ tag, version: parsed.version });
      continue;
    }
    let dir;
    if (parsed.style === 'prefixed') {
      if (reader.kptfileDirs(tag).includes(parsed.key)) dir = parsed.key;
      else {
        const exampleDirs = functionExampleDirs(reader, tag, parsed.key);
        for (const d of exampleDirs) {
          examples.add(d);
          release(d, { tag, version: parsed.version, dir: d });
        }
        if (exampleDirs.length > 0) continue;
      }
    } else dir = resolveNamedDir(reader, tag, parsed.key);
    if (dir === undefined) {
      skipped.push({ key: parsed.key, tag, reason: 'no package directory for this tag' });
      continue;
    }
    release(parsed.style === 'prefixed' ? dir : parsed.key, { tag, version: parsed.version, dir });
  }

  const pairs = [];
  const owned = new Set([...releases.values()].flatMap((rs) => rs.map((r) => r.dir)));
  for (const [key, all] of releases) {
    // one release per version: of the tags naming it, the shortest (set-namespace/v0.4.1, as users write it)
    const rs = [];
    for (const r of all.sort((a, b) => compareVersions(a.version, b.version) || a.tag.length - b.tag.length || a.tag.localeCompare(b.tag)))
      if (rs.at(-1)?.version !== r.version) rs.push(r);
    for (let i = 1; i < rs.length; i++) {
      const [o, n] = [rs[i - 1], rs[i]];
      // an update keeps the directory the package was fetched from
      const tree = reader.tree(n.tag, o.dir);
      if (tree === undefined) {
        skipped.push({ key, tag: n.tag, reason: `${o.dir} is gone at ${n.tag}` });
        continue;
      }
      if (examples.has(key)) {
        if (tree === reader.tree(o.tag, o.dir)) continue;
        const api = reader.kptfileApiVersion(o.tag, o.dir);
        if (api !== 'kpt.dev/v1') {
          skipped.push({ key, tag: o.tag, reason: `Kptfile ${api ?? 'unreadable'} (before kpt 1.0)` });
          continue;
        }
      }
      pairs.push({ repo: repoName, gitDir, key, dir: o.dir, old: o.tag, new: n.tag });
    }
  }

  plainTags.sort((a, b) => compareVersions(a.version, b.version));
  for (let i = 1; i < plainTags.length; i++) {
    const [o, n] = [plainTags[i - 1], plainTags[i]];
    const dirs = reader.kptfileDirs(o.tag);
    // top-level packages only: a nested package comes with its parent
    const roots = dirs.filter((d) => !dirs.some((p) => p !== d && (p === '' || d.startsWith(`${p}/`))));
    for (const dir of roots) {
      if (owned.has(dir) || dir.split('/').includes('testdata')) continue;
      const [a, b] = [reader.tree(o.tag, dir), reader.tree(n.tag, dir)];
      if (b === undefined || a === b) continue;
      const api = reader.kptfileApiVersion(o.tag, dir);
      if (api !== 'kpt.dev/v1') {
        skipped.push({ key: dir || '.', tag: o.tag, reason: `Kptfile ${api ?? 'unreadable'} (before kpt 1.0)` });
        continue;
      }
      pairs.push({ repo: repoName, gitDir, key: dir || '.', dir, old: o.tag, new: n.tag });
    }
  }
  return { pairs, skipped };
}
