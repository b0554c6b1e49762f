import { describe, expect, it } from 'vitest';
import { renderTable } from './report.js';
import type { RunReport, VariantResult } from './result.js';
import { dashboardEntries, parseDashboard, renderDashboard } from '../dashboard/dashboard.js';

// A fleet where one refusal or one catalogue function fails many variants alike: the message is
// printed once, with the variants it affects counted, wherever a run's results are listed.

const REFUSED = 'GitHub: cannot make an installation token of the GitHub App 77 for org: the installation is suspended';
const RENDER = {
  function: 'gcr.io/kpt-fn/kubeval:v0.3',
  field: 'pipeline.validators[0]',
  kptfile: 'web/Kptfile',
  message: 'function "gcr.io/kpt-fn/kubeval:v0.3" failed: exit code 1',
  results: [],
};

const result = (variant: string, over: Partial<VariantResult>): VariantResult => ({
  variant,
  downstream: `${variant}-cluster/web`,
  action: 'proposed',
  writes: true,
  dryRun: false,
  conflicts: [],
  conflictCount: 0,
  ...over,
});

const fleet = (n: number, over: Partial<VariantResult>, prefix: string) =>
  Array.from({ length: n }, (_, i) => result(`${prefix}${String(i).padStart(3, '0')}`, over));

const report = (results: VariantResult[]): RunReport => ({
  version: '1',
  dryRun: false,
  mode: 'variants',
  results,
  warnings: [],
  failed: 0,
});

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('a failure many variants share is said once', () => {
  const results = [
    ...fleet(200, { action: 'failed', code: 'installation-suspended', error: `${REFUSED}\nmore detail` }, 'f'),
    ...fleet(30, { renderFailure: RENDER }, 'r'),
    result('alone', { action: 'failed', code: 'upstream-unresolved', error: 'no tag v9 in catalog' }),
  ];

  it.each([
    { where: 'the run table', text: () => renderTable(report(results)) },
    { where: 'the dashboard', text: () => renderDashboard({ title: 'd', marker: '<!-- m -->', entries: dashboardEntries(results) }) },
  ])('in $where: once per distinct message, with the variants it affects counted', ({ text }) => {
    const t = text();
    expect(count(t, REFUSED)).toBe(1);
    expect(t).toMatch(/200 variant\(s\)/);
    expect(t).toMatch(/30 variant\(s\)/);
    // a message one variant has stays on its row
    expect(count(t, 'no tag v9 in catalog')).toBe(1);
  });

  it('the table names the shared message by number on each row', () => {
    const t = renderTable(report(results));
    expect(t).toMatch(/^f000 +f000-cluster\/web +failed \[1\] +- +0$/m);
    expect(t).toMatch(/^r000 +r000-cluster\/web +proposed, render failed \[2\] +- +0$/m);
    expect(t).toContain(
      `  [1] ${REFUSED} — 200 variant(s): f000 → f000-cluster/web, f001 → f001-cluster/web, f002 → f002-cluster/web, f003 → f003-cluster/web, f004 → f004-cluster/web, …and 195 more`,
    );
    expect(t).toContain('  [2] render failed: function gcr.io/kpt-fn/kubeval:v0.3 (web/Kptfile pipeline.validators[0]) — 30 variant(s):');
    expect(t).toMatch(/^alone +alone-cluster\/web +failed: no tag v9 in catalog/m);
  });

  it('the dashboard keeps a retry box per variant under the message, and reads the ticks back', () => {
    const t = renderDashboard({ title: 'd', marker: '<!-- m -->', entries: dashboardEntries(results) });
    expect(count(t, '<!-- kdelta-retry:')).toBe(201);
    expect(t).toContain(`- 200 variant(s): \`installation-suspended\` \`${REFUSED}\`\n`);
    expect(t).toContain('  - [ ] <!-- kdelta-retry:f000%20f000-cluster%2Fweb --> retry `f000` → `f000-cluster/web`\n');
    const ticked = t.replace('- [ ] <!-- kdelta-retry:f007%20', '- [x] <!-- kdelta-retry:f007%20');
    expect([...parseDashboard(ticked).ticks.retry]).toEqual(['f007 f007-cluster/web']);
  });
});
