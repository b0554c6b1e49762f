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
