import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { parseMetadataBlock } from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * A reviewer decides a conflict by ticking its box in the proposal's body (the record file on the
 * local forge; on GitHub the body saved by its page, CRLF line ends): the next run rebuilds the
 * proposal with local's value pinned (`# kdelta:local`), the pin reaches the downstream with the
 * merge, and later upstream releases keep the value without a conflict.
 */

const deployment = (replicas: number, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas} # how many\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ${image}\n`;

const BOX = 'keep local `6` for `.spec.replicas` (apps/Deployment web)';

/** The line of a box kdelta wrote for `label`, as a pattern: the box's hidden id comes first. */
const boxLine = (label: string) =>
  new RegExp(`^- \\[ \\] <!-- kdelta-decide:[0-9a-f]{16} --> ${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\r?$`, 'm');

const DEPLOY = 'web/deploy.yaml';

/** A person ticks a box kdelta wrote, on the forge's page. */
async function tick(f: ScenarioFleet, box: string): Promise<void> {
  expect(f.proposal('cluster-01', 'kdelta/web').body).toMatch(boxLine(box));
  await f.editBody('cluster-01', 'kdelta/web', (body) => body.replace(boxLine(box), (line) => line.replace('- [ ]', '- [x]')));
}

describeScenarios('deciding a conflict with a tick', {}, ({ forge, fleet }) => {
  /**
   * Variant `web` on cluster-01, merged at v1 (3 replicas), scaled to 6 on the downstream, and
   * upstream's v2 scaling it to 4: the v2 proposal has one conflict, upstream's 4 in it.
   */
  async function conflicted(): Promise<ScenarioFleet> {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
    f.publish({ 'base-ns/deploy.yaml': deployment(3, 'nginx:1') }, 'base-ns/v1');
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed' });
    await f.merge('cluster-01', 'kdelta/web');
    await f.commitAs('cluster-01', 'main', { [DEPLOY]: f.show('cluster-01', 'main', DEPLOY).replace('replicas: 3', 'replicas: 6') });
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:1') }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed', conflictCount: 1 });
    expect(f.show('cluster-01', 'kdelta/web', DEPLOY)).toContain('replicas: 4 # how many');
    expect(f.proposal('cluster-01', 'kdelta/web').body).toMatch(boxLine(BOX));
    return f;
  }

  it("a ticked box puts local's value, pinned, on the branch; the tick is read once; the merge carries the pin and the next release keeps it without a conflict", async () => {
    const f = await conflicted();
    // unticked: the rerun is a fast no-op, not one write
    f.mark();
    expect((await f.run()).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(f.wrote()).toBe(false);

    const proposed = f.show('cluster-01', 'kdelta/web', DEPLOY);
    await tick(f, BOX);
    const decided = await f.run();
    expect(decided.results[0]).toMatchObject({ action: 'updated', writes: true, conflictCount: 0 });
    expect(decided.results[0]!.message).toContain('decided on the proposal: keep local `6` for `.spec.replicas` (apps/Deployment web)');
    // only the decided field changed: local's value, pinned; the line's own comment kept after the pin
    expect(f.show('cluster-01', 'kdelta/web', DEPLOY)).toBe(
      proposed.replace('replicas: 4 # how many', 'replicas: 6 # kdelta:local how many'),
    );
    const rebuilt = f.proposal('cluster-01', 'kdelta/web');
    expect(rebuilt.body).toContain(
      '| apps/Deployment web | `.spec.replicas` | `3` | `4` | `6` | upstream-changed | kept local (decided on this proposal) |',
    );
    expect(rebuilt.body).toContain(
      '- keep local `6` for `.spec.replicas` (apps/Deployment web): decided on this proposal (pinned with `# kdelta:local`)',
    );
    expect(rebuilt.body).not.toMatch(/^- \[[ xX]\]/m);
    expect(parseMetadataBlock(rebuilt.body)?.decided).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(rebuilt.status).toEqual({ state: 'success', description: 'no conflicts' });

    // the tick was read once: the next run has nothing to do
    f.mark();
    expect((await f.run()).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(f.wrote()).toBe(false);
    expect(f.proposal('cluster-01', 'kdelta/web').body).toBe(rebuilt.body);

    // merged; upstream's v3 scales to 8 and moves the image: the pin keeps 6, no conflict
    await f.merge('cluster-01', 'kdelta/web');
    f.publish({ 'base-ns/deploy.yaml': deployment(8, 'nginx:2') }, 'base-ns/v3');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v3') });
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed', conflictCount: 0 });
    const v3 = f.show('cluster-01', 'kdelta/web', DEPLOY);
    expect(v3).toContain('replicas: 6 # kdelta:local how many');
    expect(v3).toContain('image: nginx:2');
    expect(f.proposal('cluster-01', 'kdelta/web').body).not.toContain('### Conflicts');
  });

  it('a decision stays on the open proposal when it is rebuilt for a new release before the merge; a body cut before its metadata block is then left as it is, its decision kept, and the run says so', async () => {
    const f = await conflicted();
    await tick(f, BOX);
    await f.run();
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:2') }, 'base-ns/v2');
    expect((await f.run()).results[0]).toMatchObject({ action: 'updated', conflictCount: 0 });
    const branch = f.show('cluster-01', 'kdelta/web', DEPLOY);
    expect(branch).toContain('replicas: 6 # kdelta:local how many');
    expect(branch).toContain('image: nginx:2');
    expect(f.proposal('cluster-01', 'kdelta/web').body).toContain('kept local (decided on this proposal)');

    await f.editBody('cluster-01', 'kdelta/web', (body) => body.slice(0, body.indexOf('<!-- kdelta: {')));
    // a new release: without the block, a rebuild would lose the decision
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:3') }, 'base-ns/v2');
    f.mark();
    const next = await f.run();
    expect(next.results[0]).toMatchObject({ action: 'blocked', writes: false });
    expect(next.results[0]!.message).toMatch(/does not end with kdelta's metadata block .* left as it is, with its decisions/);
    expect(f.wrote()).toBe(false);
    expect(f.show('cluster-01', 'kdelta/web', DEPLOY)).toBe(branch);
  });

  // how a ticked field stops conflicting as ticked before the next run: the way the tick is read
  // is each forge's (above), what the run makes of it is not, so each way runs on one forge
  const moves = [
    {
      what: 'the downstream moves the field again (7 now conflicts, not 6)',
      move: async (f: ScenarioFleet) =>
        void (await f.commitAs('cluster-01', 'main', {
          [DEPLOY]: f.show('cluster-01', 'main', DEPLOY).replace('replicas: 6', 'replicas: 7'),
        })),
      conflicts: 1,
      newBox: 'keep local `7` for `.spec.replicas` (apps/Deployment web)',
      on: 'local',
    },
    {
      what: "upstream's v2 is re-released agreeing with the downstream (no conflict left)",
      move: async (f: ScenarioFleet) => void f.publish({ 'base-ns/deploy.yaml': deployment(6, 'nginx:1') }, 'base-ns/v2'),
      conflicts: 0,
      newBox: undefined,
      on: 'github',
    },
  ];
  for (const { what, move, conflicts, newBox } of moves.filter((m) => m.on === forge)) {
    it(`a tick on a field that no longer conflicts as ticked is ignored, and said so in the result and the proposal, once: ${what}`, async () => {
      const f = await conflicted();
      await tick(f, BOX);
      await move(f);
      const next = await f.run();
      expect(next.results[0]).toMatchObject({ action: 'updated', conflictCount: conflicts });
      expect(next.results[0]!.message).toContain(
        'tick "keep local `6` for `.spec.replicas` (apps/Deployment web)" ignored: the field no longer conflicts as ticked',
      );
      // nothing of the tick was applied: no pin
      expect(f.show('cluster-01', 'kdelta/web', DEPLOY)).not.toContain('kdelta:local');
      if (conflicts) expect(f.show('cluster-01', 'kdelta/web', DEPLOY)).toContain('replicas: 4 # how many');
      const { body } = f.proposal('cluster-01', 'kdelta/web');
      expect(body).toContain('#### Ticks not applied');
      expect(body).toContain(
        // the box's text comes back from the body, where a person may have edited it: shown escaped
        '- keep local \\`6\\` for \\`.spec.replicas\\` (apps/Deployment web): ignored: the field no longer conflicts as ticked',
      );
      if (newBox) expect(body).toMatch(boxLine(newBox));
      // said once: the next run is a no-op
      expect((await f.run()).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    });
  }
});
