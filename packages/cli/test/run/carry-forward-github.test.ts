import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { parseMetadataBlock, run, type RunOptions } from '@kdelta/run';
import { githubFleets } from './__fixtures__/github-fleet.js';

/**
 * A human's commits on a pull request's branch are carried forward on GitHub (the fake one): by
 * a git push, or by a commit made through the API (signed commits) whose parent is the branch's
 * tip; never a rewrite. The kdelta:stop label still stops everything.
 */

const hub = githubFleets({ fake: { tokens: { ghs_fake: { login: 'kdelta-bot', permissions: 'all' } } }, owner: 'carry' });

const NAMESPACE = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n';

/** cluster-01 on the fake GitHub, the upstream on disk at base-ns/v1 with `namespace`, and variant `web`. */
async function fleet(namespace = NAMESPACE): Promise<Fleet & { slug: string }> {
  const f = await hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01') } });
  if (namespace !== NAMESPACE) f.publish({ 'base-ns/namespace.yaml': namespace }, 'base-ns/v1');
  return Object.assign(f, { slug: f.slug('cluster-01') });
}

const opts = (f: Fleet, github: RunOptions['github'] = {}): RunOptions => hub.runOptions(f, github);

const bare = (slug: string, ...args: string[]) => execFileSync('git', args, { cwd: hub.gh.gitDir(slug), encoding: 'utf8' }).trim();
const show = (slug: string, path: string) => bare(slug, 'show', `refs/heads/kdelta/web:${path}`);
const tip = (slug: string) => bare(slug, 'rev-parse', 'refs/heads/kdelta/web');

function isAncestor(slug: string, commit: string, of: string): boolean {
  try {
    bare(slug, 'merge-base', '--is-ancestor', commit, of);
    return true;
  } catch {
    return false;
  }
}

/** A reviewer's commit on the pull request's branch, editing the namespace. */
async function humanEdit(slug: string, edit: (namespace: string) => string): Promise<string> {
  return hub.gh.humanCommit(slug, 'kdelta/web', { 'web/namespace.yaml': edit(show(slug, 'web/namespace.yaml')) }, 'Label it ours\n');
}

describe('kdelta run --forge github carries human commits forward', () => {
  for (const signedCommits of [false, true]) {
    it(`a human commit survives an upstream release (${signedCommits ? 'signed commits: through the API' : 'git push'}): one new commit on top, the edit kept, the pull request naming it`, async () => {
      const f = await fleet();
      const first = await run(opts(f, { signedCommits }));
      expect(first.results[0]?.action).toBe('proposed');
      const before = tip(f.slug);
      const human = await humanEdit(f.slug, (ns) =>
        ns.replace('  name: example # the namespace\n', '  name: example # the namespace\n  labels:\n    owner: human\n'),
      );
      const release = f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');

      const second = await run(opts(f, { signedCommits }));
      expect(second.results[0]).toMatchObject({ action: 'updated', writes: true });
      expect(second.results[0]?.message).toContain(`carried forward 1 commit(s) kdelta did not make (${human.slice(0, 12)} by Octo Human)`);
      const after = tip(f.slug);
      expect(isAncestor(f.slug, before, after)).toBe(true);
      expect(isAncestor(f.slug, human, after)).toBe(true);
      expect(bare(f.slug, 'rev-parse', `${after}^`)).toBe(human);
      if (signedCommits) expect(hub.gh.commitVerified(f.slug, after)).toBe(true);
      const namespace = show(f.slug, 'web/namespace.yaml');
      expect(namespace).toContain('owner: human');
      expect(namespace).toContain('tier: gold');
      expect(show(f.slug, 'web/Kptfile')).toMatch(new RegExp(`upstreamLock:[\\s\\S]*commit: ${release}`));
      const [pull] = hub.gh.pulls(f.slug);
      expect(pull?.head.sha).toBe(after);
      expect(pull?.body).toContain(`- \`${human.slice(0, 12)}\` by Octo Human: \`Label it ours\``);
      expect(parseMetadataBlock(pull?.body ?? '')).toMatchObject({ headCommit: after, upstream: { commit: release } });

      // nothing moved since: not one write
      hub.gh.clearRequests();
      const third = await run(opts(f, { signedCommits }));
      expect(third.results[0]).toMatchObject({ action: 'unchanged', writes: false });
      expect(hub.gh.writes()).toBe(0);
      expect(tip(f.slug)).toBe(after);
    });
  }

  it("a human edit of a field upstream changes too is a clash on the pull request, the human's value as local", async () => {
    const f = await fleet(`${NAMESPACE}  annotations:\n    tier: bronze\n`);
    await run(opts(f));
    const human = await humanEdit(f.slug, (ns) => ns.replace('tier: bronze', 'tier: silver'));
    f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');
    const second = await run(opts(f));
    expect(second.results[0]).toMatchObject({ action: 'updated', conflictCount: 1 });
    const after = tip(f.slug);
    expect(isAncestor(f.slug, human, after)).toBe(true);
    const [pull] = hub.gh.pulls(f.slug);
    expect(pull?.body).toContain('### Clashes with commits on this branch (1)');
    expect(pull?.body).toMatch(/\| `\.metadata\.annotations\.tier` \| `bronze` \| `gold` \| `silver` \|/);
    expect(hub.gh.statuses(f.slug, after)[0]).toMatchObject({ state: 'failure', context: 'kdelta' });
  });

  it('the kdelta:stop label still stops everything: a branch with human commits is left alone when upstream moves', async () => {
    const f = await fleet();
    await run(opts(f));
    const human = await humanEdit(f.slug, (ns) => `${ns}# reviewed\n`);
    hub.gh.addLabel(f.slug, hub.gh.pulls(f.slug)[0]!.number, 'kdelta:stop');
    f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');
    hub.gh.clearRequests();
    const report = await run(opts(f));
    expect(report.results[0]).toMatchObject({ action: 'blocked', writes: false });
    expect(report.results[0]?.message).toMatch(/carries the label kdelta:stop: left alone/);
    expect(hub.gh.writes()).toBe(0);
    expect(tip(f.slug)).toBe(human);
  });
});
