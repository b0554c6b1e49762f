import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { parseMetadataBlock, run } from '@kdelta/run';
import { cliFleets, mergeBranch, proposalRecord } from './__fixtures__/cli-fleet.js';
import { githubFleets } from './__fixtures__/github-fleet.js';

/**
 * A proposal's conflicts are those of the downstream's base branch, whatever its branch already
 * took from upstream: a reviewer's commit, or a merge of the base into the branch (GitHub's
 * "Update branch"), then a new release, still reports the downstream's `replicas: 6` that
 * upstream overrides, and the status stays red. Both forges: the local one and the fake GitHub.
 */

const local = cliFleets();
const hub = githubFleets({ fake: { tokens: { ghs_fake: { login: 'kdelta-bot', permissions: 'all' } } }, owner: 'carry-conflicts' });

const deployment = (replicas: number, extra = '') =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n${extra}`;

/** A forge the scenario runs on: how to run kdelta, read the branch and the proposal, and commit as a person. */
interface Forge {
  readonly name: string;
  setUp(): Promise<Fleet>;
  run(f: Fleet): Promise<{ action?: string; conflictCount?: number }>;
  /** The branch's tip, and a file of it. */
  tip(f: Fleet, branch: string): string;
  show(f: Fleet, branch: string, path: string): string;
  /** A person's commit on `branch` (the proposal's, or the base). */
  commit(f: Fleet, branch: string, files: Record<string, string>): Promise<string>;
  /** A person merges the base into the proposal's branch ("Update branch"). */
  updateBranch(f: Fleet): Promise<string>;
  /** A person merges the proposal into the base. */
  mergeProposal(f: Fleet): Promise<void>;
  body(f: Fleet): string;
  status(f: Fleet, sha: string): string | undefined;
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A clone of `url`, the base merged into the proposal's branch by a reviewer, pushed back. */
function mergeBaseInto(url: string, root: string): string {
  const work = join(root, `update-branch-${Date.now()}`);
  git(root, 'clone', '--quiet', '--branch', 'kdelta/web', url, work);
  git(work, '-c', 'user.name=Reviewer', '-c', 'user.email=reviewer@example.com', 'merge', '--quiet', '--no-ff', '--no-edit', 'origin/main');
  git(work, 'push', '--quiet', 'origin', 'HEAD:kdelta/web');
  const merge = git(work, 'rev-parse', 'HEAD');
  rmSync(work, { recursive: true, force: true });
  return merge;
}

const localForge: Forge = {
  name: 'local forge',
  async setUp() {
    const f = local.fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    return f;
  },
  async run(f) {
    const report = await run(local.opts(f));
    return report.results[0] ?? {};
  },
  tip: (f, branch) => git(f.downstream('cluster-01'), 'rev-parse', `refs/heads/${branch}`),
  show: (f, branch, path) => git(f.downstream('cluster-01'), 'show', `refs/heads/${branch}:${path}`),
  commit: async (f, branch, files) => f.commitAs('cluster-01', branch, files),
  updateBranch: async (f) => mergeBaseInto(f.downstream('cluster-01'), f.root),
  mergeProposal: async (f) => mergeBranch(f, 'cluster-01', 'kdelta/web'),
  body: (f) => proposalRecord(f, 'cluster-01', 'web'),
  status: (f) => /status:\n {2}state: (\w+)\n/.exec(proposalRecord(f, 'cluster-01', 'web'))?.[1],
};

const slug = (f: Fleet) => (f as Fleet & { slug(d: string): string }).slug('cluster-01');
const githubForge: Forge = {
  name: 'GitHub',
  setUp: () => hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01') } }),
  async run(f) {
    const report = await run(hub.runOptions(f));
    return report.results[0] ?? {};
  },
  tip: (f, branch) => git(hub.gh.gitDir(slug(f)), 'rev-parse', `refs/heads/${branch}`),
  show: (f, branch, path) => git(hub.gh.gitDir(slug(f)), 'show', `refs/heads/${branch}:${path}`),
  commit: (f, branch, files) => hub.gh.humanCommit(slug(f), branch, files, 'A reviewer edit\n'),
  updateBranch: async (f) => mergeBaseInto(hub.gh.gitDir(slug(f)), f.root),
  async mergeProposal(f) {
    const [pull] = hub.gh.pulls(slug(f)).filter((p) => p.state === 'open');
    await hub.gh.mergePull(slug(f), pull!.number);
  },
  body: (f) => hub.gh.pulls(slug(f)).filter((p) => p.state === 'open')[0]?.body ?? '',
  status: (f, sha) => hub.gh.statuses(slug(f), sha)[0]?.state,
};

/**
 * The downstream has the package with `replicas: 6` (its own edit of upstream's 3) and an open
 * update to upstream's 4: the conflict reported, the status red.
 */
async function conflicted(forge: Forge): Promise<Fleet> {
  const f = await forge.setUp();
  f.publish({ 'base-ns/deployment.yaml': deployment(3) }, 'base-ns/v1');
  expect((await forge.run(f)).action).toBe('proposed');
  await forge.mergeProposal(f);
  const ours = forge.show(f, 'main', 'web/deployment.yaml');
  await forge.commit(f, 'main', { 'web/deployment.yaml': ours.replace('replicas: 3', 'replicas: 6') });
  f.publish({ 'base-ns/deployment.yaml': deployment(4) }, 'base-ns/v1');
  const update = await forge.run(f);
  expect(update).toMatchObject({ action: 'proposed', conflictCount: 1 });
  expect(forge.show(f, 'kdelta/web', 'web/deployment.yaml')).toContain('replicas: 4');
  expect(forge.status(f, forge.tip(f, 'kdelta/web'))).toBe('failure');
  return f;
}

const REPLICAS_ROW = /\| `\.spec\.replicas` \| `3` \| `4` \| `6` \|/;

describe.each([localForge, githubForge])('conflicts survive human commits ($name)', (forge) => {
  it.each([
    { what: 'a reviewer commit', touch: (f: Fleet) => forge.commit(f, 'kdelta/web', { 'web/notes.md': 'reviewed\n' }) },
    {
      what: 'a merge of the base into the branch ("Update branch")',
      touch: async (f: Fleet) => {
        await forge.commit(f, 'main', { 'docs/ops.md': 'on call: team a\n' });
        return forge.updateBranch(f);
      },
    },
  ])('$what, then a new release: the replicas conflict is reported again and the status stays red', async ({ touch }) => {
    const f = await conflicted(forge);
    const carried = await touch(f);
    f.publish({ 'base-ns/deployment.yaml': deployment(4, '  minReadySeconds: 5\n') }, 'base-ns/v1');

    const again = await forge.run(f);
    expect(again).toMatchObject({ action: 'updated', conflictCount: 1 });
    const tip = forge.tip(f, 'kdelta/web');
    // carried: the branch moved forward from the person's commit
    expect(git(forge === localForge ? f.downstream('cluster-01') : hub.gh.gitDir(slug(f)), 'rev-parse', `${tip}^`)).toBe(carried);
    const deployed = forge.show(f, 'kdelta/web', 'web/deployment.yaml');
    expect(deployed).toContain('replicas: 4');
    expect(deployed).toContain('minReadySeconds: 5');
    const body = forge.body(f);
    expect(body).toContain('### Conflicts (1)');
    expect(body).toMatch(REPLICAS_ROW);
    expect(parseMetadataBlock(body)).toMatchObject({ conflicts: 1, headCommit: tip });
    expect(forge.status(f, tip)).toBe('failure');
    // what changed is the branch's own diff from the base: nothing the base brought in by a merge
    const changed = body.slice(body.indexOf('### What changed'), body.indexOf('### Conflicts'));
    expect(changed).toContain('- modified `web/deployment.yaml`');
    expect(changed).not.toContain('docs/ops.md');
  });

  it("a person's commit that changes a field this update changes too is reported as its own clash, apart from the conflicts", async () => {
    const f = await conflicted(forge);
    const ours = forge.show(f, 'kdelta/web', 'web/deployment.yaml');
    await forge.commit(f, 'kdelta/web', { 'web/deployment.yaml': ours.replace('spec:\n', 'spec:\n  minReadySeconds: 10\n') });
    f.publish({ 'base-ns/deployment.yaml': deployment(4, '  minReadySeconds: 5\n') }, 'base-ns/v1');

    const again = await forge.run(f);
    // the replicas conflict with the base branch, and the clash with the person's commit
    expect(again).toMatchObject({ action: 'updated', conflictCount: 2 });
    const body = forge.body(f);
    expect(body).toContain('### Conflicts (1)');
    expect(body).toMatch(REPLICAS_ROW);
    expect(body).toContain('### Clashes with commits on this branch (1)');
    const clashes = body.slice(body.indexOf('### Clashes'));
    expect(clashes).toMatch(/\| `\.spec\.minReadySeconds` \| \(absent\) \| `5` \| `10` \|/);
    expect(forge.show(f, 'kdelta/web', 'web/deployment.yaml')).toContain('minReadySeconds: 5');
    expect(forge.status(f, forge.tip(f, 'kdelta/web'))).toBe('failure');
  });
});
