import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { cliFleets, mergeBranch as merge, proposalRecord as record } from './__fixtures__/cli-fleet.js';

const { fleet, kdelta } = cliFleets();

describe('removals are guarded', () => {
  it('more removals than --max-removals: none is proposed, every other job runs, and the run fails naming them and how to allow them', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01', '  deletionPolicy: orphan\n'),
    });
    expect((await kdelta(f, 'run')).code).toBe(0);
    merge(f, 'cluster-01', 'kdelta/web');
    merge(f, 'cluster-01', 'kdelta/api');
    // a relabelling drops both variants; a new one appears
    f.writeControl({ 'web.yaml': null, 'api.yaml': null, 'other.yaml': packageVariant('other', 'cluster-01') });
    const before = f.refs('cluster-01');
    const held = await kdelta(f, 'run', '--max-removals', '1');
    expect(held.code, held.stdout + held.stderr).toBe(1);
    expect(held.stdout).toMatch(/other\s+cluster-01\/other\s+proposed/);
    expect(held.stdout).toContain('2 removals are due, more than max-removals (1): none was proposed');
    expect(held.stdout).toContain('web (cluster-01/web, delete)');
    expect(held.stdout).toContain('api (cluster-01/api, orphan)');
    expect(held.stdout).toContain('--max-removals 2');
    // nothing of either removal was pushed; only other's branch is new
    expect(f.refs('cluster-01').replace(/\nrefs\/heads\/kdelta\/other \S+/, '')).toEqual(before);
    expect(f.files('cluster-01', 'main', 'web')).toHaveProperty(['namespace.yaml']);

    // the default (5) allows two; so does RunSettings' maxRemovals over it
    f.writeControl({
      'settings.yaml': 'apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: s\nspec:\n  maxRemovals: 1\n',
    });
    expect((await kdelta(f, 'run')).code).toBe(1);
    const allowed = await kdelta(f, 'run', '--max-removals', '2');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/web\s+cluster-01\/web\s+removal-proposed/);
    expect(allowed.stdout).toMatch(/api\s+cluster-01\/api\s+orphan-proposed/);
  });

  it('a removal proposal lists the files and resources edited on the downstream since kdelta last proposed the package', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01'), 'db.yaml': packageVariant('db', 'cluster-01') });
    expect((await kdelta(f, 'run')).code).toBe(0);
    merge(f, 'cluster-01', 'kdelta/web');
    merge(f, 'cluster-01', 'kdelta/db');
    const ns = f.files('cluster-01', 'main', 'web')['namespace.yaml']!;
    f.commitAs('cluster-01', 'main', {
      'web/namespace.yaml': ns
        .replace('kind: Namespace\n', 'kind: Namespace\n# edited by hand\n')
        .replace(/\n$/, '\n  labels:\n    team: red\n'),
      'web/quota.yaml': 'apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: small\n  namespace: web\nspec:\n  hard:\n    pods: "4"\n',
    });
    f.writeControl({ 'web.yaml': null, 'db.yaml': null, 'other.yaml': packageVariant('other', 'cluster-01') });
    const result = await kdelta(f, 'run');
    expect(result.code).toBe(0);
    const web = record(f, 'cluster-01', 'web');
    expect(web).toContain('Local edits since kdelta last proposed this package (`');
    expect(web).toContain('- modified `web/namespace.yaml`\n  - modified Namespace ');
    expect(web).toContain('- added `web/quota.yaml`\n  - added ResourceQuota web/small');
    // a package nobody edited says so
    expect(record(f, 'cluster-01', 'db')).toContain('Local edits since kdelta last proposed this package (`');
    expect(record(f, 'cluster-01', 'db')).toMatch(/this package \(`[0-9a-f]{12}`\): none\./);
  });
});
