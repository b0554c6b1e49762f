import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { cliFleets } from './__fixtures__/cli-fleet.js';

const { fleet: fleetOf, kdelta } = cliFleets();
const fleet = (): Fleet => fleetOf(['cluster-01']);

/** A reviewer says no on the local forge: the proposal's branch is deleted, unmerged. */
function decline(f: Fleet, branch: string): void {
  execFileSync('git', ['update-ref', '-d', `refs/heads/${branch}`], { cwd: f.downstream('cluster-01') });
}

const recordPath = join('.kdelta', 'proposals', 'cluster-01', 'web.md');
const record = (f: Fleet) => readFileSync(join(f.control, recordPath), 'utf8');

describe('people can say no', () => {
  it('a proposal whose branch was deleted unmerged is declined: not proposed again until a new upstream release, which mentions it', async () => {
    const f = fleet();
    // no revision: the variant follows the upstream's latest release (base-ns/v1 for now)
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', '""') });
    expect((await kdelta(f, 'run')).code).toBe(0);
    decline(f, 'kdelta/web');

    const first = await kdelta(f, 'run');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(record(f)).toMatch(/\nstate: declined\n/);
    expect(f.refs('cluster-01')).not.toContain('kdelta/web');
    // and again: the decline holds, nothing is pushed or written
    const refs = f.refs('cluster-01');
    const text = record(f);
    expect((await kdelta(f, 'run')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(f.refs('cluster-01')).toEqual(refs);
    expect(record(f)).toEqual(text);

    const listed = await kdelta(f, 'proposals');
    expect(listed.stdout).toMatch(/declined\s+cluster-01\s+kdelta\/web/);
    expect(listed.stdout).toContain(`To undo a decline, delete its record and run again:\n  rm ${recordPath}`);

    // a new upstream release proposes again, and says what was declined
    f.publish(
      {
        'base-ns/namespace.yaml':
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: gold\n',
      },
      'base-ns/v2',
    );
    const again = await kdelta(f, 'run');
    expect(again.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(record(f)).toMatch(/\nstate: open\n/);
    expect(record(f)).toMatch(/A previous proposal, "kdelta: add web[^"]*" \(upstream `[^`]+`, commit `[0-9a-f]{12}`\), was declined/);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
  });

  it('a change of the variant proposes again; deleting the record undoes a decline', async () => {
    const f = fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await kdelta(f, 'run');
    decline(f, 'kdelta/web');
    expect((await kdelta(f, 'run')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: blue\n') });
    const changed = await kdelta(f, 'run');
    expect(changed.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(record(f)).toContain('was declined');

    decline(f, 'kdelta/web');
    expect((await kdelta(f, 'run')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    rmSync(join(f.control, recordPath));
    expect((await kdelta(f, 'run')).stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
  });

  it('a squash-merged proposal whose branch was deleted is merged, not declined', async () => {
    const f = fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await kdelta(f, 'run');
    const work = join(f.root, 'squash');
    execFileSync('git', ['clone', '--quiet', f.downstream('cluster-01'), work]);
    const as = ['-c', 'user.name=r', '-c', 'user.email=r@example.com'];
    execFileSync('git', [...as, 'merge', '--quiet', '--squash', 'origin/kdelta/web'], { cwd: work });
    execFileSync('git', [...as, 'commit', '--quiet', '--no-edit'], { cwd: work });
    execFileSync('git', ['push', '--quiet', 'origin', 'main'], { cwd: work });
    decline(f, 'kdelta/web');
    const after = await kdelta(f, 'run');
    expect(after.stdout).not.toContain('declined');
    expect(after.stdout).toMatch(/web\s+cluster-01\/web\s+up-to-date/);
    expect(record(f)).toMatch(/\nstate: merged\n/);
  });
});
