import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { describeScenarios } from './harness.js';

/**
 * Retiring variants, on every forge: a gone variant is looked for in every Repository; a merged
 * package gets its removal (or orphan) proposal, an unmerged proposal is closed; what another
 * control repository wrote is left alone.
 */

describeScenarios('retiring the last variant of a repository', {}, ({ forge, fleet }) => {
  it('is looked for in every Repository: a merged package gets its removal or orphan proposal, an unmerged proposal is closed', async () => {
    const f = await fleet(['cluster-01', 'cluster-02', 'cluster-03'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-02'),
      'db.yaml': packageVariant('db', 'cluster-03', '  deletionPolicy: orphan\n'),
    });
    expect((await f.run()).failed).toBe(0);
    await f.merge('cluster-01', 'kdelta/web');
    await f.merge('cluster-03', 'kdelta/db');
    // api's proposal stays open; then every variant is retired: no variant writes to any repository
    f.writeControl({ 'web.yaml': null, 'api.yaml': null, 'db.yaml': null });
    const retired = await f.run();
    expect(retired.failed).toBe(0);
    expect(retired.results.map((r) => [r.variant, r.downstream, r.action])).toEqual([
      ['api', 'cluster-02/api', 'closed'],
      ['db', 'cluster-03/db', 'orphan-proposed'],
      ['web', 'cluster-01/web', 'removal-proposed'],
    ]);
    expect(f.proposal('cluster-02', 'kdelta/api').state).toBe('closed');
    if (forge === 'local') expect(f.tip('cluster-02', 'kdelta/api')).toBeUndefined();
    expect(f.git('cluster-01', 'ls-tree', '-r', '--name-only', 'refs/heads/kdelta/web', 'web/')).toBe('');
    expect(f.show('cluster-03', 'kdelta/db', 'db/Kptfile')).not.toContain('config.porch.kpt.dev/package-variant');

    // the closed proposal is not met again; the removals are unchanged
    const again = await f.run();
    expect(again.failed).toBe(0);
    expect(again.results.map((r) => [r.variant, r.action])).toEqual([
      ['db', 'unchanged'],
      ['web', 'unchanged'],
    ]);
  });

  // whose branch it is, is read from the branch, whatever the forge: on one forge
  if (forge === 'local') {
    it('leaves alone a proposal branch of a gone variant that another control repository wrote', async () => {
      const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') });
      expect((await f.run()).failed).toBe(0);
      const head = f.tip('cluster-01', 'kdelta/web');
      // the same downstream, seen from a second control repository that never had variant web
      const other = join(f.control, '..', 'other-control');
      mkdirSync(join(other, '.kdelta'), { recursive: true });
      cpSync(join(f.control, '.kdelta', 'repositories.yaml'), join(other, '.kdelta', 'repositories.yaml'));
      f.mark();
      const report = await f.run({ cwd: other, dashboard: false });
      expect(report.failed).toBe(0);
      expect(report.results.map((r) => r.variant)).not.toContain('web');
      expect(f.tip('cluster-01', 'kdelta/web')).toBe(head);
      expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('open');
      expect(f.wrote()).toBe(false);
    });
  }
});
