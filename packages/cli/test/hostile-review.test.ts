// Hostile inputs to review: nothing merges that nobody reviewed. A branch holding commits kdelta
// did not make, a package that is not ready (a required injection point without a source),
// conflicts and a failed render are never auto-merged: auto-merge that was on is turned off (the
// body says so), the proposal is a draft where it is not ready, and its status says why. Real git
// repositories, the fake GitHub (auto-merge and drafts through its GraphQL API) and the local forge.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import { githubFleets, type GitHubFleet } from './run/__fixtures__/github-fleet.js';
import { cliFleets, proposalRecord } from './run/__fixtures__/cli-fleet.js';

const hub = githubFleets({ fake: { tokens: { ghs_fake: { login: 'kdelta-bot', permissions: 'all' } } }, owner: 'review' });
const local = cliFleets();

const NAMESPACE = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n';
const TIERED = (tier: string) => `${NAMESPACE}  annotations:\n    tier: ${tier}\n`;
const INJECTORS = '  injectors:\n  - name: us-east1-endpoints\n';
const REQUIRED_POINT =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: endpoints\n  annotations:\n    kpt.dev/config-injection: required\ndata:\n  db: unset\n';
const AUTO_MERGE_OFF = '> **kdelta turned auto-merge off**';

const githubOpts = (f: Fleet, extra: Partial<RunOptions> = {}): RunOptions => hub.runOptions(f, { autoMerge: 'squash' }, extra);

/** cluster-01 on the fake GitHub, whose `main` requires the kdelta check (auto-merge then waits for it), and variant `web`. */
async function githubFleet(variant = ''): Promise<GitHubFleet & { slug: string }> {
  const f = await hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01', variant) } });
  hub.gh.requireStatusChecks(f.slug('cluster-01'), 'main', ['kdelta']);
  return Object.assign(f, { slug: f.slug('cluster-01') });
}

const bare = (slug: string, ...args: string[]) => execFileSync('git', args, { cwd: hub.gh.gitDir(slug), encoding: 'utf8' }).trim();
const tipOf = (slug: string) => bare(slug, 'rev-parse', 'refs/heads/kdelta/web');

/** The package of the proposal's branch, as files of the repository. */
function branchPackage(slug: string): Record<string, string> {
  const paths = bare(slug, 'ls-tree', '-r', '--name-only', 'refs/heads/kdelta/web', 'web/').split('\n');
  const show = (p: string) => execFileSync('git', ['show', `refs/heads/kdelta/web:${p}`], { cwd: hub.gh.gitDir(slug), encoding: 'utf8' });
  return Object.fromEntries(paths.map((p) => [p, show(p)]));
}

/** A person's commit on the proposal's branch. */
const humanOnBranch = (slug: string) =>
  hub.gh.humanCommit(slug, 'kdelta/web', { 'web/notes.md': 'reviewed by hand\n' }, 'Add review notes\n');

