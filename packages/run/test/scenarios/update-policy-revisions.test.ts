import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { parseRecord } from '../../src/forges/local.js';
import { type ScenarioFleet, describeScenarios } from './harness.js';

/**
 * Which revision an update policy lets a variant be proposed, on every forge: the update types it
 * allows, the releases it ignores, a minimum release age, a major release as its own proposal,
 * auto-merge of what it trusts (never with conflicts), and a cluster team's file in its own
 * repository that may only narrow it.
 */

const NAMESPACE = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name} # the namespace\n`;
const SETTINGS = (level: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: ${level}\n`;

/** A variant following the releases of base-ns (no revision). */
function follower(name: string, downstream: string): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n`;
}

function policy(spec: string, name = 'platform'): string {
  return `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;
}

const TEAM_FILE = '.kdelta/downstream-policy.yaml';
function team(spec: string): string {
  return `apiVersion: kdelta.dev/v1alpha1\nkind: DownstreamPolicy\nmetadata:\n  name: team\nspec:\n${spec.replace(/^/gm, '  ')}\n`;
}

/**
 * A fleet whose upstream releases base-ns as semantic versions (`base-ns/v1.0.0`, its Porch
 * revision tag dropped), each variant's package at v1.0.0 merged on its downstream.
 */
async function releasedFleet(
  fleet: (downstreams: readonly string[], control?: Readonly<Record<string, string>>) => Promise<ScenarioFleet>,
  variants: Record<string, string>,
  spec: string,
): Promise<ScenarioFleet> {
  const downstreams = [...new Set(Object.values(variants))];
  const f = await fleet(downstreams, {
    'policy.yaml': policy(spec),
    ...Object.fromEntries(Object.entries(variants).map(([v, d]) => [`${v}.yaml`, follower(v, d)])),
  });
  execFileSync('git', ['tag', '-d', 'base-ns/v1'], { cwd: f.upstream, stdio: 'ignore' });
  f.publish({ 'base-ns/settings.yaml': SETTINGS('one') }, 'base-ns/v1.0.0');
  // whatever the policy's minimum age, v1.0.0 is old enough a month on
  const first = await f.run({ now: () => new Date(Date.now() + 30 * 86_400_000) });
  for (const r of first.results) expect(r, r.message).toMatchObject({ action: 'proposed' });
  for (const [v, d] of Object.entries(variants)) await f.merge(d, `kdelta/${v}`);
  return f;
}

/** The upstream ref a branch's package is locked to. */
function lockedRef(f: ScenarioFleet, downstream: string, branch: string, pkg: string): string | undefined {
  return /\n\s+ref: (\S+)/.exec(f.show(downstream, branch, `${pkg}/Kptfile`))?.[1];
}

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

describeScenarios('update policy: which revision is proposed', {}, ({ fleet }) => {
  it('patch allowed, minor not: the patch release is proposed, not the latest; a release it ignores is skipped', async () => {
    const f = await releasedFleet(fleet, { web: 'cluster-01' }, 'updateTypes: [patch]\nignore: ["v1.0.2"]');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('patched') }, 'base-ns/v1.0.1');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('patched-again') }, 'base-ns/v1.0.2');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('minor') }, 'base-ns/v1.1.0');
    const report = await f.run();
    expect(report.results).toMatchObject([{ variant: 'web', action: 'proposed' }]);
    expect(report.results[0]!.upstream).toMatchObject({ ref: 'base-ns/v1.0.1' });
    expect(report.results[0]!.upstream!.reason).toContain('release v1.0.1 of catalog/base-ns, a patch update, allowed by policy platform');
    expect(lockedRef(f, 'cluster-01', 'kdelta/web', 'web')).toBe('base-ns/v1.0.1');
    expect(f.show('cluster-01', 'kdelta/web', 'web/namespace.yaml')).toContain('patched #');
  });

  it('a minimum release age holds a fresh release and says from when; once old enough it is proposed', async () => {
    const f = await releasedFleet(fleet, { web: 'cluster-01' }, 'minimumReleaseAge: 3d');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('fresh') }, 'base-ns/v1.1.0');
    const held = await f.run();
    // nothing new: the job stays at what the base has, and says when the release may go
    expect(held.results).toMatchObject([{ variant: 'web', action: 'up-to-date', upstream: { ref: 'base-ns/v1.0.0' } }]);
    expect(held.results[0]!.upstream!.reason).toMatch(
      /^stays at base-ns\/v1\.0\.0 \(policy platform\): v1\.1\.0 is less than a minute old, policy platform asks 3d: proposed from 20\d\d-\d\d-\d\dT\d\d:\d\dZ$/,
    );
    expect(f.proposals('cluster-01', 'kdelta/web').map((p) => p.state)).toEqual(['merged']);
    const later = await f.run({ now: () => new Date(Date.now() + 4 * 86_400_000) });
    expect(later.results).toMatchObject([{ variant: 'web', action: 'proposed', upstream: { ref: 'base-ns/v1.1.0' } }]);
  });

  it('a major release is its own proposal on <variant>-major, while the minor is open on the variant’s branch', async () => {
    const f = await releasedFleet(fleet, { web: 'cluster-01' }, 'updateTypes: [patch, minor, major]');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('minor') }, 'base-ns/v1.1.0');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('major') }, 'base-ns/v2.0.0');
    const report = await f.run();
    expect(report.results.map((r) => [r.variant, r.downstream, r.action, r.upstream?.ref])).toEqual([
      ['web', 'cluster-01/web', 'proposed', 'base-ns/v1.1.0'],
      ['web', 'cluster-01/web (major)', 'proposed', 'base-ns/v2.0.0'],
    ]);
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('open');
    expect(f.proposal('cluster-01', 'kdelta/web-major').state).toBe('open');
    expect(lockedRef(f, 'cluster-01', 'kdelta/web-major', 'web')).toBe('base-ns/v2.0.0');
    // the next run keeps both (the major branch is no gone variant's), and writes nothing
    f.mark();
    const again = await f.run();
    expect(again.results.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    expect(f.wrote()).toBe(false);
  });

  it('auto-merge per policy: a patch is auto-merged, a minor is not, and never with conflicts', async () => {
    const f = await releasedFleet(
      fleet,
      { web: 'cluster-01', api: 'cluster-02' },
      'updateTypes: [patch, minor]\nautoMerge:\n  updateTypes: [patch]\n  upstreams: [catalog]',
    );
    // api's cluster edited a setting the patch changes too: it conflicts there
    await f.commitAs('cluster-02', 'main', { 'api/settings.yaml': SETTINGS('edited-by-the-team') });
    f.publish({ 'base-ns/settings.yaml': SETTINGS('two') }, 'base-ns/v1.0.1');
    const patch = await f.run();
    expect(patch.results.map((r) => [r.variant, r.action, r.upstream?.ref])).toEqual([
      ['api', 'proposed', 'base-ns/v1.0.1'],
      ['web', 'proposed', 'base-ns/v1.0.1'],
    ]);
    expect(patch.results.find((r) => r.variant === 'api')!.conflictCount).toBeGreaterThan(0);
    expect(autoMerged(f, 'cluster-01', 'kdelta/web')).toBe(true);
    expect(autoMerged(f, 'cluster-02', 'kdelta/api')).toBe(false);
    // a minor release: proposed for review, not auto-merged
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('minor') }, 'base-ns/v1.1.0');
    if (f.proposal('cluster-01', 'kdelta/web').state === 'open') await f.merge('cluster-01', 'kdelta/web');
    // the policy decides for the variants it governs, whatever the run's auto-merge setting
    const minor = await f.run(f.github ? { github: { autoMerge: 'squash' } } : {});
    expect(minor.results.find((r) => r.variant === 'web')).toMatchObject({ upstream: { ref: 'base-ns/v1.1.0' } });
    expect(autoMerged(f, 'cluster-01', 'kdelta/web')).toBe(false);
  });

  it('a variant pinned to a revision keeps it: the policy chooses no other', async () => {
    const f = await releasedFleet(fleet, { web: 'cluster-01' }, 'updateTypes: [patch, minor]');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('patched') }, 'base-ns/v1.0.1');
    f.writeControl({
      'web.yaml': follower('web', 'cluster-01').replace('    package: base-ns\n', '    package: base-ns\n    revision: v1.0.0\n'),
    });
    const report = await f.run();
    expect(report.results).toMatchObject([{ variant: 'web', action: 'up-to-date', upstream: { ref: 'base-ns/v1.0.0' } }]);
  });

  it("a team's file narrows only its own repository; one that widens fails its variants with downstream-policy-invalid", async () => {
    const f = await releasedFleet(fleet, { web: 'cluster-01', api: 'cluster-02', db: 'cluster-03' }, 'updateTypes: [patch, minor]');
    await f.commitAs('cluster-01', 'main', { [TEAM_FILE]: team('ignore: ["v1.0.1"]\nupdateTypes: [patch]') });
    await f.commitAs('cluster-03', 'main', { [TEAM_FILE]: team('updateTypes: [patch, major]') });
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('patched') }, 'base-ns/v1.0.1');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('minor') }, 'base-ns/v1.1.0');
    const dbBranch = f.tip('cluster-03', 'kdelta/db');
    const report = await f.run();
    const byVariant = Object.fromEntries(report.results.map((r) => [r.variant, r]));
    // cluster-01's team ignores v1.0.1 and takes patches only: nothing new for web
    expect(byVariant.web).toMatchObject({ action: 'up-to-date', upstream: { ref: 'base-ns/v1.0.0' } });
    expect(byVariant.web!.upstream!.reason).toContain('v1.0.1 is ignored by cluster-01:.kdelta/downstream-policy.yaml');
    // cluster-02 has no file: the fleet's policy, the minor
    expect(byVariant.api).toMatchObject({ action: 'proposed', upstream: { ref: 'base-ns/v1.1.0' } });
    // cluster-03's file asks for majors the fleet does not allow
    expect(byVariant.db).toMatchObject({ action: 'failed', code: 'downstream-policy-invalid' });
    expect(byVariant.db!.error).toBe(
      `cluster-03:.kdelta/downstream-policy.yaml: spec.updateTypes[1]: "major" widens the fleet's UpdatePolicy "platform", which allows patch, minor: a team's file may only narrow`,
    );
    // nothing proposed there: db's branch is where its first, merged proposal left it
    expect(f.tip('cluster-03', 'kdelta/db')).toBe(dbBranch);
  });
});
