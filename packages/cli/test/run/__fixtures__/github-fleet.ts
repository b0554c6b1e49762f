import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeGitHub, type FakeGitHubOptions, startFakeGitHub } from '@kdelta/fake-github';
import { getPackageFiles, type Materialize, type RunOptions } from '@kdelta/run';
import { createFleet, type Fleet, repository } from '@kdelta/test-support';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Io } from '../../../src/command.js';
import { main } from '../../../src/main.js';

/**
 * The tests' stand-in for the 3-way update: the upstream package at the resolved commit, replacing
 * the downstream's files (upstream wins). Enough to test everything around it.
 */
export const copyMaterialize: Materialize = async (input) => {
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};

/** A fleet whose downstreams are repositories `<owner>/<downstream>` on the fake GitHub. */
export type GitHubFleet = Fleet & { owner: string; slug(downstream: string): string };

/** The variables through which the machine running the tests could hand kdelta a GitHub of its own. */
const GITHUB_VARIABLES = [
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'KDELTA_GIT_TOKEN',
  'GITHUB_API_URL',
  'GITHUB_SERVER_URL',
  'GITHUB_GRAPHQL_URL',
  'GITHUB_REPOSITORY',
];

/**
 * The fake GitHub of one test file (started before its tests; after them, closed once it is
 * checked that kdelta broke none of GitHub's rules), its fleets, each removed after its test, and
 * one fetch cache for the file. Call at the top of the file (it registers the hooks). `owner`
 * names the owners of the fleets' repositories: `<owner>-1`, `<owner>-2`, …
 */
export function githubFleets(options: { fake?: FakeGitHubOptions; owner?: string } = {}): {
  /** The fake GitHub; read it in a test or a hook, not at the top of the file (it starts in `beforeAll`). */
  readonly gh: FakeGitHub;
  readonly cacheDir: string;
  /** A fleet on disk with no downstream, removed after the test. */
  bareFleet(): Fleet;
  /** A new owner's name, for repositories of one test. */
  nextOwner(): string;
  /**
   * The upstream and control repository on disk, each downstream a repository of a new owner on
   * the fake GitHub (with a README on `main`); `repositories.yaml` lists them with `labels`, and
   * `control` is written with it.
   */
  fleet(downstreams: readonly string[], o?: { labels?: Record<string, string>; control?: Record<string, string> }): Promise<GitHubFleet>;
  /** The environment without any GitHub of the machine running the tests, plus `extra`. */
  cleanEnv(extra?: Record<string, string>): Record<string, string | undefined>;
  /** A run of `f` on the fake GitHub with its token, without write pacing; `github` and `extra` override. */
  runOptions(f: Fleet, github?: RunOptions['github'], extra?: Partial<RunOptions>): RunOptions;
  /** The CLI in `f`'s control repository, given the fake GitHub by the environment. */
  kdelta(f: Fleet, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** A person edits pull request `number` on GitHub's page (with `token`, the fake's own by default). */
  patchPull(slug: string, number: number, fields: Record<string, unknown>, token?: string): Promise<void>;
} {
  let fake: FakeGitHub | undefined;
  const fleets: Fleet[] = [];
  const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-github-cache-'));
  let owners = 0;
  beforeAll(async () => {
    fake = await startFakeGitHub(options.fake);
  });
  afterEach(() => {
    for (const f of fleets.splice(0)) f.cleanup();
  });
  afterAll(async () => {
    expect(gh().violations).toEqual([]);
    await gh().close();
    rmSync(cacheDir, { recursive: true, force: true });
  });
  const gh = (): FakeGitHub => {
    if (!fake) throw new Error('the fake GitHub starts in beforeAll: read it in a test or a hook');
    return fake;
  };
  const bareFleet = (): Fleet => {
    const f = createFleet([]);
    fleets.push(f);
    return f;
  };
  const nextOwner = () => `${options.owner ?? 'org'}-${++owners}`;
  const cleanEnv = (extra: Record<string, string> = {}): Record<string, string | undefined> => {
    const env: Record<string, string | undefined> = { ...process.env, KDELTA_CACHE_DIR: cacheDir, ...extra };
    for (const k of GITHUB_VARIABLES) if (!(k in extra)) delete env[k];
    return env;
  };
  return {
    get gh() {
      return gh();
    },
    cacheDir,
    bareFleet,
    nextOwner,
    async fleet(downstreams, o = {}) {
      const f = bareFleet();
      const owner = nextOwner();
      for (const d of downstreams) await gh().createRepo(`${owner}/${d}`, { defaultBranch: 'main', files: { 'README.md': `# ${d}\n` } });
      f.writeControl({
        'repositories.yaml': [
          repository('catalog', f.upstream),
          ...downstreams.map((d) => repository(d, `${gh().serverUrl}/${owner}/${d}.git`, o.labels)),
        ].join('---\n'),
        ...o.control,
      });
      return Object.assign(f, { owner, slug: (d: string) => `${owner}/${d}` });
    },
    cleanEnv,
    runOptions(f, github = {}, extra = {}) {
      return {
        cwd: f.control,
        cacheDir,
        env: cleanEnv(),
        forge: 'github',
        github: {
          token: gh().token,
          apiUrl: gh().apiUrl,
          serverUrl: gh().serverUrl,
          pacing: { writeSpacing: false, retryAfterUnitMs: 20 },
          ...github,
        },
        ...extra,
      };
    },
    async kdelta(f, ...args) {
      const out = { stdout: '', stderr: '' };
      const env = cleanEnv({ GITHUB_TOKEN: gh().token, GITHUB_API_URL: gh().apiUrl, GITHUB_SERVER_URL: gh().serverUrl });
      const io: Io = { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd: f.control, env };
      const code = await main(args, io);
      return { code, ...out };
    },
    async patchPull(slug, number, fields, token = gh().token) {
      const res = await fetch(`${gh().apiUrl}/repos/${slug}/pulls/${number}`, {
        method: 'PATCH',
        headers: { authorization: `token ${token}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
        body: JSON.stringify(fields),
      });
      expect(res.status).toBe(200);
    },
  };
}

/** The text of every file under `root` (binary files too, as latin1), to look for a secret in. */
export function allFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else if (s.isFile()) out.push(readFileSync(p, 'latin1'));
    }
  };
  walk(root);
  return out;
}
