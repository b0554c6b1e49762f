import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import { cliFleets, mergeBranch, proposalRecord } from './__fixtures__/cli-fleet.js';

/**
 * A reviewer decides a conflict by ticking its box in the proposal record (the local forge): the
 * next run rebuilds the proposal with local's value pinned (`# kdelta:local`), the pin reaches the
 * downstream with the merge, and later upstream releases keep the value without a conflict.
 */

const { cacheDir, fleet } = cliFleets();

const deployment = (replicas: number, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas} # how many\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ${image}\n`;

const BOX = 'keep local `6` for `.spec.replicas` (apps/Deployment web)';

/** The line of a box kdelta wrote for `label`, as a pattern: the box's hidden id comes first. */
const boxLine = (label: string) =>
  new RegExp(`^- \\[ \\] <!-- kdelta-decide:[0-9a-f]{16} --> ${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm');

function opts(f: Fleet): RunOptions {
  return { cwd: f.control, cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir } };
}

const recordFile = (f: Fleet) => join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md');

/** A tick, as a person makes it in the record file. */
function tick(f: Fleet, box: string): void {
  const text = readFileSync(recordFile(f), 'utf8');
  expect(text).toMatch(boxLine(box));
  writeFileSync(
    recordFile(f),
    text.replace(boxLine(box), (line) => line.replace('- [ ]', '- [x]')),
  );
}

/**
 * Variant `web` on cluster-01, merged at v1 (3 replicas), scaled to 6 on the downstream, and
 * upstream's v2 scaling it to 4: the v2 proposal has one conflict, upstream's 4 in it.
 */
async function conflicted(): Promise<Fleet> {
  const f = fleet(['cluster-01']);
  f.publish({ 'base-ns/deploy.yaml': deployment(3, 'nginx:1') }, 'base-ns/v1');
  f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
  expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed' });
  mergeBranch(f, 'cluster-01', 'kdelta/web');
  f.commitAs('cluster-01', 'main', {
    'web/deploy.yaml': f.files('cluster-01', 'main', 'web')['deploy.yaml']!.replace('replicas: 3', 'replicas: 6'),
  });
  f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:1') }, 'base-ns/v2');
  f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
  const second = await run(opts(f));
  expect(second.results[0]).toMatchObject({ action: 'proposed', conflictCount: 1 });
  expect(f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']).toContain('replicas: 4 # how many');
  expect(proposalRecord(f, 'cluster-01', 'web')).toMatch(boxLine(BOX));
  return f;
}

describe('deciding a conflict with a tick (local forge)', () => {
  it("a ticked box puts local's value, pinned, on the branch; the merge carries the pin and the next release keeps it without a conflict", async () => {
    const f = await conflicted();
    // unticked: the rerun is a fast no-op, zero writes
    const refs = f.refs('cluster-01');
    const record = proposalRecord(f, 'cluster-01', 'web');
    const idle = await run(opts(f));
    expect(idle.results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(f.refs('cluster-01')).toBe(refs);
    expect(proposalRecord(f, 'cluster-01', 'web')).toBe(record);

    const proposed = f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']!;
    tick(f, BOX);
    const decided = await run(opts(f));
    expect(decided.results[0]).toMatchObject({ action: 'updated', writes: true, conflictCount: 0 });
    expect(decided.results[0]!.message).toContain('decided on the proposal: keep local `6` for `.spec.replicas` (apps/Deployment web)');
    const branch = f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']!;
    // only the decided field changed: local's value, pinned; the line's own comment kept after the pin
    expect(branch).toBe(proposed.replace('replicas: 4 # how many', 'replicas: 6 # kdelta:local how many'));
    const rebuilt = proposalRecord(f, 'cluster-01', 'web');
    expect(rebuilt).toContain(
      '| apps/Deployment web | `.spec.replicas` | `3` | `4` | `6` | upstream-changed | kept local (decided on this proposal) |',
    );
    expect(rebuilt).toContain(
      '- keep local `6` for `.spec.replicas` (apps/Deployment web): decided on this proposal (pinned with `# kdelta:local`)',
    );
    expect(rebuilt).not.toMatch(/^- \[[ x]\]/m);
    expect(rebuilt).toMatch(/^status:\n {2}state: success\n {2}description: no conflicts$/m);

    // the tick was read once: the next run has nothing to do
    const after = f.refs('cluster-01');
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(f.refs('cluster-01')).toBe(after);
    expect(proposalRecord(f, 'cluster-01', 'web')).toBe(rebuilt);

    // merged; upstream's v3 scales to 8 and moves the image: the pin keeps 6, no conflict
    mergeBranch(f, 'cluster-01', 'kdelta/web');
    f.publish({ 'base-ns/deploy.yaml': deployment(8, 'nginx:2') }, 'base-ns/v3');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v3') });
    const third = await run(opts(f));
    expect(third.results[0]).toMatchObject({ action: 'proposed', conflictCount: 0 });
    const v3 = f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']!;
    expect(v3).toContain('replicas: 6 # kdelta:local how many');
    expect(v3).toContain('image: nginx:2');
    expect(proposalRecord(f, 'cluster-01', 'web')).not.toContain('### Conflicts');
  });

  it('a decision stays on the open proposal when it is rebuilt for a new release before the merge', async () => {
    const f = await conflicted();
    tick(f, BOX);
    await run(opts(f));
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:2') }, 'base-ns/v2');
    const rebuilt = await run(opts(f));
    expect(rebuilt.results[0]).toMatchObject({ action: 'updated', conflictCount: 0 });
    const branch = f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']!;
    expect(branch).toContain('replicas: 6 # kdelta:local how many');
    expect(branch).toContain('image: nginx:2');
    expect(proposalRecord(f, 'cluster-01', 'web')).toContain('kept local (decided on this proposal)');
  });

  it('a body cut before its metadata block: the proposal is left as it is, its decision kept, and the run says so', async () => {
    const f = await conflicted();
    tick(f, BOX);
    await run(opts(f));
    const file = recordFile(f);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, text.indexOf('<!-- kdelta: {')));
    const refs = f.refs('cluster-01');
    // a new release: without the block, a rebuild would lose the decision
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:2') }, 'base-ns/v2');
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({ action: 'blocked', writes: false });
    expect(next.results[0]!.message).toMatch(/does not end with kdelta's metadata block .* left as it is, with its decisions/);
    expect(f.refs('cluster-01')).toBe(refs);
    expect(f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']).toContain('replicas: 6 # kdelta:local how many');
  });

  it('a tick on a field that no longer conflicts as ticked is ignored, and said so in the result and the proposal', async () => {
    const f = await conflicted();
    tick(f, BOX);
    // before the next run, the downstream moves the field again: 7 now conflicts, not 6
    f.commitAs('cluster-01', 'main', {
      'web/deploy.yaml': f.files('cluster-01', 'main', 'web')['deploy.yaml']!.replace('replicas: 6', 'replicas: 7'),
    });
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({ action: 'updated', conflictCount: 1 });
    expect(next.results[0]!.message).toContain(
      'tick "keep local `6` for `.spec.replicas` (apps/Deployment web)" ignored: the field no longer conflicts as ticked',
    );
    // nothing of the tick was applied: upstream's value, no pin
    expect(f.files('cluster-01', 'kdelta/web', 'web')['deploy.yaml']).toContain('replicas: 4 # how many');
    const record = proposalRecord(f, 'cluster-01', 'web');
    expect(record).toContain('#### Ticks not applied');
    expect(record).toContain(
      // the box's text comes back from the body, where a person may have edited it: shown escaped
      '- keep local \\`6\\` for \\`.spec.replicas\\` (apps/Deployment web): ignored: the field no longer conflicts as ticked',
    );
    expect(record).toMatch(boxLine('keep local `7` for `.spec.replicas` (apps/Deployment web)'));
    // said once: the next run is a no-op
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
  });
});
