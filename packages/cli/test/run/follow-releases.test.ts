import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { run } from '@kdelta/run';
import { main } from '../../src/main.js';
import { cliFleets } from './__fixtures__/cli-fleet.js';

const { fleet, io, opts } = cliFleets();

/** Removes the fleet's own release tag, `base-ns/v1`. */
const untag = (f: Fleet) => execFileSync('git', ['tag', '-d', 'base-ns/v1'], { cwd: f.upstream, stdio: 'ignore' });

const namespace = (name: string) => ({ 'base-ns/namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n` });

describe('kdelta run: a variant without a revision follows the latest release', () => {
  it('takes the highest <package>/vX.Y.Z (no pre-release), says why, and proposes the next release when it appears', async () => {
    const f = fleet(['cluster-01']);
    untag(f); // the fleet's base-ns/v1, a Porch revision, would come first
    f.publish(namespace('v0-3-0'), 'base-ns/v0.3.0');
    f.publish(namespace('v0-10-0'), 'base-ns/v0.10.0');
    f.publish(namespace('v0-11-0-rc'), 'base-ns/v0.11.0-rc.1');
    f.publish(namespace('plain'), 'v9.0.0'); // a repository-wide release: the package's own tags come first
    f.publish(namespace('main'));
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', '') });

    const first = await run(opts(f));
    expect(first.results[0]).toMatchObject({
      action: 'proposed',
      upstream: { ref: 'base-ns/v0.10.0', reason: 'latest release v0.10.0 of base-ns' },
    });
    expect(f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']).toContain('name: v0-10-0');
    const record = readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8');
    expect(record).toContain('at `base-ns/v0.10.0` (latest release v0.10.0 of base-ns)');
    const listed = io(f.control);
    expect(await main(['proposals'], listed.io)).toBe(0);
    expect(listed.out.stdout).toMatch(/^STATE\s+DOWNSTREAM\s+BRANCH\s+CONFLICTS\s+TITLE\s+UPSTREAM\n/);
    expect(listed.out.stdout).toMatch(/kdelta: add web \(web\) from base-ns\/v0\.10\.0\s+latest release v0\.10\.0 of base-ns\n/);

    // the proposal is merged; nothing new upstream: nothing to do
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/web'], { cwd: f.downstream('cluster-01') });
    expect((await run(opts(f))).results[0]?.action).toBe('up-to-date');

    // a new release, with no edit of the control resources: the next run proposes it
    f.publish(namespace('v0-11-0'), 'base-ns/v0.11.0');
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({
      action: 'proposed',
      upstream: { ref: 'base-ns/v0.11.0', reason: 'latest release v0.11.0 of base-ns' },
    });
    expect(f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']).toContain('name: v0-11-0');
    expect(readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8')).toContain(
      'title: "kdelta: update web (web) to base-ns/v0.11.0"',
    );
  });

  it('pre-releases only with kdelta.dev/upstream-prereleases: "true"; a plain vX.Y.Z when the package has no tag; no release: the variant fails', async () => {
    const f = fleet(['cluster-01', 'cluster-02']);
    untag(f);
    f.publish(namespace('v1-0-0'), 'base-ns/v1.0.0');
    f.publish(namespace('rc'), 'base-ns/v1.1.0-rc.2');
    f.writeControl({
      'pre.yaml': packageVariant('pre', 'cluster-01', '', '').replace(
        '  name: pre\n',
        '  name: pre\n  annotations:\n    kdelta.dev/upstream-prereleases: "true"\n',
      ),
      'stable.yaml': packageVariant('stable', 'cluster-02', '', ''),
    });
    const r = await run(opts(f));
    const byName = Object.fromEntries(r.results.map((x) => [x.variant, x]));
    expect(byName.pre?.upstream).toMatchObject({
      ref: 'base-ns/v1.1.0-rc.2',
      reason: 'latest release v1.1.0-rc.2 of base-ns, pre-releases included',
    });
    expect(byName.stable?.upstream).toMatchObject({ ref: 'base-ns/v1.0.0', reason: 'latest release v1.0.0 of base-ns' });

    const g = fleet(['cluster-01']);
    untag(g);
    g.publish(namespace('plain'), 'v2.0.0');
    g.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', '') });
    expect((await run(opts(g))).results[0]?.upstream).toMatchObject({
      ref: 'v2.0.0',
      reason: 'latest release v2.0.0 of the repository (base-ns has no tag "base-ns/v<N>" or "base-ns/vX.Y.Z")',
    });

    const h = fleet(['cluster-01']);
    untag(h);
    h.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', '') });
    expect((await run(opts(h))).results[0]).toMatchObject({ action: 'failed', code: 'no-release' });
  });

  it('a bad kdelta.dev/upstream-prereleases value is a control error naming the field', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01', '', '').replace(
        '  name: web\n',
        '  name: web\n  annotations:\n    kdelta.dev/upstream-prereleases: "yes"\n',
      ),
    });
    await expect(run(opts(f))).rejects.toThrow(
      '.kdelta/web.yaml: document 1 (PackageVariant "web"): metadata.annotations.kdelta.dev/upstream-prereleases: must be "true" or "false" (got "yes")',
    );
  });
});
