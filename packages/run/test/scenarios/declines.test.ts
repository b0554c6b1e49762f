import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { describeScenarios } from './harness.js';

/**
 * People can say no, on every forge: a proposal a person closed unmerged (on the local forge: its
 * branch deleted unmerged) is declined, and not proposed again until something new is proposed;
 * kdelta's own closes are not declines. How a decline is undone is the forge's: a record deleted,
 * a pull request reopened or labelled.
 */

const GOLD = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: gold\n';
const DECLINED_BEFORE = /A previous proposal, "kdelta: add web[^"]*" \(upstream `[^`]+`, commit `[0-9a-f]{12}`\), was declined/;

describeScenarios('people can say no', {}, ({ forge, fleet }) => {
  /** How the forge keeps a proposal closed unmerged by a person. */
  const declinedState = forge === 'local' ? 'declined' : 'closed';

  it('a proposal a person closed unmerged is declined, with no write, until a new upstream release, whose proposal names it', async () => {
    // no revision: the variant follows the upstream's latest release (base-ns/v1 for now)
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01', '', '""') });
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('open');
    await f.decline('cluster-01', 'kdelta/web');

    expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
    expect(f.proposals('cluster-01', 'kdelta/web').map((p) => p.state)).toEqual([declinedState]);
    // the local forge keeps no branch of a declined proposal
    if (forge === 'local') expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();
    // and again: the decline holds, and costs no write
    f.mark();
    expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
    expect(f.wrote()).toBe(false);
    expect(f.proposals('cluster-01', 'kdelta/web').map((p) => p.state)).toEqual([declinedState]);

    // a new upstream release proposes again (on GitHub in a new pull request), naming the declined one
    f.publish({ 'base-ns/namespace.yaml': GOLD }, 'base-ns/v2');
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
    expect(f.proposals('cluster-01', 'kdelta/web').map((p) => p.state)).toEqual(forge === 'local' ? ['open'] : ['closed', 'open']);
    expect(f.proposal('cluster-01', 'kdelta/web').body).toMatch(DECLINED_BEFORE);
    expect(f.tip('cluster-01', 'kdelta/web')).toBeDefined();
  });

  it("kdelta's own closes are not declines: a variant gone and back is proposed again", async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
    await f.run();
    // the variant is gone: kdelta closes its unmerged proposal; back again, it is proposed again
    f.writeControl({ 'web.yaml': null });
    expect((await f.run()).results[0]).toMatchObject({ action: 'closed' });
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('closed');
    if (forge === 'github') expect(f.proposal('cluster-01', 'kdelta/web').body).toContain('"closedBy":"closed"');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('open');
  });

  if (forge === 'local') {
    // what a decline is, once it is seen, is the run's, whatever the forge: on one forge
    it('a change of the variant proposes again, naming the declined proposal', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
      await f.run();
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: blue\n') });
      expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
      expect(f.proposal('cluster-01', 'kdelta/web').body).toContain('was declined');
    });

    it('deleting the record undoes a decline', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
      await f.run();
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      rmSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'));
      expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
    });

    it('a squash-merged proposal whose branch was deleted is merged, not declined', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
      await f.run();
      const work = join(f.control, '..', 'squash');
      execFileSync('git', ['clone', '--quiet', f.git('cluster-01', 'rev-parse', '--absolute-git-dir'), work]);
      const as = ['-c', 'user.name=r', '-c', 'user.email=r@example.com'];
      execFileSync('git', [...as, 'merge', '--quiet', '--squash', 'origin/kdelta/web'], { cwd: work });
      execFileSync('git', [...as, 'commit', '--quiet', '--no-edit'], { cwd: work });
      execFileSync('git', ['push', '--quiet', 'origin', 'main'], { cwd: work });
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'up-to-date' });
      expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('merged');
    });
  }

  if (forge === 'github') {
    it('a reopened pull request undoes a decline; so does the label kdelta:propose-again, in a new pull request', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
      await f.run();
      // declined, then reopened: kdelta keeps it
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      await f.reopen('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'unchanged' });

      // declined, then labelled to propose again: a new pull request
      await f.decline('cluster-01', 'kdelta/web');
      expect((await f.run()).results[0]).toMatchObject({ action: 'declined' });
      f.label('cluster-01', 'kdelta/web', 'kdelta:propose-again');
      expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
      expect(f.proposals('cluster-01', 'kdelta/web').map((p) => p.state)).toEqual(['closed', 'open']);
    });
  }
});
