import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { type Materialize, packageUpdateMaterialize, parseMetadataBlock } from '../../src/index.js';
import { describeScenarios } from './harness.js';

/**
 * A proposal's life, on every forge: a move upstream or of the variant updates the same open
 * proposal; merged, the next run has nothing to do and fetches nothing; the content landing on
 * the base branch by other means closes it.
 */

const CONTEXT = (team: string) => `  packageContext:\n    data:\n      team: ${team}\n`;
const MOVED = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: moved\n';

/** The 3-way update, counting the packages it fetches. */
function counting(): { fetched: () => number; materialize: Materialize } {
  let n = 0;
  return {
    fetched: () => n,
    materialize: async (input) => {
      n++;
      return packageUpdateMaterialize(input);
    },
  };
}

describeScenarios("a proposal's life", {}, ({ forge, fleet }) => {
  it('a moved upstream tag updates the same open proposal; merged, the next run is a no-op that fetches and writes nothing; a tag moved after the merge is proposed from the locked commit', async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
    const first = await f.run();
    expect(first.results[0]).toMatchObject({ action: 'proposed', proposal: { state: 'open' } });
    const before = f.tip('cluster-01', 'kdelta/web');
    const moved = f.publish({ 'base-ns/namespace.yaml': MOVED }, 'base-ns/v1');
    const second = await f.run();
    expect(second.results[0]).toMatchObject({ action: 'updated', proposal: { id: first.results[0]!.proposal!.id, state: 'open' } });
    expect(f.proposals('cluster-01', 'kdelta/web')).toHaveLength(1);
    const head = f.tip('cluster-01', 'kdelta/web');
    expect(head).not.toBe(before);
    const metadata = parseMetadataBlock(f.proposal('cluster-01', 'kdelta/web').body);
    expect(metadata).toMatchObject({ headCommit: head, upstream: { commit: moved } });

    // merged by a person: the next run finds the content on the base branch
    await f.merge('cluster-01', 'kdelta/web');
    const merged = await f.run();
    expect(merged.results[0]).toMatchObject({ action: 'up-to-date' });
    // the local forge's result names the proposal it settled as merged; GitHub's names none
    if (forge === 'local') expect(merged.results[0]).toMatchObject({ proposal: { state: 'merged' } });
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('merged');
    // and again: nothing fetched, nothing written
    const count = counting();
    f.mark();
    const third = await f.run({ materialize: count.materialize });
    expect(third.results[0]).toMatchObject({ action: 'up-to-date', writes: false });
    expect(count.fetched()).toBe(0);
    expect(f.wrote()).toBe(false);

    // a moved tag is proposed on the next run, from the locked commit to the new one
    const locked = third.results[0]!.upstream!.commit;
    const again = f.publish({ 'base-ns/namespace.yaml': MOVED.replace('moved', 'again') }, 'base-ns/v1');
    const fourth = await f.run({ materialize: count.materialize });
    expect(fourth.results[0]).toMatchObject({
      action: 'proposed',
      upstream: { commit: again, oldCommit: locked },
      proposal: { state: 'open' },
    });
    expect(count.fetched()).toBe(1);
    expect(f.show('cluster-01', 'kdelta/web', 'web/namespace.yaml')).toContain('name: again');
    expect(f.proposal('cluster-01', 'kdelta/web').body).toContain(`\`${locked.slice(0, 12)}\` → \`${again.slice(0, 12)}\``);
  });

  it('a changed variant updates its branch and proposal; the downstream getting the content by other means closes it', async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01', CONTEXT('blue')) });
    await f.run();
    const before = f.tip('cluster-01', 'kdelta/web');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', CONTEXT('green')) });
    expect((await f.run()).results[0]).toMatchObject({ action: 'updated', proposal: { state: 'open' } });
    expect(f.tip('cluster-01', 'kdelta/web')).not.toBe(before);
    expect(f.show('cluster-01', 'kdelta/web', 'web/package-context.yaml')).toContain('team: green');
    // someone lands the same content on main by hand (not a merge of the branch)
    const files = Object.fromEntries(
      ['Kptfile', 'namespace.yaml', 'package-context.yaml'].map((name) => [
        `web/${name}`,
        f.show('cluster-01', 'kdelta/web', `web/${name}`),
      ]),
    );
    await f.commitAs('cluster-01', 'main', files);
    expect((await f.run()).results[0]).toMatchObject({ action: 'closed', proposal: { state: 'closed' } });
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('closed');
    if (forge === 'local') expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();
  });
});
