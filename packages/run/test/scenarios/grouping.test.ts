import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { parseRecord } from '../../src/forges/local.js';
import { packageVariant } from '@kdelta/test-support';
import { parseMetadataBlock } from '../../src/index.js';
import { PASS, type Gate } from '../../src/gates/gate.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * Grouping, on every forge: an UpdatePolicy with `group: repository` proposes the packages of its
 * variants in one downstream repository together, on branch `kdelta/group-<policy>` with one
 * proposal; each variant still ends as its own result naming that proposal.
 */

const policy = (variants: readonly string[]) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  selector:\n    packageVariants: [${variants.join(', ')}]\n  group: repository\n`;

const GROUP = 'kdelta/group-platform';

const deployment = (replicas: number) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1\n`;

/** Variants web and api on cluster-01 and db on cluster-02, all three governed by the grouping policy. */
const CONTROL = {
  'web.yaml': packageVariant('web', 'cluster-01'),
  'api.yaml': packageVariant('api', 'cluster-01'),
  'db.yaml': packageVariant('db', 'cluster-02'),
  'policy.yaml': policy(['web', 'api', 'db']),
};

/** Whether a file is on a branch of a downstream. */
function has(f: ScenarioFleet, downstream: string, branch: string, path: string): boolean {
  return f.git(downstream, 'ls-tree', '--name-only', `refs/heads/${branch}`, path).trim() === path;
}

