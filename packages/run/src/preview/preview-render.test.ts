import { describe, expect, it } from 'vitest';
import type { Conflict } from '@kdelta/merge-core';
import type { RunReport, VariantResult } from '../report/result.js';
import { previewOf } from './preview.js';
import { renderPreview } from './preview-render.js';

const conflict = (path: string, local: string): Conflict => ({
  resource: 'apps/Deployment default/web',
  file: 'deployment.yaml',
  path,
  values: { origin: '3', upstream: '4', local },
  rule: 'upstream-changed',
  winner: 'upstream',
  message: 'both changed',
});

function result(variant: string, extra: Partial<VariantResult>): VariantResult {
  return {
    variant,
    downstream: `cluster-${variant}/${variant}`,
    action: 'updated',
    writes: true,
    dryRun: true,
    conflicts: [],
    conflictCount: 0,
    changes: [{ status: 'modified', path: `${variant}/deployment.yaml` }],
    ...extra,
  } as VariantResult;
}

/** 240 downstreams: 17 with conflicts, 3 failing renders, 2 new, 1 removal, the rest unchanged. */
function fleetReport(): RunReport {
  const results: VariantResult[] = [];
  for (let i = 0; i < 240; i++) {
    const v = `v${String(i).padStart(3, '0')}`;
    if (i < 15) results.push(result(v, { conflicts: [conflict('.spec.replicas', '5'), conflict('.spec.replicas', '6')] }));
    else if (i < 17) results.push(result(v, { conflicts: [conflict('.data.LOG_LEVEL', 'debug')] }));
    else if (i < 20)
      results.push(
        result(v, {
          renderFailure: {
            function: 'set-namespace',
            kptfile: `${v}/Kptfile`,
            message: 'function failed',
            results: ['namespace "x" is not allowed'],
          },
        }),
      );
    else if (i < 22) results.push(result(v, { action: 'proposed', changes: [{ status: 'added', path: `${v}/Kptfile` }] }));
    else if (i < 23) results.push(result(v, { action: 'removal-proposed', changes: [{ status: 'deleted', path: `${v}/Kptfile` }] }));
    else results.push(result(v, { action: 'up-to-date', writes: false, changes: [] }));
  }
  return { version: '1.2.3', dryRun: true, mode: 'variants', results, warnings: [], failed: 0 };
}

describe('renderPreview', () => {
  it('aggregates first, then one collapsed section per affected variant', () => {
    const report = previewOf(fleetReport(), { config: '.kdelta' });
    const md = renderPreview(report);
    const lines = md.split('\n');
    expect(lines[0]).toBe('## kdelta preview: the control resources in `.kdelta` as they are in the work tree');
    expect(lines[2]).toBe(
      '**conflicts in 17 of 240 downstreams; the most common fields: `.spec.replicas` (15), `.data.LOG_LEVEL` (2); render fails in 3 (function `set-namespace`: namespace "x" is not allowed); 2 new variants; 1 removal; 20 changed; 217 unchanged.**',
    );
    expect(md.match(/<details><summary><b>/g)).toHaveLength(23);
    // the conflicts first: the most to review
    expect(md.indexOf('<b>v000</b>')).toBeLessThan(md.indexOf('<b>v020</b>'));
    expect(md).toContain('| apps/Deployment default/web | `.spec.replicas` | `3` | `4` | `5` | upstream-changed | upstream |');
    expect(md).toContain('<details><summary>217 variants unchanged</summary>');
  });

  it('stays within the limit, saying how many sections it left out', () => {
    const report = previewOf(fleetReport(), { config: '.kdelta' });
    const md = renderPreview(report, { limit: 4000 });
    expect(md.length).toBeLessThanOrEqual(4000);
    const shown = md.match(/<details><summary><b>/g)?.length ?? 0;
    expect(shown).toBeGreaterThan(0);
    expect(md).toContain(`…and ${23 - shown} more variants: \`kdelta preview --json\``);
    expect(md.split('\n')[2]).toContain('conflicts in 17 of 240 downstreams');
  });

  it('as a table, and as JSON', () => {
    const report = previewOf(fleetReport(), { config: '.kdelta' });
    const text = renderPreview(report, { format: 'text' });
    expect(text.split('\n')[1]).toMatch(/^conflicts in 17 of 240 downstreams; the most common fields: \.spec\.replicas \(15\)/);
    expect(text).toMatch(/^VARIANT +DOWNSTREAM +IMPACT +FILES +CONFLICTS +RENDER$/m);
    expect(text).toMatch(/^v019 +cluster-v019\/v019 +changed +1 +0 +failed: function set-namespace \(v019\/Kptfile\)$/m);
    expect(text).toContain(
      '  v000  apps/Deployment default/web .spec.replicas: origin 3, upstream 4, local 5 (upstream-changed, upstream kept)',
    );
    expect(JSON.parse(renderPreview(report, { format: 'json' }))).toEqual(JSON.parse(JSON.stringify(report)));
  });
});

