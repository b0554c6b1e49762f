import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { main } from '../../src/main.js';
import { cliFleets, mergeBranch as merge, proposalRecord as record } from './__fixtures__/cli-fleet.js';

const { cacheDir, fleet, kdelta } = cliFleets();

describe('retiring the last variant of a repository', () => {
  it('is looked for in every Repository: a merged package gets its removal or orphan proposal, an unmerged proposal is closed and its branch deleted', async () => {
    const f = fleet(['cluster-01', 'cluster-02', 'cluster-03']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-02'),
      'db.yaml': packageVariant('db', 'cluster-03', '  deletionPolicy: orphan\n'),
    });
    expect((await kdelta(f, 'run')).code).toBe(0);
    merge(f, 'cluster-01', 'kdelta/web');
    merge(f, 'cluster-03', 'kdelta/db');
    // api's proposal stays open; then every variant is retired: no variant writes to any repository
    f.writeControl({ 'web.yaml': null, 'api.yaml': null, 'db.yaml': null });
    const retired = await kdelta(f, 'run');
    expect(retired.code, retired.stdout + retired.stderr).toBe(0);
    expect(retired.stdout).toMatch(/api\s+cluster-02\/api\s+closed/);
    expect(retired.stdout).toMatch(/db\s+cluster-03\/db\s+orphan-proposed/);
    expect(retired.stdout).toMatch(/web\s+cluster-01\/web\s+removal-proposed/);
    expect(f.refs('cluster-02')).not.toContain('refs/heads/kdelta/api');
    expect(record(f, 'cluster-02', 'api')).toMatch(/\nstate: closed\n/);
    expect(f.files('cluster-01', 'kdelta/web', 'web')).toEqual({});
    expect(f.files('cluster-03', 'kdelta/db', 'db').Kptfile).not.toContain('config.porch.kpt.dev/package-variant');

    // the closed proposal is not met again; the removals are unchanged
    const again = await kdelta(f, 'run');
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/^api\s/m);
    expect(again.stdout).toMatch(/web\s+cluster-01\/web\s+unchanged/);
  });

  it('leaves alone a proposal branch of a gone variant that another control repository wrote', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await kdelta(f, 'run')).code).toBe(0);
    // the same downstream, seen from a second control repository that never had variant web
    const other = join(f.root, 'other-control');
    execFileSync('mkdir', ['-p', join(other, '.kdelta')]);
    execFileSync('cp', [join(f.control, '.kdelta', 'repositories.yaml'), join(other, '.kdelta')]);
    const out = { stdout: '', stderr: '' };
    const code = await main(['run'], {
      stdout: (t) => void (out.stdout += t),
      stderr: (t) => void (out.stderr += t),
      cwd: other,
      env: { ...process.env, KDELTA_CACHE_DIR: cacheDir },
    });
    expect(code).toBe(0);
    expect(out.stdout).not.toMatch(/^web\s/m);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
  });
});