describeScenarios('grouping the packages of one repository', {}, ({ forge, fleet }) => {
  it('two packages of one repository are one proposal, a second repository gets its own; a second run writes nothing', async () => {
    const f = await fleet(['cluster-01', 'cluster-02'], CONTROL);
    const first = await f.run();
    expect(first.failed).toBe(0);
    const by = new Map(first.results.map((r) => [r.variant, r]));
    for (const v of ['web', 'api', 'db'])
      expect(by.get(v), v).toMatchObject({ action: 'proposed', proposal: { head: GROUP, state: 'open' } });
    // one proposal for web and api, named in each one's result
    expect(by.get('web')!.proposal!.url).toBe(by.get('api')!.proposal!.url);
    expect(by.get('db')!.proposal!.url).not.toBe(by.get('web')!.proposal!.url);
    expect(f.proposals('cluster-01', GROUP)).toHaveLength(1);
    const { body } = f.proposal('cluster-01', GROUP);
    expect(body).toMatch(/^## kdelta: group-platform: update api, web to \S+/);
    expect(body).toContain('### Package `api` (variant `api`)');
    expect(body).toContain('### Package `web` (variant `web`)');
    expect(parseMetadataBlock(body)).toMatchObject({
      kind: 'group',
      variant: 'group-platform',
      group: { members: ['api', 'web'], left: [] },
    });
    for (const pkg of ['web', 'api']) expect(has(f, 'cluster-01', GROUP, `${pkg}/Kptfile`), pkg).toBe(true);
    expect(has(f, 'cluster-02', GROUP, 'db/Kptfile')).toBe(true);
    // no proposal of its own for a grouped variant
    expect(f.tip('cluster-01', 'kdelta/web')).toBeUndefined();

    f.mark();
    const again = await f.run();
    expect(again.results.map((r) => [r.variant, r.action, r.writes])).toEqual([
      ['api', 'unchanged', false],
      ['db', 'unchanged', false],
      ['web', 'unchanged', false],
    ]);
    expect(f.wrote()).toBe(false);
  });

  it("a member removed from the fleet leaves the group's proposal, updated without it", async () => {
    const f = await fleet(['cluster-01', 'cluster-02'], CONTROL);
    await f.run();
    f.writeControl({ 'api.yaml': null });
    const next = await f.run();
    expect(next.failed).toBe(0);
    expect(next.results.find((r) => r.variant === 'web')).toMatchObject({ action: 'updated', proposal: { head: GROUP } });
    // the gone variant had nothing on the base branch: nothing to remove, no proposal of its own to close
    expect(next.results.some((r) => r.variant === 'api')).toBe(false);
    expect(f.proposals('cluster-01', GROUP)).toHaveLength(1);
    const { body } = f.proposal('cluster-01', GROUP);
    expect(body).toMatch(/^## kdelta: group-platform: update web to /);
    expect(body).not.toContain('variant `api`');
    expect(has(f, 'cluster-01', GROUP, 'web/Kptfile')).toBe(true);
    expect(has(f, 'cluster-01', GROUP, 'api/Kptfile')).toBe(false);
  });

  it("a conflict in one member makes the whole group's proposal not ready, and never auto-merged", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    f.publish({ 'base-ns/deploy.yaml': deployment(3) }, 'base-ns/v1');
    expect((await f.run()).failed).toBe(0);
    await f.merge('cluster-01', GROUP);
    // web's team scales its copy; upstream's v2 scales it too: web's update conflicts, api's does not
    await f.commitAs('cluster-01', 'main', {
      'web/deploy.yaml': f.show('cluster-01', 'main', 'web/deploy.yaml').replace('replicas: 3', 'replicas: 6'),
    });
    f.publish({ 'base-ns/deploy.yaml': deployment(4) }, 'base-ns/v2');
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01', '', 'v2'),
      'api.yaml': packageVariant('api', 'cluster-01', '', 'v2'),
    });
    if (f.github) f.github.gh.requireStatusChecks(f.github.slug('cluster-01'), 'main', ['kdelta']);
    const run = await f.run({ github: { autoMerge: 'squash' } });
    expect(run.failed).toBe(0);
    const web = run.results.find((r) => r.variant === 'web')!;
    const api = run.results.find((r) => r.variant === 'api')!;
    expect(web).toMatchObject({ action: 'proposed', conflictCount: 1, proposal: { head: GROUP } });
    expect(web.conflicts.map((c) => c.file)).toEqual(['web/deploy.yaml']);
    // api's own package has none, but its proposal has web's conflict
    expect(api).toMatchObject({ action: 'proposed', conflictCount: 1, conflicts: [], proposal: { url: web.proposal!.url } });
    const seen = f.proposal('cluster-01', GROUP);
    expect(seen.status?.state).not.toBe('success');
    expect(seen.body).toContain('### Conflicts (1)');
    if (f.github) {
      expect(seen.draft).toBe(true);
      const pulls = f.github.gh.pulls(f.github.slug('cluster-01')).filter((p) => p.state === 'open');
      expect(pulls).toHaveLength(1);
      expect(pulls[0]).toMatchObject({ auto_merge: null });
    }
  });

  it("when grouping starts, the members' own open proposals are closed as superseded", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
    });
    const single = await f.run();
    expect(single.results.map((r) => r.proposal?.head)).toEqual(['kdelta/api', 'kdelta/web']);
    f.writeControl({ 'policy.yaml': policy(['web', 'api']) });
    const grouped = await f.run();
    expect(grouped.failed).toBe(0);
    for (const v of ['web', 'api']) {
      const result = grouped.results.find((r) => r.variant === v)!;
      expect(result).toMatchObject({ action: 'proposed', proposal: { head: GROUP } });
      const group = result.proposal!;
      expect(result.message).toContain(`was closed: superseded by the group's proposal ${group.url}`);
      const own = f.proposal('cluster-01', `kdelta/${v}`);
      expect(own.state).toBe('closed');
      expect(own.body).toContain(
        `> **Superseded**: this package is now proposed together with the other packages of its update policy in ${group.url}`,
      );
    }
    // a second run: nothing more to close, nothing written
    f.mark();
    expect((await f.run()).results.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    expect(f.wrote()).toBe(false);
  });

  it("a variant that leaves the group gets its own proposal, and the group's is updated without it", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    await f.run();
    f.writeControl({ 'policy.yaml': policy(['web']) });
    const next = await f.run();
    expect(next.failed).toBe(0);
    expect(next.results.find((r) => r.variant === 'api')).toMatchObject({ action: 'proposed', proposal: { head: 'kdelta/api' } });
    expect(next.results.find((r) => r.variant === 'web')).toMatchObject({ action: 'updated', proposal: { head: GROUP } });
    expect(has(f, 'cluster-01', GROUP, 'api/Kptfile')).toBe(false);
    expect(has(f, 'cluster-01', 'kdelta/api', 'api/Kptfile')).toBe(true);
  });

  it("when the policy no longer groups, each package gets its own proposal and the group's is closed", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    await f.run();
    f.writeControl({ 'policy.yaml': null });
    const next = await f.run();
    expect(next.failed).toBe(0);
    expect(next.results.map((r) => [r.variant, r.action, r.proposal?.head])).toEqual([
      ['api', 'proposed', 'kdelta/api'],
      ['group-platform', 'closed', GROUP],
      ['web', 'proposed', 'kdelta/web'],
    ]);
    expect(f.proposal('cluster-01', GROUP).state).toBe('closed');
    expect(f.tip('cluster-01', GROUP)).toBeUndefined();
    f.mark();
    expect((await f.run()).results.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    expect(f.wrote()).toBe(false);
  });

  it("a member that cannot be built fails alone: left out of the group's proposal, which says why", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      // api's directory on the downstream is no kpt package: api cannot be built there
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    await f.commitAs('cluster-01', 'main', { 'api/README.md': 'not a package\n' });
    const first = await f.run();
    const by = new Map(first.results.map((r) => [r.variant, r]));
    expect(by.get('web')).toMatchObject({ action: 'proposed', proposal: { head: GROUP } });
    expect(by.get('api')).toMatchObject({ action: 'failed', code: 'not-a-package' });
    const { body } = f.proposal('cluster-01', GROUP);
    expect(body).toMatch(/^## kdelta: group-platform: update web to /);
    expect(body).toContain('### Left out of this proposal');
    expect(body).toMatch(/- variant `api`: failed \(`not-a-package`\): api exists in .* and is not a kpt package/);
    expect(has(f, 'cluster-01', GROUP, 'api/Kptfile')).toBe(false);
    // nothing new: the same results, from what the proposal recorded, and nothing written
    f.mark();
    const again = await f.run();
    expect(again.results.map((r) => [r.variant, r.action, r.code])).toEqual([
      ['api', 'failed', 'not-a-package'],
      ['web', 'unchanged', undefined],
    ]);
    expect(f.wrote()).toBe(false);
  });

  it("a gate asks each member: one it holds waits, the others are proposed in the group's proposal", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    const asked: string[] = [];
    const gate: Gate = {
      name: 'freeze',
      decide(job) {
        asked.push(`${job.kind} ${job.variant}`);
        return job.variant === 'api' ? { pass: false, reason: 'api is frozen' } : PASS;
      },
    };
    const held = await f.run({ gates: [gate] });
    expect(asked.sort()).toEqual(['variant api', 'variant web']);
    expect(held.results.map((r) => [r.variant, r.action, r.heldBy, r.proposal?.head])).toEqual([
      ['api', 'deferred', 'freeze', undefined],
      ['web', 'proposed', undefined, GROUP],
    ]);
    expect(has(f, 'cluster-01', GROUP, 'api/Kptfile')).toBe(false);
    // the hold lifted: the group's proposal takes api too
    const lifted = await f.run();
    expect(lifted.results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'updated'],
      ['web', 'updated'],
    ]);
    expect(has(f, 'cluster-01', GROUP, 'api/Kptfile')).toBe(true);
  });

  // a retry box names a member of a group, which runs in the group's job: shown on one forge
  if (forge === 'local') {
    it("the dashboard's retry box of a failed member is acted on by the group's job, and cleared", async () => {
      const f = await fleet(
        ['cluster-01'],
        {
          'web.yaml': packageVariant('web', 'cluster-01'),
          'api.yaml': packageVariant('api', 'cluster-01'),
          'policy.yaml': policy(['web', 'api']),
        },
        { dashboard: true },
      );
      await f.commitAs('cluster-01', 'main', { 'api/README.md': 'not a package\n' });
      expect((await f.run()).results.map((r) => [r.variant, r.action])).toEqual([
        ['api', 'failed'],
        ['web', 'proposed'],
      ]);
      await f.commitAs('cluster-01', 'main', { 'api/README.md': null });
      const before = f.dashboard() ?? '';
      expect(before).toContain('- [ ] <!-- kdelta-retry:api%20cluster-01%2Fapi -->');
      f.editDashboard((body) => body.replace('- [ ] <!-- kdelta-retry:', '- [x] <!-- kdelta-retry:'));
      const retried = await f.run();
      expect(retried.results.map((r) => [r.variant, r.action])).toEqual([
        ['api', 'updated'],
        ['web', 'updated'],
      ]);
      expect(retried.dashboard).toMatchObject({ outcome: 'updated', ticks: { retry: ['api cluster-01/api'] } });
      expect(f.dashboard()).not.toContain('- [x]');
    });
  }

  it("what a body says of members left out is read only in kdelta's own shape: an edited record is ignored", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    await f.run();
    // someone who may edit the proposal's text says web was left out, in words of their own
    await f.editBody('cluster-01', GROUP, (body) =>
      body.replace('"left":[]', '"left":[{"variant":"web","action":"exploded","code":"<b>boom</b>","message":"' + 'x'.repeat(5000) + '"}]'),
    );
    const next = await f.run();
    expect(next.results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'unchanged'],
      ['web', 'unchanged'],
    ]);
  });

  it("a person's commit on the group's branch is never carried: the proposal is left alone, for every package in it", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    await f.run();
    const human = await f.commitAs('cluster-01', GROUP, { 'web/notes.md': 'mine\n' });
    // the variant changes: a proposal of web alone would carry the commit forward; the group's does not
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: green\n') });
    const next = await f.run();
    for (const r of next.results) {
      expect(r, r.variant).toMatchObject({ action: 'blocked', proposal: { head: GROUP } });
      expect(r.message).toMatch(/commit\(s\) kdelta did not make/);
    }
    expect(f.tip('cluster-01', GROUP)).toBe(human);
  });

  it("when no member has a revision it may propose now, the group's proposal is left as it is", async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    await f.run();
    const tip = f.tip('cluster-01', GROUP);
    // a revision upstream does not have (yet): the policy waits for it
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01', '', 'v9'),
      'api.yaml': packageVariant('api', 'cluster-01', '', 'v9'),
    });
    f.mark();
    const next = await f.run();
    expect(next.results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'deferred'],
      ['web', 'deferred'],
    ]);
    expect(f.proposal('cluster-01', GROUP).state).toBe('open');
    expect(f.tip('cluster-01', GROUP)).toBe(tip);
    expect(f.wrote()).toBe(false);
  });

  it('a person\'s "no" to the group\'s proposal holds for every package in it, until an input moves', async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01'),
      'policy.yaml': policy(['web', 'api']),
    });
    const first = await f.run();
    await f.decline('cluster-01', GROUP);
    const declined = await f.run();
    expect(declined.results.map((r) => [r.variant, r.action, r.proposal?.url])).toEqual([
      ['api', 'declined', first.results[0]!.proposal!.url],
      ['web', 'declined', first.results[0]!.proposal!.url],
    ]);
    f.mark();
    expect((await f.run()).results.map((r) => r.action)).toEqual(['declined', 'declined']);
    expect(f.wrote()).toBe(false);
    // web's variant changes: the group's inputs moved, a new proposal
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: green\n') });
    expect((await f.run()).results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'proposed'],
      ['web', 'proposed'],
    ]);
  });

  it("auto-merge per policy: a group whose every package may merge by itself does; one package's conflict holds the whole group for review", async () => {
    const follower = (name: string, downstream: string) =>
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n`;
    const settings = (level: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: ${level}\n`;
    const f = await fleet(['cluster-01', 'cluster-02'], {
      'web.yaml': follower('web', 'cluster-01'),
      'api.yaml': follower('api', 'cluster-01'),
      'db.yaml': follower('db', 'cluster-02'),
      'policy.yaml': `${policy(['web', 'api', 'db'])}  autoMerge:\n    updateTypes: [patch]\n`,
    });
    // releases as semantic versions only
    execFileSync('git', ['tag', '-d', 'base-ns/v1'], { cwd: f.upstream, stdio: 'ignore' });
    f.publish({ 'base-ns/settings.yaml': settings('one') }, 'base-ns/v1.0.0');
    const first = await f.run();
    for (const r of first.results) expect(r, r.message).toMatchObject({ action: 'proposed', proposal: { head: GROUP } });
    for (const d of ['cluster-01', 'cluster-02']) if (f.proposal(d, GROUP).state === 'open') await f.merge(d, GROUP);
    // api's team edited a setting the patch changes too: its package conflicts, web's and db's do not
    await f.commitAs('cluster-01', 'main', { 'api/settings.yaml': settings('edited-by-the-team') });
    f.publish({ 'base-ns/settings.yaml': settings('two') }, 'base-ns/v1.0.1');
    const patch = await f.run();
    expect(patch.results.map((r) => [r.variant, r.action, r.upstream?.ref])).toEqual([
      ['api', 'proposed', 'base-ns/v1.0.1'],
      ['db', 'proposed', 'base-ns/v1.0.1'],
      ['web', 'proposed', 'base-ns/v1.0.1'],
    ]);
    expect(autoMerged(f, 'cluster-02', GROUP)).toBe(true);
    expect(autoMerged(f, 'cluster-01', GROUP)).toBe(false);
    expect(f.proposal('cluster-01', GROUP).status?.state).not.toBe('success');
  });
});

/** Whether the newest proposal of `head` has auto-merge on (GitHub: on, or merged by it at once; local: its record says so). */
function autoMerged(f: ScenarioFleet, downstream: string, head: string): boolean {
  if (f.github) {
    const pull = f.github.gh
      .pulls(f.github.slug(downstream))
      .filter((p) => p.head.ref === head)
      .at(-1)!;
    return pull.auto_merge !== null || pull.merged === true;
  }
  const file = f.proposal(downstream, head).url;
  return parseRecord(readFileSync(file, 'utf8'), file).header.autoMerge === true;
}
