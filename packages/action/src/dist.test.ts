import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFleet, type Fleet, packageVariant, repository, runAction } from './__fixtures__/fleet.js';

// The committed bundle, started as GitHub's runner starts it: inputs as INPUT_* variables, the
// output and summary files, the control repository as the workspace. Forge local: real git
// repositories on disk, proposals as files under .kdelta/proposals.

const fleets: Fleet[] = [];
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});

function fleet(): Fleet {
  const f = createFleet(['cluster-01', 'cluster-02']);
  fleets.push(f);
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      repository('cluster-01', f.downstream('cluster-01'), { env: 'prod' }),
      repository('cluster-02', f.downstream('cluster-02'), { env: 'prod' }),
    ].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'api.yaml': packageVariant('api', 'cluster-02'),
  });
  return f;
}

const LOCAL = { forge: 'local', mode: 'variants', config: '.kdelta' };

describe('the bundled Action (forge local)', async () => {
  it('first run proposes every variant (outputs, counts, summary); the second writes nothing', async () => {
    const f = fleet();
    const first = await runAction(f.control, LOCAL);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.outputs).toMatchObject({
      created: '2',
      updated: '0',
      closed: '0',
      unchanged: '0',
      deferred: '0',
      failed: '0',
      'render-failed': '0',
    });
    const prs = JSON.parse(first.outputs['pull-requests']!) as Record<string, unknown>[];
    expect(prs).toEqual([
      {
        variant: 'api',
        downstream: 'cluster-02/api',
        action: 'proposed',
        url: expect.stringContaining('cluster-02'),
        number: null,
        state: 'open',
        conflicts: 0,
        renderFailed: false,
      },
      {
        variant: 'web',
        downstream: 'cluster-01/web',
        action: 'proposed',
        url: expect.stringContaining('cluster-01'),
        number: null,
        state: 'open',
        conflicts: 0,
        renderFailed: false,
      },
    ]);
    // the branch was pushed to the downstream, the proposal recorded
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
    expect(readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8')).toContain('head: kdelta/web');
    // progress in the log, inside a group
    expect(first.stdout).toContain('::group::Run');
    expect(first.stdout).toMatch(/\[\d\/2\] web → cluster-01\/web: proposed/);
    // the job summary: one row per variant
    expect(first.summary).toContain('| Variant | Downstream | Action | Pull request | Conflicts |');
    expect(first.summary).toMatch(/\| api \| cluster-02\/api \| proposed \| .*cluster-02.* \|/);
    expect(first.summary).toMatch(/\| web \| cluster-01\/web \| proposed \| .*cluster-01.* \|/);

    const refs = [f.refs('cluster-01'), f.refs('cluster-02')];
    const second = await runAction(f.control, LOCAL);
    expect(second.status).toBe(0);
    expect(second.outputs).toMatchObject({ created: '0', updated: '0', unchanged: '2', failed: '0' });
    expect(JSON.parse(second.outputs['pull-requests']!).map((p: { action: string }) => p.action)).toEqual(['unchanged', 'unchanged']);
    expect([f.refs('cluster-01'), f.refs('cluster-02')]).toEqual(refs);
  });

  it('a moved tag updates the proposal; dry-run computes it and writes nothing', async () => {
    const f = fleet();
    expect((await runAction(f.control, LOCAL)).status).toBe(0);
    f.publish(
      { 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace, v1.1\n' },
      'base-ns/v1',
    );
    const before = f.refs('cluster-01');
    const dry = await runAction(f.control, { ...LOCAL, 'dry-run': 'true' });
    expect(dry.status).toBe(0);
    expect(dry.outputs).toMatchObject({ updated: '2', created: '0' });
    expect(dry.summary).toContain('dry run: nothing written');
    expect(f.refs('cluster-01')).toBe(before);
    const real = await runAction(f.control, LOCAL);
    expect(real.outputs).toMatchObject({ updated: '2', created: '0', failed: '0' });
    expect(f.refs('cluster-01')).not.toBe(before);
  });

  it('shard k/n runs only that slice; together the shards run every variant once', async () => {
    const f = fleet();
    const one = await runAction(f.control, { ...LOCAL, shard: '1/2', 'dry-run': 'true' });
    const two = await runAction(f.control, { ...LOCAL, shard: '2/2', 'dry-run': 'true' });
    const names = (r: Awaited<typeof one>) => JSON.parse(r.outputs['pull-requests']!).map((p: { variant: string }) => p.variant);
    expect([...names(one), ...names(two)].sort()).toEqual(['api', 'web']);
  });

  it('a variant that fails fails the step with its reason; the other variant still runs', async () => {
    const f = fleet();
    f.writeControl({ 'api.yaml': packageVariant('api', 'cluster-02', '', 'v9') });
    const r = await runAction(f.control, LOCAL);
    expect(r.status).toBe(1);
    expect(r.outputs).toMatchObject({ created: '1', failed: '1' });
    expect(r.stdout).toMatch(/::error title=kdelta%3A api → cluster-02\/api::.*v9/);
    expect(r.stdout).toMatch(/::error::1 of 2 variant\(s\) failed; the others ran\. api → cluster-02\/api: .*v9/);
    expect(r.summary).toMatch(/\| api \| cluster-02\/api \| \*\*failed\*\* \|/);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
  });

  it('an exec function runs only with allow-exec: without it the package is proposed unrendered, and the step passes', async () => {
    const f = fleet();
    const fn = join(f.control, '..', 'mark.sh');
    const mark = join(f.control, '..', 'ran');
    writeFileSync(fn, `#!/bin/sh\ntouch ${mark}\ncat\n`, { mode: 0o755 });
    f.writeControl({ 'api.yaml': packageVariant('api', 'cluster-02', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`) });
    const refused = await runAction(f.control, LOCAL);
    expect(refused.status).toBe(0);
    expect(existsSync(mark)).toBe(false);
    expect(refused.outputs).toMatchObject({ created: '2', failed: '0', 'render-failed': '1' });
    expect(
      JSON.parse(refused.outputs['pull-requests']!).map((p: { variant: string; renderFailed: boolean }) => [p.variant, p.renderFailed]),
    ).toEqual([
      ['api', true],
      ['web', false],
    ]);
    expect(refused.summary).toMatch(/\| api \| cluster-02\/api \| \*\*proposed, render failed\*\* \|/);
    expect(refused.summary).toMatch(/- \*\*api\*\* → cluster-02\/api: render failed: function .*mark\.sh .*pass --allow-exec/);
    expect(refused.stdout).toMatch(/::warning title=kdelta%3A api → cluster-02\/api::render failed, proposed unrendered: .*mark\.sh/);
    expect(f.refs('cluster-02')).toContain('refs/heads/kdelta/api');

    const allowed = await runAction(f.control, { ...LOCAL, 'allow-exec': 'true' });
    expect(allowed.status).toBe(0);
    expect(existsSync(mark)).toBe(true);
    expect(allowed.outputs).toMatchObject({ updated: '1', unchanged: '1', failed: '0', 'render-failed': '0' });
  });

  // `:` in an annotation's properties is written %3A (the runner decodes it)
  it('a control-resource error is annotated on its file and line, and nothing is run', async () => {
    const f = fleet();
    f.writeControl({
      'web.yaml': `${packageVariant('web', 'cluster-01')}---\n${packageVariant('db', 'no-such-repository')}`,
    });
    const r = await runAction(f.control, LOCAL);
    expect(r.status).toBe(1);
    const line =
      readFileSync(join(f.control, '.kdelta', 'web.yaml'), 'utf8')
        .split('\n')
        .indexOf('    repo: no-such-repository') + 1;
    expect(line).toBeGreaterThan(10);
    expect(r.stdout).toContain(
      `::error title=kdelta%3A invalid control configuration (PackageVariant "db"),file=.kdelta/web.yaml,line=${line}::document 2: spec.downstream.repo: Repository "no-such-repository" does not exist`,
    );
    expect(r.stdout).toMatch(/::error::the control configuration has a problem \(annotated on the files\)/);
    expect(r.outputs).toEqual({});
    expect(f.refs('cluster-01')).not.toContain('kdelta/');
  });

  it('a bad input names the input and what it expects; the token is masked before anything else', async () => {
    const f = fleet();
    const r = await runAction(f.control, { ...LOCAL, shard: '3/2', token: 'ghs_secret_value' });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('::error::input "shard": expected k/n with 1 ≤ k ≤ n, e.g. 2/5 (got "3/2")');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('::add-mask::ghs_secret_value');
    expect(lines.slice(1).join('\n')).not.toContain('ghs_secret_value');
    const missing = await runAction(f.control, { forge: 'github', token: '' });
    expect(missing.status).toBe(1);
    expect(missing.stdout).toContain('::error::input "token": the github forge needs a token');
  });
});
