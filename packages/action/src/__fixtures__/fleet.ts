import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Real repositories on disk for the Action's tests: an upstream with the package `base-ns` tagged
 * base-ns/v1, bare downstream repositories, and a control repository (the workspace), plus a
 * runner that starts the committed bundle as GitHub's runner does.
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

export function writeTree(root: string, files: Readonly<Record<string, string | null>>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, path);
    if (text === null) rmSync(full, { recursive: true, force: true });
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
  }
}

export const UPSTREAM_PACKAGE: Record<string, string> = {
  'base-ns/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\ninfo:\n  description: a namespace\n',
  'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n',
};

export interface Fleet {
  readonly root: string;
  readonly upstream: string;
  readonly control: string;
  downstream(name: string): string;
  writeControl(files: Readonly<Record<string, string | null>>): void;
  publish(files: Readonly<Record<string, string | null>>, tag: string): void;
  refs(name: string): string;
  cleanup(): void;
}

export function createFleet(downstreams: readonly string[]): Fleet {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-action-')));
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
  const control = join(root, 'control');
  mkdirSync(join(control, '.kdelta'), { recursive: true });
  const fleet: Fleet = {
    root,
    upstream,
    control,
    downstream: (name) => join(root, `${name}.git`),
    writeControl: (files) => writeTree(join(control, '.kdelta'), files),
    publish(files, tag) {
      writeTree(upstream, files);
      git(upstream, 'add', '--all');
      git(upstream, 'commit', '--quiet', '--allow-empty', '-m', `publish ${tag}`);
      git(upstream, 'tag', '-f', tag);
    },
    refs: (name) => git(fleet.downstream(name), 'for-each-ref', '--format=%(refname) %(objectname)'),
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

export function packageVariant(name: string, downstream: string, revision = 'v1'): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: ${revision}\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n`;
}

// ---------------------------------------------------------------------------------------------
// Running the bundle as the runner does
// ---------------------------------------------------------------------------------------------

export const BUNDLE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');

export interface ActionRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly outputs: Record<string, string>;
  readonly summary: string;
}

/** GITHUB_OUTPUT's format: `name<<DELIMITER\nvalue\nDELIMITER` (or `name=value`). */
export function parseOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i]!);
      out[heredoc[1]!] = value.join('\n');
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return out;
}

/** Input names as the runner passes them: `INPUT_` + the name upper-cased, spaces to `_` (hyphens kept). */
export function inputEnv(inputs: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.replace(/ /g, '_').toUpperCase()}`, v]));
}

/**
 * Start the bundle and wait for it. Asynchronous on purpose: a fake GitHub served from this same
 * process must keep answering while the Action runs.
 */
export async function runAction(
  workspace: string,
  inputs: Readonly<Record<string, string>>,
  extraEnv: Record<string, string> = {},
): Promise<ActionRun> {
  const files = mkdtempSync(join(tmpdir(), 'kdelta-action-files-'));
  try {
    const outputFile = join(files, 'output');
    const summaryFile = join(files, 'summary');
    writeFileSync(outputFile, '');
    writeFileSync(summaryFile, '');
    const env: Record<string, string | undefined> = { ...gitEnv };
    // Nothing of the test runner's own environment that looks like an input or a runner file.
    for (const k of Object.keys(env)) if (k.startsWith('INPUT_') || k.startsWith('GITHUB_')) delete env[k];
    const child = spawn(process.execPath, [BUNDLE], {
      cwd: workspace,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...env,
        GITHUB_WORKSPACE: workspace,
        GITHUB_OUTPUT: outputFile,
        GITHUB_STEP_SUMMARY: summaryFile,
        KDELTA_CACHE_DIR: join(files, 'cache'),
        ...inputEnv(inputs),
        ...extraEnv,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => void (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => void (stderr += t));
    const status = await new Promise<number | null>((done, fail) => {
      child.on('error', fail);
      child.on('close', (code) => done(code));
    });
    return {
      status,
      stdout,
      stderr,
      outputs: parseOutputFile(readFileSync(outputFile, 'utf8')),
      summary: readFileSync(summaryFile, 'utf8'),
    };
  } finally {
    rmSync(files, { recursive: true, force: true });
  }
}
