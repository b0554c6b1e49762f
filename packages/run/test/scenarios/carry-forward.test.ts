import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { getPackage } from '@kdelta/package-update';
import { createFleet, gitEnv, packageVariant, repository } from '@kdelta/test-support';
import { parseMetadataBlock, run } from '../../src/index.js';
import { describeScenarios } from './harness.js';

/**
 * A person's commits on a proposal's branch are carried forward, on every forge: when the
 * upstream or the variant moves, the branch gets one new commit on top of them, built by the
 * 3-way merge from the branch's package; while nothing moved, the branch is left alone. Never a
 * rewrite.
 */

const NAMESPACE = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n';
const LABELLED = (ns: string) =>
  ns.replace('  name: example # the namespace\n', '  name: example # the namespace\n  labels:\n    owner: human\n');

describeScenarios('human commits on a proposal branch are carried forward', {}, ({ forge, fleet }) => {
  /** Variant `web` proposed into cluster-01 from base-ns/v1, published with `namespace`. */
  async function proposed(namespace = NAMESPACE) {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
    if (namespace !== NAMESPACE) f.publish({ 'base-ns/namespace.yaml': namespace }, 'base-ns/v1');
    return f;
  }

  // on GitHub a commit is made by a git push, or through the API (signed commits) on the branch's tip
  const ways = forge === 'github' ? [{ signedCommits: false }, { signedCommits: true }] : [{}];
  for (const way of ways) {
    const how = 'signedCommits' in way ? (way.signedCommits ? ' (signed commits: through the API)' : ' (git push)') : '';
    it(`a person's edit survives an upstream release${how}: one new commit on top, the edit and the release merged, the lock at the new commit, the proposal naming the carried commit`, async () => {
      const f = await proposed();
      const runOnce = () => f.run(forge === 'github' ? { github: way } : {});
      expect((await runOnce()).results[0]).toMatchObject({ action: 'proposed' });
      const kdeltaCommit = f.tip('cluster-01', 'kdelta/web')!;
      const human = await f.commitAs(
        'cluster-01',
        'kdelta/web',
        { 'web/namespace.yaml': LABELLED(f.show('cluster-01', 'kdelta/web', 'web/namespace.yaml')) },
        'Label it ours\n',
      );
      // the upstream releases again: base-ns/v1 moves to a commit that adds an annotation
      const release = f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');

      const second = await runOnce();
      expect(second.results[0]).toMatchObject({ action: 'updated', writes: true });
      expect(second.results[0]?.message).toContain(
        `carried forward 1 commit(s) kdelta did not make (${human.slice(0, 12)} by ${f.person})`,
      );
      const after = f.tip('cluster-01', 'kdelta/web')!;
      // the branch only moved forward: the person's commit (and kdelta's first) are in its
      // history, and the new commit sits directly on the person's
      expect(f.isAncestor('cluster-01', human, after)).toBe(true);
      expect(f.isAncestor('cluster-01', kdeltaCommit, after)).toBe(true);
      expect(f.git('cluster-01', 'rev-parse', `${after}^`)).toBe(human);
      // the proposal is built from the base branch, which has no package yet: it adds it
      expect(f.git('cluster-01', 'log', '--format=%s', `${human}..${after}`)).toMatch(/^kdelta: add web \(web\) from base-ns\/v1$/);
      const namespace = f.show('cluster-01', 'kdelta/web', 'web/namespace.yaml');
      expect(namespace).toContain('owner: human');
      expect(namespace).toContain('tier: gold');
      expect(f.show('cluster-01', 'kdelta/web', 'web/Kptfile')).toMatch(new RegExp(`upstreamLock:[\\s\\S]*commit: ${release}`));

      const { body } = f.proposal('cluster-01', 'kdelta/web');
      expect(body).toContain('### Carried forward');
      expect(body).toContain(`- \`${human.slice(0, 12)}\` by ${f.person}: \`Label it ours\``);
      // what changed is still against the base branch, which has no package yet
      expect(body).toMatch(/### What changed\n\n- added `web\/Kptfile`\n/);
      expect(body).toContain('- added `web/namespace.yaml`');
      expect(parseMetadataBlock(body)).toMatchObject({ headCommit: after, upstream: { commit: release } });

      // nothing moved since: not one write
      f.mark();
      expect((await runOnce()).results[0]).toMatchObject({ action: 'unchanged', writes: false });
      expect(f.wrote()).toBe(false);
      expect(f.tip('cluster-01', 'kdelta/web')).toBe(after);
      expect(f.proposal('cluster-01', 'kdelta/web').body).toBe(body);
    });
  }

  it("a person's edit of a field upstream changes too is a clash with the carried commit, the person's value as local", async () => {
    const f = await proposed(`${NAMESPACE}  annotations:\n    tier: bronze\n`);
    await f.run();
    const ns = f.show('cluster-01', 'kdelta/web', 'web/namespace.yaml');
    expect(ns).toContain('tier: bronze');
    const human = await f.commitAs('cluster-01', 'kdelta/web', { 'web/namespace.yaml': ns.replace('tier: bronze', 'tier: silver') });
    f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');

    const second = await f.run();
    expect(second.results[0]).toMatchObject({ action: 'updated', conflictCount: 1 });
    expect(f.isAncestor('cluster-01', human, f.tip('cluster-01', 'kdelta/web')!)).toBe(true);
    const proposal = f.proposal('cluster-01', 'kdelta/web');
    // not a conflict with the base branch (which has no package): a clash with the person's commit
    expect(proposal.body).not.toContain('### Conflicts');
    expect(proposal.body).toContain('### Clashes with commits on this branch (1)');
    expect(proposal.body).toMatch(/\| `\.metadata\.annotations\.tier` \| `bronze` \| `gold` \| `silver` \|/);
    expect(proposal.body).toContain(`\`${human.slice(0, 12)}\` by ${f.person}`);
    expect(proposal.status).toMatchObject({ state: 'failure' });
  });

  it("a person's commit is left alone while nothing moved (one status naming it, then no write), and carried forward when the variant changes", async () => {
    const f = await proposed();
    await f.run();
    const human = await f.commitAs('cluster-01', 'kdelta/web', { 'web/notes.md': 'mine\n' });
    const body = f.proposal('cluster-01', 'kdelta/web').body;
    f.mark();
    const still = await f.run();
    // the one write: the status on the person's commit
    expect(still.results[0]).toMatchObject({ action: 'blocked', writes: true });
    expect(f.wrote()).toBe(true);
    expect(still.results[0]?.message).toMatch(/commit\(s\) kdelta did not make/);
    expect(still.results[0]?.message).toContain(`${human.slice(0, 12)} by ${f.person} <human@example.com>`);
    expect(f.tip('cluster-01', 'kdelta/web')).toBe(human);
    // only the status changes: it names the commit (hostile-review.test.ts)
    expect(f.proposal('cluster-01', 'kdelta/web')).toMatchObject({
      body,
      status: { state: 'pending', description: expect.stringContaining(`1 commit(s) kdelta did not make (${human.slice(0, 12)}`) },
    });
    f.mark();
    expect((await f.run()).results[0]).toMatchObject({ action: 'blocked', writes: false });
    expect(f.wrote()).toBe(false);

    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: green\n') });
    expect((await f.run()).results[0]).toMatchObject({ action: 'updated' });
    expect(f.git('cluster-01', 'rev-parse', 'refs/heads/kdelta/web^')).toBe(human);
    expect(f.show('cluster-01', 'kdelta/web', 'web/notes.md')).toBe('mine\n');
    expect(f.show('cluster-01', 'kdelta/web', 'web/package-context.yaml')).toContain('team: green');
  });

  if (forge === 'github') {
    it('the kdelta:stop label still stops everything: a branch with commits of a person is left alone when upstream moves, with no write', async () => {
      const f = await proposed();
      await f.run();
      const human = await f.commitAs('cluster-01', 'kdelta/web', {
        'web/namespace.yaml': `${f.show('cluster-01', 'kdelta/web', 'web/namespace.yaml')}# reviewed\n`,
      });
      f.label('cluster-01', 'kdelta/web', 'kdelta:stop');
      f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');
      f.mark();
      const report = await f.run();
      expect(report.results[0]).toMatchObject({ action: 'blocked', writes: false });
      expect(report.results[0]?.message).toMatch(/carries the label kdelta:stop: left alone/);
      expect(f.wrote()).toBe(false);
      expect(f.tip('cluster-01', 'kdelta/web')).toBe(human);
    });
  }

  if (forge === 'local') {
    it("update mode: a person's commit on a package's update branch in the control repository is carried forward too", async () => {
      const f = createFleet([]);
      try {
        const cacheDir = join(f.root, 'cache');
        const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv }).trim();
        sh(f.control, 'init', '--quiet', '--initial-branch=main');
        f.writeControl({ 'repositories.yaml': repository('catalog', f.upstream) });
        mkdirSync(join(f.control, 'apps'));
        await getPackage({
          repo: f.upstream,
          directory: '/base-ns',
          ref: 'base-ns/v1',
          destination: join(f.control, 'apps', 'ns'),
          cacheDir,
        });
        sh(f.control, 'add', '--all');
        sh(f.control, 'commit', '--quiet', '-m', 'packages');
        f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: bronze\n` }, 'base-ns/v1');
        const updates = () => run({ cwd: f.control, cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir }, mode: 'updates' });
        expect((await updates()).results[0]).toMatchObject({ variant: 'update-apps-ns', action: 'proposed' });

        // a reviewer commits on the update's branch: a clone, an edit, a push
        const work = join(f.root, 'review');
        sh(f.root, 'clone', '--quiet', '--branch', 'kdelta/update-apps-ns', f.control, work);
        const nsFile = join(work, 'apps', 'ns', 'namespace.yaml');
        writeFileSync(nsFile, LABELLED(readFileSync(nsFile, 'utf8')));
        sh(work, 'commit', '--quiet', '--all', '-m', 'label the namespace');
        sh(work, 'push', '--quiet', 'origin', 'kdelta/update-apps-ns');
        const human = sh(work, 'rev-parse', 'HEAD');
        rmSync(work, { recursive: true, force: true });

        const release = f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');
        expect((await updates()).results[0]).toMatchObject({ variant: 'update-apps-ns', action: 'updated' });
        expect(sh(f.control, 'rev-parse', 'kdelta/update-apps-ns^')).toBe(human);
        const namespace = sh(f.control, 'show', 'kdelta/update-apps-ns:apps/ns/namespace.yaml');
        expect(namespace).toContain('owner: human');
        expect(namespace).toContain('tier: gold');
        expect(sh(f.control, 'show', 'kdelta/update-apps-ns:apps/ns/Kptfile')).toContain(`commit: ${release}`);
        const record = readFileSync(join(f.control, '.kdelta', 'proposals', 'control', 'update-apps-ns.md'), 'utf8');
        expect(record).toContain(`- \`${human.slice(0, 12)}\` by Test: \`label the namespace\``);
      } finally {
        f.cleanup();
      }
    });
  }
});
