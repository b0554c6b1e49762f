import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, inflateSync } from 'node:zlib';
import { runGit } from './exec.js';
import type { RemoteRef } from './refs.js';
import type { RepoLocation } from './url.js';

/**
 * A repository on this machine, its refs read from its files as `git ls-remote <path>` reports
 * them (HEAD first, then every ref under refs/ by name, annotated tags peeled), without starting
 * git: a run with nothing new asks every downstream for its branches, and starting one git per
 * repository was most of that run's time.
 *
 * Only the plain layout git itself writes is read here: loose refs, packed-refs, a symbolic or
 * detached HEAD, loose objects and pack indexes. Anything else (reftable or any other repository
 * extension, alternates, a linked worktree or a `.git` file, a partial clone, hidden refs or
 * included configuration, a ref name or file this reader does not know to the letter, a symlink
 * inside the repository, a repository someone else owns) answers `undefined`, and git decides.
 * A repository is input from strangers: nothing here follows a symlink, and sizes are bounded.
 */

/** Why the fast path is not taken: git's own ls-remote answers instead. */
class Unsupported extends Error {}

const OID = /^[0-9a-f]{40}$/;
const ZERO_OID = '0'.repeat(40);
/** packed-refs, an index or a loose ref larger than this is read by git, not here. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Loose refs under refs/ past this many: git reads them. */
const MAX_LOOSE_REFS = 100_000;
/** git's SYMREF_MAXDEPTH. */
const MAX_SYMREF_DEPTH = 5;
/** Tags of tags, and deltas of deltas, followed at most this deep. */
const MAX_CHAIN = 50;

/** Environment that changes what a repository's refs or objects are: git reads them then. */
const GIT_ENV_THAT_MATTERS = [
  'GIT_NAMESPACE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_REF_PARANOIA',
  'GIT_REPLACE_REF_BASE',
];

/**
 * Configuration that changes what ls-remote lists, from the user's and the system's files (and
 * GIT_CONFIG_* variables): hidden refs, conditional includes (which may hide refs of one
 * repository only), and the bare-repository policy.
 */
const CONFIG_THAT_MATTERS = '^(transfer\\.hiderefs|uploadpack\\.hiderefs|safe\\.barerepository|includeif\\..*)$';