describe('a branch holding commits kdelta did not make is never auto-merged', () => {
  const leftAlone: readonly { why: string; files: Record<string, string>; release: boolean }[] = [
    { why: 'nothing moved', files: { 'web/notes.md': 'reviewed by hand\n' }, release: false },
    // never carried (carry.ts): on the branch, it would run with the repository's secrets once merged
    { why: 'a commit outside the package, upstream moved', files: { '.github/workflows/pwn.yml': 'on: push\n' }, release: true },
  ];
  for (const c of leftAlone) {
    it(`left alone (${c.why}): the auto-merge kdelta turned on is turned off, the body says so, the person's commit gets a status naming it; the next run writes nothing`, async () => {
      const f = await githubFleet();
      expect((await run(githubOpts(f))).results[0]).toMatchObject({ action: 'proposed' });
      expect(hub.gh.pulls(f.slug)[0]).toMatchObject({ state: 'open', auto_merge: { merge_method: 'squash' } });
      const human = await hub.gh.humanCommit(f.slug, 'kdelta/web', c.files, 'Add review notes\n');
      if (c.release) f.publish({ 'base-ns/namespace.yaml': TIERED('gold') }, 'base-ns/v1');

      const second = await run(githubOpts(f));
      expect(second.results[0]).toMatchObject({ action: 'blocked', writes: true });
      expect(second.results[0]?.message).toContain('auto-merge turned off');
      const [pull] = hub.gh.pulls(f.slug);
      expect(pull).toMatchObject({ state: 'open', auto_merge: null });
      expect(pull?.body).toContain(`${AUTO_MERGE_OFF}: the branch holds 1 commit(s) kdelta did not make (${human.slice(0, 12)})`);
      // the branch is the person's: nothing is pushed onto it
      expect(tipOf(f.slug)).toBe(human);
      expect(hub.gh.statuses(f.slug, human)).toMatchObject([
        { state: 'pending', context: 'kdelta', description: expect.stringContaining(human.slice(0, 12)) },
      ]);

      hub.gh.clearRequests();
      expect((await run(githubOpts(f))).results[0]).toMatchObject({ action: 'blocked', writes: false });
      expect(hub.gh.writes()).toBe(0);
    });
  }

  for (const onBefore of [true, false]) {
    it(`carried forward on a new upstream commit: auto-merge ${onBefore ? 'that was on is turned off (the body says so)' : 'is not turned on'}; the status on the new commit names the person's`, async () => {
      const f = await githubFleet();
      await run(onBefore ? githubOpts(f) : hub.runOptions(f));
      expect(hub.gh.pulls(f.slug)[0]?.auto_merge).toEqual(onBefore ? { merge_method: 'squash' } : null);
      const human = await humanOnBranch(f.slug);
      f.publish({ 'base-ns/namespace.yaml': TIERED('gold') }, 'base-ns/v1');

      const second = await run(githubOpts(f));
      expect(second.results[0]).toMatchObject({ action: 'updated', writes: true });
      expect(second.results[0]?.message).toContain(`carried forward 1 commit(s) kdelta did not make (${human.slice(0, 12)}`);
      const [pull] = hub.gh.pulls(f.slug);
      const tip = tipOf(f.slug);
      expect(bare(f.slug, 'rev-parse', `${tip}^`)).toBe(human);
      expect(pull).toMatchObject({ state: 'open', draft: false, auto_merge: null });
      if (onBefore)
        expect(pull?.body).toContain(`${AUTO_MERGE_OFF}: the branch holds 1 commit(s) kdelta did not make (${human.slice(0, 12)})`);
      else expect(pull?.body).not.toContain(AUTO_MERGE_OFF);
      expect(hub.gh.statuses(f.slug, tip).at(-1)).toMatchObject({
        state: 'success',
        context: 'kdelta',
        description: `1 commit(s) kdelta did not make (${human.slice(0, 12)}); no conflicts; review them (no auto-merge)`,
      });

      // nothing new: the hold stays, and nothing is written
      hub.gh.clearRequests();
      expect((await run(githubOpts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
      expect(hub.gh.writes()).toBe(0);
      expect(hub.gh.pulls(f.slug)[0]?.auto_merge).toBeNull();
    });
  }

  it("the local forge records the status naming the person's commit on a branch left alone", async () => {
    const f = local.fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await run(local.opts(f));
    const human = f.commitAs('cluster-01', 'kdelta/web', { 'web/notes.md': 'reviewed by hand\n' });
    expect((await run(local.opts(f))).results[0]).toMatchObject({ action: 'blocked', writes: true });
    expect(proposalRecord(f, 'cluster-01', 'web')).toMatch(
      new RegExp(
        `status:\\n {2}state: pending\\n {2}description: "?1 commit\\(s\\) kdelta did not make \\(${human.slice(0, 12)}\\): not checked by kdelta`,
      ),
    );
    expect((await run(local.opts(f))).results[0]).toMatchObject({ action: 'blocked', writes: false });
  });
});

/**
 * What makes a proposal not ready, each reached from a clean proposal (auto-merge on, on GitHub):
 * `variant` is the variant from the start, `make` what then happens before the next run.
 */
interface NotReadyCase {
  readonly why: string;
  readonly variant?: string;
  /** The upstream's namespace at first. */
  readonly namespace?: string;
  make(f: Fleet, land: (files: Record<string, string>) => Promise<void>, branch: () => Record<string, string>): Promise<void> | void;
  /** The status description. */
  readonly status: RegExp;
  /** The line in the body where auto-merge was turned off. */
  readonly held: string;
}

const NOT_READY: readonly NotReadyCase[] = [
  {
    why: 'a required injection point without a source',
    variant: INJECTORS,
    make: (f) => void f.publish({ 'base-ns/endpoints.yaml': REQUIRED_POINT }, 'base-ns/v1'),
    status: /^readiness gate\(s\) not met \(config\.injection\.ConfigMap\.endpoints\): see the proposal$/,
    held: 'readiness gate(s) not met (config.injection.ConfigMap.endpoints)',
  },
  {
    why: 'conflicts',
    namespace: TIERED('bronze'),
    async make(f, land, branch) {
      // the package reached main by hand, with a local edit of a field upstream then changes too
      const files = branch();
      await land({ ...files, 'web/namespace.yaml': files['web/namespace.yaml']!.replace('tier: bronze', 'tier: silver') });
      f.publish({ 'base-ns/namespace.yaml': TIERED('gold') }, 'base-ns/v1');
    },
    status: /^1 conflict\(s\) to review: see the proposal's conflict report$/,
    held: '1 conflict(s) to review',
  },
  {
    why: 'a failed render',
    make(f) {
      const fn = join(f.root, 'pass.sh');
      writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });
      // an exec function, which the run does not allow
      f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`) });
    },
    status: /^render failed: function .*pass\.sh \(web\/Kptfile pipeline\.mutators\[0\]\): see the proposal$/,
    held: 'render failed: function',
  },
];

describe('a proposal that is not ready gets a failing status, is a draft, and is never auto-merged', () => {
  for (const c of NOT_READY) {
    it(`${c.why}, on GitHub: the auto-merge that was on is turned off and the body says why`, async () => {
      const f = await githubFleet(c.variant);
      if (c.namespace) f.publish({ 'base-ns/namespace.yaml': c.namespace }, 'base-ns/v1');
      await run(githubOpts(f));
      expect(hub.gh.pulls(f.slug)[0]).toMatchObject({ draft: false, auto_merge: { merge_method: 'squash' } });
      await c.make(
        f,
        async (files) => void (await hub.gh.humanCommit(f.slug, 'main', files, 'Land web by hand\n')),
        () => branchPackage(f.slug),
      );

      const second = await run(githubOpts(f));
      expect(second.results[0]).toMatchObject({ action: 'updated', writes: true });
      const [pull] = hub.gh.pulls(f.slug);
      expect(pull).toMatchObject({ state: 'open', draft: true, auto_merge: null });
      expect(pull?.body).toContain(`${AUTO_MERGE_OFF}: ${c.held}`);
      const status = hub.gh.statuses(f.slug, tipOf(f.slug)).at(-1);
      expect(status).toMatchObject({ state: 'failure', context: 'kdelta' });
      expect(status?.description).toMatch(c.status);
    });

    it(`${c.why}, on the local forge: recorded as a draft with a failing status`, async () => {
      const f = local.fleet(['cluster-01']);
      if (c.namespace) f.publish({ 'base-ns/namespace.yaml': c.namespace }, 'base-ns/v1');
      f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', c.variant) });
      await run(local.opts(f));
      expect(proposalRecord(f, 'cluster-01', 'web')).not.toMatch(/\ndraft: true\n/);
      await c.make(
        f,
        async (files) => void f.commitAs('cluster-01', 'main', files),
        () => Object.fromEntries(Object.entries(f.files('cluster-01', 'kdelta/web', 'web')).map(([k, v]) => [`web/${k}`, v])),
      );

      const second = await run(local.opts(f));
      expect(second.results[0]).toMatchObject({ action: 'updated', writes: true });
      const record = proposalRecord(f, 'cluster-01', 'web');
      expect(record).toMatch(/\ndraft: true\n/);
      const [, state, description] = /\nstatus:\n {2}state: (\w+)\n {2}description: "?(.*?)"?\n/.exec(record) ?? [];
      expect(state).toBe('failure');
      expect(description).toMatch(c.status);
    });
  }
});
