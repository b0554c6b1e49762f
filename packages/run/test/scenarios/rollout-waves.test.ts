import { join } from 'node:path';
import { expect, it } from 'vitest';
import { setDownstreamStatus } from '../../src/policy/local-status.js';
import type { RunReport } from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * Rollout waves, as a platform team ships a release: the canaries get it first, production once
 * the canaries merged it, it soaked and their health signal is green. A signal that fails halts the
 * rollout; a person advances or halts one by hand. On both forges: the local forge's signal is a
 * status a person sets (`kdelta status set`), GitHub's a commit status Flux posts.
 */

const HOUR = 3_600_000;
const DOWNSTREAMS = ['repo-a', 'repo-b', 'repo-c'];
const WAVES = {
  'repo-a': { 'kdelta.dev/wave': 'canary' },
  'repo-b': { 'kdelta.dev/wave': 'canary' },
  'repo-c': { 'kdelta.dev/wave': 'prod' },
};

/** A variant following base-ns's releases (no revision: the policy picks it). */
const variant = (name: string, downstream: string) =>
  `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n  downstream:\n    repo: ${downstream}\n    package: web\n`;

const policy = (rollout: string) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  rollout:\n    waves: [canary, prod]\n${rollout.replace(/^/gm, '    ')}\n`;

const CONTROL = (rollout: string) => ({
  'web-a.yaml': variant('web-a', 'repo-a'),
  'web-b.yaml': variant('web-b', 'repo-b'),
  'web-c.yaml': variant('web-c', 'repo-c'),
  'policy.yaml': policy(rollout),
});

const actions = (report: RunReport) => Object.fromEntries(report.results.map((r) => [r.variant, r.action]));
const held = (report: RunReport, variant: string) => report.results.find((r) => r.variant === variant);

/** A health signal on the head of a downstream's main branch, as its cluster's Flux (or a person, locally) posts it. */
async function signal(
  sf: ScenarioFleet,
  downstream: string,
  state: 'success' | 'failure' | 'pending',
  description?: string,
): Promise<void> {
  if (sf.github) {
    const { gh, slug } = sf.github;
    const sha = sf.tip(downstream, 'main')!;
    const res = await fetch(`${gh.apiUrl}/repos/${slug(downstream)}/statuses/${sha}`, {
      method: 'POST',
      headers: { authorization: 'token ghs_person', 'content-type': 'application/json', accept: 'application/vnd.github+json' },
      body: JSON.stringify({ state, context: 'flux-system', ...(description ? { description } : {}) }),
    });
    expect(res.status).toBe(201);
  } else {
    await setDownstreamStatus({
      cwd: sf.control,
      downstream,
      name: 'flux-system',
      state,
      description,
      proposalsDir: join('.kdelta', 'proposals'),
    });
  }
}

/** The canaries merged: the first run proposes them (prod held), a reviewer merges both. */
async function canariesMerged(sf: ScenarioFleet, now: Date): Promise<RunReport> {
  const first = await sf.run({ now: () => now });
  expect(actions(first)).toEqual({ 'web-a': 'proposed', 'web-b': 'proposed', 'web-c': 'deferred' });
  await sf.merge('repo-a', 'kdelta/web-a');
  await sf.merge('repo-b', 'kdelta/web-b');
  return first;
}

describeScenarios('rollout waves', {}, (setup) => {
  it('canary proposed first, prod held; merged and soaking: held until the soak ends; soaked and green: prod proposed', async () => {
    const sf = await setup.fleet(DOWNSTREAMS, CONTROL('soak: 2h\nhealth: {name: flux-system}'), { labels: WAVES, copy: true });
    const first = await canariesMerged(sf, new Date());
    expect(held(first, 'web-c')).toMatchObject({
      heldBy: 'rollout-wave',
      message:
        'rollout of base-ns v1 (policy platform): wave canary has 0 of 2 merged (waits on merge of web-a in repo-a, merge of web-b in repo-b)',
    });
    expect(sf.tip('repo-c', 'kdelta/web-c')).toBeUndefined();

    // merged a moment ago: the soak holds prod, and says until when
    const soaking = await sf.run({ now: () => new Date() });
    expect(actions(soaking)['web-c']).toBe('deferred');
    expect(held(soaking, 'web-c')?.message).toMatch(
      /^rollout of base-ns v1 \(policy platform\): wave canary merged; soak until (\S+) \(looked at again from \1\)$/,
    );

    // soaked, but no signal yet on repo-b: still held, waiting on it
    const later = new Date(Date.now() + 3 * HOUR);
    await signal(sf, 'repo-a', 'success');
    const waiting = await sf.run({ now: () => later });
    expect(held(waiting, 'web-c')?.message).toBe(
      'rollout of base-ns v1 (policy platform): wave canary merged (waits on status flux-system on repo-b (missing))',
    );

    // green on both canaries: prod proposed
    await signal(sf, 'repo-b', 'success');
    const green = await sf.run({ now: () => later });
    expect(actions(green)['web-c']).toBe('proposed');
    expect(sf.tip('repo-c', 'kdelta/web-c')).toBeDefined();
  });

  it('a failed signal on a canary halts the rollout, and the held job and the dashboard say which and why', async () => {
    const sf = await setup.fleet(DOWNSTREAMS, CONTROL('health: {name: flux-system}'), { labels: WAVES, copy: true, dashboard: true });
    await canariesMerged(sf, new Date());
    await signal(sf, 'repo-a', 'success');
    await signal(sf, 'repo-b', 'failure', 'kustomization apps failed');
    const halted = await sf.run();
    expect(held(halted, 'web-c')).toMatchObject({
      action: 'deferred',
      heldBy: 'rollout-wave',
      message: 'rollout of base-ns v1 (policy platform): halted: status flux-system failed on repo-b (canary): kustomization apps failed',
    });
    expect(sf.tip('repo-c', 'kdelta/web-c')).toBeUndefined();
    expect(sf.dashboard()).toContain('**halted**: `status flux-system failed on repo-b (canary): kustomization apps failed`');
  });

  it('advanced by hand on the dashboard: prod proposed while the canaries are still open; the advance lasts', async () => {
    const sf = await setup.fleet(DOWNSTREAMS, CONTROL(''), { labels: WAVES, copy: true, dashboard: true });
    const first = await sf.run();
    expect(actions(first)['web-c']).toBe('deferred');
    sf.editDashboard((body) => body.replace(/- \[ \] (<!-- kdelta-advance-rollout:[^ ]+ -->)/, '- [x] $1'));
    const advanced = await sf.run();
    expect(actions(advanced)['web-c']).toBe('proposed');
    expect(sf.dashboard()).toContain('advanced by hand to `prod`');
    // the box is read once, the advance is kept: a later run still lets prod's proposal be
    expect(sf.dashboard()).not.toContain('kdelta-advance-rollout');
    expect(actions(await sf.run())['web-c']).toBe('unchanged');
  });

  it('halted by hand: in the policy nothing of the revision is proposed; on the dashboard, until resumed', async () => {
    const sf = await setup.fleet(DOWNSTREAMS, CONTROL('halted: [{revision: v1, reason: paging alert}]'), {
      labels: WAVES,
      copy: true,
      dashboard: true,
    });
    const byPolicy = await sf.run();
    expect(actions(byPolicy)).toEqual({ 'web-a': 'deferred', 'web-b': 'deferred', 'web-c': 'deferred' });
    expect(held(byPolicy, 'web-a')?.message).toBe(
      'rollout of base-ns v1 (policy platform): halted: by hand (policy platform): paging alert',
    );

    // the policy lets it go; a person halts it on the dashboard instead
    sf.writeControl({ 'policy.yaml': policy('') });
    sf.editDashboard((body) => body.replace(/- \[ \] (<!-- kdelta-halt-rollout:[^ ]+ -->)/, '- [x] $1'));
    const byBox = await sf.run();
    expect(actions(byBox)).toEqual({ 'web-a': 'deferred', 'web-b': 'deferred', 'web-c': 'deferred' });
    expect(held(byBox, 'web-a')?.message).toBe('rollout of base-ns v1 (policy platform): halted: by hand on the dashboard');
    // kept by the next run too, with a box to resume it
    expect(actions(await sf.run())['web-a']).toBe('deferred');
    sf.editDashboard((body) => body.replace(/- \[ \] (<!-- kdelta-resume-rollout:[^ ]+ -->)/, '- [x] $1'));
    const resumed = await sf.run();
    expect(actions(resumed)).toEqual({ 'web-a': 'proposed', 'web-b': 'proposed', 'web-c': 'deferred' });
  });
});