/** A repository's own `config` that this reader leaves to git (checked on the text, conservatively). */
function repoConfigMatters(config: string): boolean {
  if (/hiderefs|\[\s*include|\[\s*extensions/i.test(config)) return true;
  const versions = [...config.matchAll(/^\s*repositoryformatversion\s*=\s*(\S*)/gim)].map((m) => m[1]);
  return versions.some((v) => v !== '0');
}

/** One `git config` per environment and process: whether the configuration outside repositories allows the fast path. */
const configProbes = new Map<string, Promise<boolean>>();

function configAllows(env: Readonly<Record<string, string | undefined>>): Promise<boolean> {
  const key = JSON.stringify(
    Object.entries(env)
      .filter(([k]) => k.startsWith('GIT_') || k === 'HOME' || k === 'XDG_CONFIG_HOME' || k === 'PATH')
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  let probe = configProbes.get(key);
  if (!probe) {
    // In a directory outside any repository: only the system's, the user's and the environment's configuration.
    probe = runGit(['config', '--get-regexp', CONFIG_THAT_MATTERS], { cwd: tmpdir(), env }).then(
      ({ stdout }) => stdout.trim() === '',
      // exit 1: none of those keys is set; any other failure: git decides
      (error: { exitCode?: number }) => error.exitCode === 1,
    );
    configProbes.set(key, probe);
  }
  return probe;
}

/**
 * The refs of the repository at `location` as `git ls-remote` lists them, or undefined when this
 * reader cannot tell them exactly (see above) or `location` is not on this machine.
 */
export async function readLocalRefs(
  location: RepoLocation,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<RemoteRef[] | undefined> {
  const path = pathOf(location);
  if (path === undefined) return undefined;
  const merged = { ...process.env, ...env };
  if (GIT_ENV_THAT_MATTERS.some((k) => merged[k] !== undefined && merged[k] !== '')) return undefined;
  if (!(await configAllows(env))) return undefined;
  try {
    return readRefsAt(path);
  } catch {
    // Unsupported, a file that went away, a file that is not what git writes: git reads it (and
    // says what is wrong with it, when something is)
    return undefined;
  }
}

function pathOf(location: RepoLocation): string | undefined {
  if (location.kind === 'local') return location.url;
  if (location.kind === 'file') {
    try {
      return fileURLToPath(location.url);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** No entry: undefined, without the cost of an exception (most paths asked for are not there). */
function lstatOrUndefined(path: string): Stats | undefined {
  return lstatSync(path, { throwIfNoEntry: false });
}

/** The git directory git's upload-pack enters for `path` (its order: `/.git`, ``, `.git/.git`, `.git`). */
function gitDirOf(path: string): string {
  const clean = resolve(path).replace(/\/+$/, '') || '/';
  for (const suffix of ['/.git', '', '.git/.git', '.git']) {
    const candidate = clean + suffix;
    const st = lstatOrUndefined(candidate);
    if (!st) continue;
    // a `.git` file (a linked worktree, a submodule) or a symlink: git follows it, this reader does not
    if (st.isFile() || st.isSymbolicLink()) throw new Unsupported(candidate);
    if (st.isDirectory() && looksLikeGitDir(candidate)) return candidate;
  }
  throw new Unsupported(`${path}: no repository`);
}

function looksLikeGitDir(dir: string): boolean {
  const head = lstatOrUndefined(join(dir, 'HEAD'));
  const objects = lstatOrUndefined(join(dir, 'objects'));
  const refs = lstatOrUndefined(join(dir, 'refs'));
  return !!head?.isFile() && !!objects?.isDirectory() && !!refs?.isDirectory();
}

function readSmall(path: string): string | undefined {
  const st = lstatOrUndefined(path);
  if (!st) return undefined;
  if (!st.isFile() || st.size > MAX_FILE_BYTES) throw new Unsupported(path);
  return readFileSync(path, 'latin1');
}

/** A ref name this reader lists exactly as git does (git's check_refname_format, on a conservative alphabet). */
function isPlainRefName(name: string): boolean {
  if (!name.startsWith('refs/')) return false;
  return name
    .split('/')
    .every((c) => /^[A-Za-z0-9_+@=,-][A-Za-z0-9._+@=,-]*$/.test(c) && !c.includes('..') && !c.endsWith('.') && !c.endsWith('.lock'));
}

type Target = { readonly oid: string } | { readonly symref: string };

/** A loose ref file's content: an object id or `ref: <name>`. */
export function parseLooseRef(text: string): Target | undefined {
  const oid = /^([0-9a-f]{40})\n?$/.exec(text);
  if (oid) return oid[1] === ZERO_OID ? undefined : { oid: oid[1]! };
  const sym = /^ref: (\S+)\n?$/.exec(text);
  if (sym && isPlainRefName(sym[1]!)) return { symref: sym[1]! };
  return undefined;
}

export interface PackedRefs {
  readonly refs: ReadonlyMap<string, { readonly oid: string; readonly peeled?: string | undefined }>;
  /** Whether a ref without a `^` line is known not to be an annotated tag: all refs (fully-peeled) or tags only (peeled). */
  readonly peeledKnown: (name: string) => boolean;
}

/** packed-refs: `# pack-refs with: <traits>`, `<oid> <name>` lines, each maybe followed by `^<peeled oid>`. */
export function parsePackedRefs(text: string): PackedRefs | undefined {
  const refs = new Map<string, { oid: string; peeled?: string }>();
  let traits: string[] = [];
  let last: { oid: string; peeled?: string } | undefined;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [i, line] of lines.entries()) {
    if (i === 0 && line.startsWith('# pack-refs with:')) {
      traits = line.slice('# pack-refs with:'.length).trim().split(/\s+/);
      continue;
    }
    const peeled = /^\^([0-9a-f]{40})$/.exec(line);
    if (peeled) {
      if (!last || last.peeled) return undefined;
      last.peeled = peeled[1]!;
      continue;
    }
    const m = /^([0-9a-f]{40}) (\S+)$/.exec(line);
    if (!m || !isPlainRefName(m[2]!) || m[1] === ZERO_OID || refs.has(m[2]!)) return undefined;
    last = { oid: m[1]! };
    refs.set(m[2]!, last);
  }
  const fully = traits.includes('fully-peeled');
  const tags = traits.includes('peeled');
  return { refs, peeledKnown: (name) => fully || (tags && name.startsWith('refs/tags/')) };
}

function readRefsAt(path: string): RemoteRef[] {
  const gitDir = gitDirOf(path);
  const dirStat = lstatSync(gitDir);
  // someone else's repository: git's ownership rules (safe.directory) decide
  if (typeof process.getuid !== 'function' || dirStat.uid !== process.getuid()) throw new Unsupported('owner');
  for (const other of ['commondir', 'reftable', 'objects/info/alternates']) {
    if (lstatOrUndefined(join(gitDir, other))) throw new Unsupported(other);
  }
  // per-worktree refs: which of them a listing shows is git's business
  for (const perWorktree of ['refs/bisect', 'refs/worktree', 'refs/rewritten']) {
    if (lstatOrUndefined(join(gitDir, perWorktree))) throw new Unsupported(perWorktree);
  }
  const config = readSmall(join(gitDir, 'config')) ?? '';
  if (repoConfigMatters(config)) throw new Unsupported('config');

  const loose = new Map<string, Target>();
  walkLooseRefs(gitDir, 'refs', loose);
  const packedText = readSmall(join(gitDir, 'packed-refs'));
  const packed = packedText === undefined ? undefined : parsePackedRefs(packedText);
  if (packedText !== undefined && !packed) throw new Unsupported('packed-refs');
  const headText = readSmall(join(gitDir, 'HEAD'));
  const head = headText === undefined ? undefined : parseLooseRef(headText);
  if (!head) throw new Unsupported('HEAD');

  const objects = objectStore(gitDir);
  const direct = (name: string): Target | undefined => {
    const l = loose.get(name);
    if (l) return l;
    const p = packed?.refs.get(name);
    return p && { oid: p.oid };
  };
  /** The object a ref names through its symbolic refs; undefined when it leads nowhere (a broken or unborn ref). */
  const resolveTarget = (first: Target): string | undefined => {
    let t: Target | undefined = first;
    for (let depth = 0; t && 'symref' in t; depth++) {
      if (depth >= MAX_SYMREF_DEPTH) throw new Unsupported('symref depth');
      t = direct(t.symref);
    }
    return t?.oid;
  };
  /** What a ref's object peels to; a ref whose object is missing is broken, and whether a listing shows it depends on git's version. */
  const peel = (name: string, oid: string): string => {
    const p = packed?.refs.get(name);
    if (p && !loose.has(name) && (p.peeled || packed?.peeledKnown(name))) {
      if (!objects.has(oid)) throw new Unsupported(`${name}: missing object`);
      return p.peeled ?? oid;
    }
    const peeled = objects.peel(oid);
    if (peeled === undefined) throw new Unsupported(`${name}: missing object`);
    return peeled;
  };

  const out: RemoteRef[] = [];
  // HEAD is listed when it resolves (an unborn branch's HEAD is not)
  const headOid = resolveTarget(head);
  if (headOid) out.push({ name: 'HEAD', commit: peel('HEAD', headOid) });
  const names = [...new Set([...loose.keys(), ...(packed?.refs.keys() ?? [])])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const oid = resolveTarget(direct(name)!);
    // a symbolic ref that leads nowhere: whether a listing shows it depends on git's version
    if (!oid) throw new Unsupported(`${name}: dangling symbolic ref`);
    out.push({ name, commit: peel(name, oid) });
  }
  return out;
}

function walkLooseRefs(gitDir: string, prefix: string, into: Map<string, Target>): void {
  for (const entry of readdirSync(join(gitDir, prefix), { withFileTypes: true })) {
    const name = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!/^[A-Za-z0-9_+@=,-][A-Za-z0-9._+@=,-]*$/.test(entry.name)) throw new Unsupported(name);
      walkLooseRefs(gitDir, name, into);
      continue;
    }
    if (!entry.isFile() || !isPlainRefName(name)) throw new Unsupported(name);
    if (into.size >= MAX_LOOSE_REFS) throw new Unsupported('too many loose refs');
    const target = parseLooseRef(readSmall(join(gitDir, name)) ?? '');
    if (!target) throw new Unsupported(name);
    into.set(name, target);
  }
}

type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';
const PACK_TYPES: Readonly<Record<number, ObjectType>> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

interface Pack {
  readonly idx: string;
  readonly pack: string;
  /** The index's fanout (read once): how many objects start with a byte ≤ i. */
  fanout?: Uint32Array;
}

/** The repository's objects, as far as listing refs needs them: whether one exists, its type, a tag's target. */
function objectStore(gitDir: string) {
  const objectsDir = join(gitDir, 'objects');
  const packDir = join(objectsDir, 'pack');
  const packs: Pack[] = [];
  const entries = lstatOrUndefined(packDir)?.isDirectory() ? readdirSync(packDir) : [];
  // a partial clone's objects may be elsewhere: git knows where
  if (entries.some((e) => e.endsWith('.promisor'))) throw new Unsupported('promisor pack');
  for (const e of entries) {
    if (!e.endsWith('.idx')) continue;
    const pack = `${e.slice(0, -4)}.pack`;
    // an index without its pack is not a pack git reads
    if (entries.includes(pack)) packs.push({ idx: join(packDir, e), pack: join(packDir, pack) });
  }

  const withFile = <T>(path: string, use: (fd: number) => T): T => {
    const fd = openSync(path, 'r');
    try {
      return use(fd);
    } finally {
      closeSync(fd);
    }
  };
  const readAt = (fd: number, position: number, length: number): Buffer => {
    // only the bytes read are returned: none of the buffer's earlier content shows
    const buf = Buffer.allocUnsafe(length);
    const n = readSync(fd, buf, 0, length, position);
    return buf.subarray(0, n);
  };

  /** Where `oid` is in `pack` (its offset in the .pack file), or undefined. */
  const findInPack = (pack: Pack, oid: string): number | undefined =>
    withFile(pack.idx, (fd) => {
      if (!pack.fanout) {
        const head = readAt(fd, 0, 8 + 256 * 4);
        // version 2 indexes only (git has written them since 1.5.2)
        if (head.length < 8 + 256 * 4 || head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) throw new Unsupported(pack.idx);
        const fanout = new Uint32Array(256);
        for (let i = 0; i < 256; i++) {
          fanout[i] = head.readUInt32BE(8 + i * 4);
          if (i > 0 && fanout[i]! < fanout[i - 1]!) throw new Unsupported(pack.idx);
        }
        // names, checksums and offsets of every object must fit in the file (a made-up count would allocate without bound)
        if (8 + 1024 + fanout[255]! * 28 > fstatSync(fd).size) throw new Unsupported(pack.idx);
        pack.fanout = fanout;
      }
      const fanout = pack.fanout;
      const total = fanout[255]!;
      const first = Number.parseInt(oid.slice(0, 2), 16);
      const lo = first === 0 ? 0 : fanout[first - 1]!;
      const hi = fanout[first]!;
      if (hi <= lo) return undefined;
      const names = readAt(fd, 8 + 1024 + lo * 20, (hi - lo) * 20);
      const want = Buffer.from(oid, 'hex');
      let a = 0;
      let b = hi - lo;
      while (a < b) {
        const mid = (a + b) >> 1;
        const c = names.compare(want, 0, 20, mid * 20, mid * 20 + 20);
        if (c === 0) {
          const index = lo + mid;
          const small = readAt(fd, 8 + 1024 + total * 24 + index * 4, 4).readUInt32BE(0);
          if (!(small & 0x80000000)) return small;
          const large = readAt(fd, 8 + 1024 + total * 28 + (small & 0x7fffffff) * 8, 8);
          return Number(large.readBigUInt64BE(0));
        }
        // c: the index's name against the wanted one
        if (c < 0) a = mid + 1;
        else b = mid;
      }
      return undefined;
    });

  type Located = { readonly loose: string } | { readonly pack: Pack; readonly offset: number };
  const locate = (oid: string): Located | undefined => {
    const loose = join(objectsDir, oid.slice(0, 2), oid.slice(2));
    const st = lstatOrUndefined(loose);
    if (st?.isFile()) return { loose };
    if (st) throw new Unsupported(loose);
    for (const pack of packs) {
      const offset = findInPack(pack, oid);
      if (offset !== undefined) return { pack, offset };
    }
    return undefined;
  };

  /** The start of an object's text (header parsed off): enough for a type and a tag's first line. */
  const looseHead = (path: string): { type: ObjectType; body: string } => {
    // the header and a tag's first line are in the first few hundred bytes of any object
    const raw = withFile(path, (fd) => readAt(fd, 0, 512));
    let text: string;
    try {
      text = inflateSync(raw, { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1');
    } catch {
      throw new Unsupported(path);
    }
    const m = /^(commit|tree|blob|tag) \d+\0/.exec(text);
    if (!m) throw new Unsupported(path);
    return { type: m[1] as ObjectType, body: text.slice(m[0].length) };
  };

  /** A packed object's type (a delta's is its base's) and, when it is stored whole, the start of its text. */
  const packedHead = (pack: Pack, offset: number, depth = 0): { type: ObjectType; body?: string } => {
    if (depth > MAX_CHAIN) throw new Unsupported('delta chain');
    return withFile(pack.pack, (fd) => {
      const head = readAt(fd, offset, 32);
      let i = 0;
      let byte = head[i++]!;
      const code = (byte >> 4) & 7;
      while (byte & 0x80) byte = head[i++]!;
      if (code === 6) {
        // OFS_DELTA: the base is this many bytes before
        byte = head[i++]!;
        let back = byte & 0x7f;
        while (byte & 0x80) {
          byte = head[i++]!;
          back = (back + 1) * 128 + (byte & 0x7f);
        }
        if (back <= 0 || back > offset) throw new Unsupported(pack.pack);
        return { type: packedHead(pack, offset - back, depth + 1).type };
      }
      if (code === 7) {
        // REF_DELTA: the base by its id
        const base = locate(head.subarray(i, i + 20).toString('hex'));
        if (!base) throw new Unsupported('delta base');
        return { type: headOf(base, depth + 1).type };
      }
      const type = PACK_TYPES[code];
      if (!type) throw new Unsupported(pack.pack);
      if (type !== 'tag') return { type };
      let body: string;
      try {
        body = inflateSync(readAt(fd, offset + i, 4096), { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1');
      } catch {
        throw new Unsupported(pack.pack);
      }
      return { type, body };
    });
  };

  const headOf = (at: Located, depth = 0): { type: ObjectType; body?: string } =>
    'loose' in at ? looseHead(at.loose) : packedHead(at.pack, at.offset, depth);

  return {
    has: (oid: string): boolean => locate(oid) !== undefined,
    /**
     * What `oid` peels to (`<ref>^{}`): the object at the end of its tags; itself when it is no
     * tag; undefined when `oid` itself is missing.
     */
    peel(oid: string): string | undefined {
      let current = oid;
      for (let depth = 0; depth <= MAX_CHAIN; depth++) {
        const at = locate(current);
        // a tag whose object is missing does not peel (git lists no `^{}` for it): the ref's own object
        if (!at) return depth === 0 ? undefined : oid;
        const head = headOf(at);
        if (head.type !== 'tag') return current;
        // a tag stored as a delta: git reads it
        if (head.body === undefined) throw new Unsupported('deltified tag');
        const target = /^object ([0-9a-f]{40})\n/.exec(head.body)?.[1];
        if (!target || !OID.test(target)) throw new Unsupported('tag object');
        current = target;
      }
      throw new Unsupported('tag chain');
    },
  };
}
