import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { git, packageVariant } from '@kdelta/test-support';
import { previewOf, renderPreview } from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * The preview of a fleet whose update policy has rollout waves, on every forge: what each wave
 * would get, wave by wave in the policy's order; a variant no such policy governs is counted as
 * before, in no wave.
 */

const POLICY = `apiVersion: kdelta.dev/v1alpha1
kind: UpdatePolicy
metadata:
  name: platform
spec:
  selector:
    packageVariants: ["web-*"]
  rollout:
    waves: [canary, prod]
`;

/** Puts downstreams in waves: the `kdelta.dev/wave` label on their Repository (an unlabelled one is in the last wave). */
function labelWaves(f: ScenarioFleet, waves: Readonly<Record<string, string>>): void {
  const file = join(f.control, '.kdelta', 'repositories.yaml');
  let text = readFileSync(file, 'utf8');
  for (const [name, wave] of Object.entries(waves))
    text = text.replace(
      `  name: ${name}\n  namespace: default\n`,
      `  name: ${name}\n  namespace: default\n  labels:\n    kdelta.dev/wave: ${wave}\n`,
    );
  f.writeControl({ 'repositories.yaml': text });
}

describeScenarios('the preview per rollout wave', {}, ({ fleet }) => {
  it('groups the variants of rollout waves by wave, in Markdown and text; an ungoverned variant is in none', async () => {
    const f = await fleet(['cluster-01', 'cluster-02', 'cluster-03'], {
      'web-1.yaml': packageVariant('web-1', 'cluster-01', '', '""'),
      'web-2.yaml': packageVariant('web-2', 'cluster-02', '', '""'),
      'api.yaml': packageVariant('api', 'cluster-03', '', '""'),
      'policy.yaml': POLICY,
    });
    labelWaves(f, { 'cluster-01': 'canary' });

    const report = await f.run({ dryRun: true });
    expect(report.results.map((r) => [r.variant, r.wave?.name ?? '-'])).toEqual([
      ['api', '-'],
      ['web-1', 'canary'],
      ['web-2', 'prod'],
    ]);
    const preview = previewOf(report, { config: '.kdelta' });
    expect(preview.waves?.map((w) => [w.name, w.summary.total])).toEqual([
      ['canary', 1],
      ['prod', 1],
    ]);
    const md = renderPreview(preview);
    // prod waits for the canaries: its variant is left alone, and says why
    expect(md).toContain('By rollout wave:\n\n- wave `canary`: 1 variant change (1 new)\n- wave `prod`: 1 left alone\n');
    expect(md).toMatch(/<b>web-2<\/b> → cluster-02\/web-2 \(wave prod\): left-alone, rollout of .*: wave canary has 0 of 1 merged/);
    expect(md).toContain('<b>web-1</b> → cluster-01/web-1 (wave canary): created');
    expect(md).toMatch(/<b>api<\/b> → cluster-03\/api: created/);
    const text = renderPreview(preview, { format: 'text' });
    expect(text).toMatch(/^By rollout wave: wave canary: 1 variant change \(1 new\); wave prod: 1 left alone$/m);
    expect(text).toMatch(/^web-1 +cluster-01\/web-1 +canary +created/m);
    expect(text).toMatch(/^api +cluster-03\/api +- +created/m);
    // nothing was written
    expect(f.tip('cluster-01', 'kdelta/web-1')).toBeUndefined();
  });

  it('a preview of an upstream ref shows what it would do to every wave, the waiting ones too', async () => {
    const f = await fleet(['cluster-01', 'cluster-02'], {
      'web-1.yaml': packageVariant('web-1', 'cluster-01', '', '""'),
      'web-2.yaml': packageVariant('web-2', 'cluster-02', '', '""'),
      'policy.yaml': POLICY,
    });
    labelWaves(f, { 'cluster-01': 'canary' });
    // the change under review: a branch of the upstream, not released
    git(f.upstream, 'checkout', '--quiet', '-b', 'next');
    f.publish({ 'base-ns/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: next\n' });
    const report = await f.run({ dryRun: true, upstreamRef: { ref: 'next' } });
    // the wave gate decides when a proposal is made, not what it holds: prod is shown its change
    expect(report.results.map((r) => [r.variant, r.wave?.name ?? '-', r.action, r.heldBy])).toEqual([
      ['web-1', 'canary', 'proposed', undefined],
      ['web-2', 'prod', 'proposed', undefined],
    ]);
    const text = renderPreview(previewOf(report, { config: '.kdelta' }), { format: 'text' });
    expect(text).toMatch(/^By rollout wave: wave canary: 1 variant change \(1 new\); wave prod: 1 variant change \(1 new\)$/m);
  });
});
