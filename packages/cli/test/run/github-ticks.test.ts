import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { parseMetadataBlock, run, type RunOptions } from '@kdelta/run';
import { githubFleets } from './__fixtures__/github-fleet.js';

/**
 * Deciding a conflict with a tick on GitHub: a reviewer ticks the box in the pull request's body
 * (as GitHub's web page does: the body saved with `[x]`, CRLF line ends), and the next run reads
 * the body the API returns.
 */

const REVIEWER = 'ghs_reviewer';
const hub = githubFleets({
  fake: { tokens: { ghs_fake: { login: 'kdelta-bot', permissions: 'all' }, [REVIEWER]: { login: 'reviewer', permissions: 'all' } } },
  owner: 'tick',
});

const deployment = (replicas: number, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ${image}\n`;
const BOX = 'keep local `6` for `.spec.replicas` (apps/Deployment web)';

/** The line of a box kdelta wrote for `label`, as a pattern: the box's hidden id comes first. */
const boxLine = (label: string) =>
  new RegExp(`^- \\[ \\] <!-- kdelta-decide:[0-9a-f]{16} --> ${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm');

const opts = (f: Fleet): RunOptions => hub.runOptions(f);

const show = (slug: string, ref: string, path: string) =>
  execFileSync('git', ['show', `${ref}:${path}`], { cwd: hub.gh.gitDir(slug), encoding: 'utf8' });

/** The reviewer ticks a box on the pull request's page: GitHub saves the body with it ticked. */
async function tick(slug: string, number: number, box: string): Promise<void> {
  const body = hub.gh.pulls(slug).find((p) => p.number === number)!.body ?? '';
  expect(body).toMatch(boxLine(box));
  const ticked = body.replace(boxLine(box), (line) => line.replace('- [ ]', '- [x]')).replace(/\r?\n/g, '\r\n');
  await hub.patchPull(slug, number, { body: ticked }, REVIEWER);
}

describe('deciding a conflict with a tick (GitHub)', () => {
  it("a ticked box puts local's value, pinned, on the pull request's branch; merged, the next release keeps it without a conflict", async () => {
    const f = await hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01') } });
    const slug = f.slug('cluster-01');
    f.publish({ 'base-ns/deploy.yaml': deployment(3, 'nginx:1') }, 'base-ns/v1');
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed' });
    await hub.gh.mergePull(slug, hub.gh.pulls(slug)[0]!.number);
    await hub.gh.humanCommit(slug, 'main', {
      'web/deploy.yaml': show(slug, 'main', 'web/deploy.yaml').replace('replicas: 3', 'replicas: 6'),
    });
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:1') }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed', conflictCount: 1 });
    const pull = hub.gh.pulls(slug).find((p) => p.state === 'open')!;
    expect(show(slug, 'kdelta/web', 'web/deploy.yaml')).toContain('replicas: 4\n');

    // unticked: the rerun makes no write request
    hub.gh.clearRequests();
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(hub.gh.writes()).toBe(0);

    await tick(slug, pull.number, BOX);
    hub.gh.clearRequests();
    const decided = await run(opts(f));
    expect(decided.results[0]).toMatchObject({ action: 'updated', conflictCount: 0 });
    expect(show(slug, 'kdelta/web', 'web/deploy.yaml')).toContain('replicas: 6 # kdelta:local\n');
    const body = hub.gh.pulls(slug).find((p) => p.number === pull.number)!.body ?? '';
    expect(body).toContain('| upstream-changed | kept local (decided on this proposal) |');
    expect(body).not.toMatch(/^- \[[ xX]\]/m);
    expect(parseMetadataBlock(body)?.decided).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);

    // the tick was read once: the next run writes nothing
    hub.gh.clearRequests();
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(hub.gh.writes()).toBe(0);

    await hub.gh.mergePull(slug, pull.number);
    f.publish({ 'base-ns/deploy.yaml': deployment(8, 'nginx:2') }, 'base-ns/v3');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v3') });
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed', conflictCount: 0 });
    const v3 = show(slug, 'kdelta/web', 'web/deploy.yaml');
    expect(v3).toContain('replicas: 6 # kdelta:local\n');
    expect(v3).toContain('image: nginx:2');
  });

  it('a tick on a field that no longer conflicts is ignored and said so', async () => {
    const f = await hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01') } });
    const slug = f.slug('cluster-01');
    f.publish({ 'base-ns/deploy.yaml': deployment(3, 'nginx:1') }, 'base-ns/v1');
    await run(opts(f));
    await hub.gh.mergePull(slug, hub.gh.pulls(slug)[0]!.number);
    await hub.gh.humanCommit(slug, 'main', {
      'web/deploy.yaml': show(slug, 'main', 'web/deploy.yaml').replace('replicas: 3', 'replicas: 6'),
    });
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:1') }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    await run(opts(f));
    const pull = hub.gh.pulls(slug).find((p) => p.state === 'open')!;
    await tick(slug, pull.number, BOX);
    // upstream's v2 is re-released agreeing with the downstream: no conflict left to decide
    f.publish({ 'base-ns/deploy.yaml': deployment(6, 'nginx:1') }, 'base-ns/v2');
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({ conflictCount: 0 });
    expect(next.results[0]!.message).toContain(
      'tick "keep local `6` for `.spec.replicas` (apps/Deployment web)" ignored: the field no longer conflicts as ticked',
    );
    const body = hub.gh.pulls(slug).find((p) => p.number === pull.number)?.body ?? '';
    expect(body).toContain(
      '- keep local \\`6\\` for \\`.spec.replicas\\` (apps/Deployment web): ignored: the field no longer conflicts as ticked',
    );
    expect(show(slug, 'kdelta/web', 'web/deploy.yaml')).not.toContain('kdelta:local');
  });
});