describe('the preview per rollout wave', () => {
  const canary = { name: 'canary', index: 0 };
  const prod = { name: 'prod', index: 2 };
  /** Two canaries (one new, one conflicting), three prod variants (one left alone, one unchanged), one ungoverned. */
  function waveReport(): RunReport {
    const results: VariantResult[] = [
      result('a', { wave: canary, action: 'proposed', changes: [{ status: 'added', path: 'a/Kptfile' }] }),
      result('b', { wave: canary, conflicts: [conflict('.spec.replicas', '5')] }),
      result('c', { wave: prod }),
      result('d', {
        wave: prod,
        action: 'deferred',
        writes: false,
        changes: [],
        heldBy: 'rollout',
        message: 'wave canary has 0 of 2 merged',
      }),
      result('e', { wave: prod, action: 'up-to-date', writes: false, changes: [] }),
      result('f', {}),
    ];
    return { version: '1.2.3', dryRun: true, mode: 'variants', results, warnings: [], failed: 0 };
  }

  it('groups the variants of rollout waves by wave, in the waves order, in Markdown and text; the others count as before', () => {
    const report = previewOf(waveReport(), { config: '.kdelta' });
    expect(report.waves?.map((w) => [w.name, w.summary.total])).toEqual([
      ['canary', 2],
      ['prod', 3],
    ]);
    const md = renderPreview(report);
    expect(md).toContain(
      'By rollout wave:\n\n- wave `canary`: 2 variants change (1 new), conflicts in 1\n- wave `prod`: 1 variant change, 1 left alone, 1 unchanged\n',
    );
    // the whole fleet's sentence counts every variant, governed or not
    expect(md.split('\n')[2]).toContain('1 new variant; 3 changed; 1 left alone; 1 unchanged');
    expect(md).toContain('<details><summary><b>b</b> → cluster-b/b (wave canary): changed, 1 file, 1 conflict</summary>');
    expect(md).toContain('<details><summary><b>f</b> → cluster-f/f: changed, 1 file</summary>');

    const text = renderPreview(report, { format: 'text' });
    expect(text.split('\n')[2]).toBe(
      'By rollout wave: wave canary: 2 variants change (1 new), conflicts in 1; wave prod: 1 variant change, 1 left alone, 1 unchanged',
    );
    expect(text).toMatch(/^VARIANT +DOWNSTREAM +WAVE +IMPACT +FILES +CONFLICTS +RENDER$/m);
    expect(text).toMatch(/^b +cluster-b\/b +canary +changed +1 +1 +-$/m);
    expect(text).toMatch(/^f +cluster-f\/f +- +changed +1 +0 +-$/m);
    expect(JSON.parse(renderPreview(report, { format: 'json' })).waves[1]).toMatchObject({
      name: 'prod',
      summary: { total: 3, leftAlone: 1 },
    });
  });

  it('a fleet without waves previews as before: no wave line, no WAVE column', () => {
    const report = previewOf(fleetReport(), { config: '.kdelta' });
    expect(report.waves).toBeUndefined();
    expect(renderPreview(report)).not.toContain('wave');
    expect(renderPreview(report, { format: 'text' })).not.toContain('WAVE');
  });
});
