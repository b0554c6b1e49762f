import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/**
 * A fleet on disk for the tests of `kdelta run` and the Action: an upstream repository with the
 * package `base-ns` tagged base-ns/v1, bare downstream repositories, and a control repository.
 */

export const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv }).trim();
}

export function writeTree(root: string, files: Readonly<Record<string, string | Uint8Array | null>>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, path);
    if (text === null) rmSync(full, { recursive: true, force: true });
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
  }
}

/** Every file under a directory (relative path → text); missing directory: empty. */
export function readTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(root, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(root);
  return out;
}

export const UPSTREAM_PACKAGE: Record<string, string> = {
  'base-ns/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\ninfo:\n  description: a namespace\n',
  'base-ns/package-context.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: base-ns\n',
  'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n',
};

export interface Fleet {
  readonly root: string;
  readonly upstream: string;
  /** Bare repository of a downstream. */
  downstream(name: string): string;
  /** The control repository's work tree (`.kdelta/` below it). */
  readonly control: string;
  writeControl(files: Readonly<Record<string, string | null>>): void;
  /** Commit to the upstream repository and tag it. */
  publish(files: Readonly<Record<string, string | Uint8Array | null>>, tag?: string): string;
  /** `refname sha` of every ref of a bare downstream. */
  refs(name: string): string;
  /** The files of a branch of a downstream (under `dir`). */
  files(name: string, branch: string, dir?: string): Record<string, string>;
  /** Commit on a branch of a downstream as someone else. */
  commitAs(name: string, branch: string, files: Readonly<Record<string, string | null>>, author?: string): string;
  cleanup(): void;
}

/** The upstream and the downstream repositories, as every fleet starts, in `root`. */
function buildRepositories(root: string, downstreams: readonly string[]): void {
  const upstream = join(root, 'upstream');
  mkdirSync(upstream);
  git(upstream, 'init', '--quiet', '--initial-branch=main');
  writeTree(upstream, UPSTREAM_PACKAGE);
  git(upstream, 'add', '--all');
  git(upstream, 'commit', '--quiet', '-m', 'base-ns v1');
  git(upstream, 'tag', 'base-ns/v1');
  for (const d of downstreams) {
    const seed = join(root, `${d}-seed`);
    mkdirSync(seed);
    git(seed, 'init', '--quiet', '--initial-branch=main');
    writeTree(seed, { 'README.md': `# ${d}\n` });
    git(seed, 'add', '--all');
    git(seed, 'commit', '--quiet', '-m', 'init');
    git(root, 'clone', '--quiet', '--bare', seed, join(root, `${d}.git`));
    rmSync(seed, { recursive: true, force: true });
  }
}

/**
 * The repositories of a new fleet, built once per list of downstreams in a test file and copied
 * for every fleet after the first: a copy is the same repositories (commit ids included) without
 * the dozen git processes that build them.
 */
const builtRepositories = new Map<string, string>();
let builtRoot: string | undefined;

/**
 * Removes the repositories built for fleets so far. The workspace's vitest setup file calls it
 * after each test file (a worker evaluates this module once for all its files); a benchmark's
 * process calls it when it exits.
 */
export function removeBuiltFleets(): void {
  if (builtRoot) rmSync(builtRoot, { recursive: true, force: true });
  builtRoot = undefined;
  builtRepositories.clear();
}
if (!process.env.VITEST) process.once('exit', removeBuiltFleets);

function copyRepositories(root: string, downstreams: readonly string[]): void {
  const key = JSON.stringify(downstreams);
  let built = builtRepositories.get(key);
  if (!built) {
    builtRoot ??= realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-fleet-built-')));
    built = join(builtRoot, String(builtRepositories.size));
    mkdirSync(built);
    buildRepositories(built, downstreams);
    builtRepositories.set(key, built);
  }
  cpSync(built, root, { recursive: true, verbatimSymlinks: true });
}

export function createFleet(downstreams: readonly string[]): Fleet {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-fleet-')));
  const upstream = join(root, 'upstream');
  copyRepositories(root, downstreams);
  const control = join(root, 'control');
  mkdirSync(join(control, '.kdelta'), { recursive: true });
  let n = 0;
  const fleet: Fleet = {
    root,
    upstream,
    control,
    downstream: (name) => join(root, `${name}.git`),
    writeControl: (files) => writeTree(join(control, '.kdelta'), files),
    publish(files, tag) {
      writeTree(upstream, files);
      git(upstream, 'add', '--all');
      git(upstream, 'commit', '--quiet', '--allow-empty', '-m', `publish ${tag ?? ''}`);
      if (tag) git(upstream, 'tag', '-f', tag);
      return git(upstream, 'rev-parse', 'HEAD');
    },
    refs: (name) => git(fleet.downstream(name), 'for-each-ref', '--format=%(refname) %(objectname)'),
    files(name, branch, dir = '') {
      const work = join(root, `read-${++n}`);
      git(root, 'clone', '--quiet', '--branch', branch, fleet.downstream(name), work);
      const out = readTree(join(work, dir));
      rmSync(work, { recursive: true, force: true });
      return Object.fromEntries(Object.entries(out).filter(([k]) => !k.startsWith('.git/') && k !== '.git'));
    },
    commitAs(name, branch, files, author = 'Human <human@example.com>') {
      const work = join(root, `edit-${++n}`);
      git(root, 'clone', '--quiet', '--branch', branch, fleet.downstream(name), work);
      writeTree(work, files);
      git(work, 'add', '--all');
      const m = /^(.*) <(.*)>$/.exec(author)!;
      execFileSync('git', ['commit', '--quiet', '-m', 'a human edit'], {
        cwd: work,
        env: { ...gitEnv, GIT_AUTHOR_NAME: m[1], GIT_AUTHOR_EMAIL: m[2], GIT_COMMITTER_NAME: m[1], GIT_COMMITTER_EMAIL: m[2] },
      });
      git(work, 'push', '--quiet', 'origin', branch);
      const sha = git(work, 'rev-parse', 'HEAD');
      rmSync(work, { recursive: true, force: true });
      return sha;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
  return fleet;
}

export function repository(name: string, repo: string, labels: Record<string, string> = {}): string {
  const l = Object.entries(labels)
    .map(([k, v]) => `\n    ${k}: ${v}`)
    .join('');
  return `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n  namespace: default${l ? `\n  labels:${l}` : ''}\nspec:\n  type: git\n  git:\n    repo: ${repo}\n    branch: main\n`;
}

export function packageVariant(name: string, downstream: string, extra = '', revision = 'v1'): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: ${revision}\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n${extra}`;
}
