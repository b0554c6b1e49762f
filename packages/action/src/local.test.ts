import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, runMain } from './__fixtures__/fleet.js';
import { LOCAL, localFleet } from './__fixtures__/fleets.js';

// The Action (its sources, in this process, as the runner would start it: inputs as INPUT_*
// variables, the output and summary files, the control repository as the workspace) with forge
// local: real git repositories on disk, proposals as files under .kdelta/proposals. The bundle's
// own start is dist.test.ts.

describe('the Action (forge local)', () => {
  it('a moved tag updates the proposal; dry-run computes it and writes nothing', async () => {
    const f = localFleet();
    expect((await runMain(f.control, LOCAL)).status).toBe(0);
    f.publish(
      { 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace, v1.1\n' },
      'base-ns/v1',
    );
    const before = f.refs('cluster-01');
    const dry = await runMain(f.control, { ...LOCAL, 'dry-run': 'true' });
    expect(dry.status).toBe(0);
    expect(dry.outputs).toMatchObject({ updated: '2', created: '0' });
    expect(dry.summary).toContain('dry run: nothing written');
    expect(f.refs('cluster-01')).toBe(before);
    const real = await runMain(f.control, LOCAL);
    expect(real.outputs).toMatchObject({ updated: '2', created: '0', failed: '0' });
    expect(f.refs('cluster-01')).not.toBe(before);
  });

  it('the full report goes to a file in the runner temp directory (output report-path), beside the inline list', async () => {
    const f = localFleet();
    const run = await runMain(f.control, LOCAL);
    expect(run.outputs['report-path']).toMatch(/kdelta-report-.*\.json$/);
    const report = JSON.parse(run.reportFile ?? '{}') as { results: { variant: string }[] };
    expect(report.results.map((r) => r.variant).sort()).toEqual(['api', 'web']);
    expect(run.outputs['pull-requests-truncated']).toBe('false');
  });

  it('shard k/n runs only that slice; together the shards run every variant once', async () => {
    const f = localFleet();
    const one = await runMain(f.control, { ...LOCAL, shard: '1/2', 'dry-run': 'true' });
    const two = await runMain(f.control, { ...LOCAL, shard: '2/2', 'dry-run': 'true' });
    const names = (r: Awaited<typeof one>) => JSON.parse(r.outputs['pull-requests']!).map((p: { variant: string }) => p.variant);
    expect([...names(one), ...names(two)].sort()).toEqual(['api', 'web']);
  });

  it('a variant that fails fails the step with its reason; the other variant still runs', async () => {
    const f = localFleet();
    f.writeControl({ 'api.yaml': packageVariant('api', 'cluster-02', '', 'v9') });
    const r = await runMain(f.control, LOCAL);
    expect(r.status).toBe(1);
    expect(r.outputs).toMatchObject({ created: '1', failed: '1' });
    expect(r.stdout).toMatch(/::error title=kdelta%3A api → cluster-02\/api::.*v9/);
    expect(r.stdout).toMatch(/::error::1 of 2 variant\(s\) failed; the others ran\. api → cluster-02\/api: .*v9/);
    expect(r.summary).toMatch(/\| api \| cluster-02\/api \| \*\*failed\*\* \|/);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
  });

  it('an exec function runs only with allow-exec: without it the package is proposed unrendered, and the step passes', async () => {
    const f = localFleet();
    const fn = join(f.control, '..', 'mark.sh');
    const mark = join(f.control, '..', 'ran');
    writeFileSync(fn, `#!/bin/sh\ntouch ${mark}\ncat\n`, { mode: 0o755 });
    f.writeControl({ 'api.yaml': packageVariant('api', 'cluster-02', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`) });
    const refused = await runMain(f.control, LOCAL);
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
    // the message is strangers' text, escaped for Markdown (`\-\-allow-exec` renders as `--allow-exec`)
    expect(refused.summary.replace(/\\(?=[-[\]])/g, '')).toMatch(
      /- \*\*api\*\* → cluster-02\/api: render failed: function .*mark\.sh .*pass --allow-exec/,
    );
    expect(refused.stdout).toMatch(/::warning title=kdelta%3A api → cluster-02\/api::render failed, proposed unrendered: .*mark\.sh/);
    expect(f.refs('cluster-02')).toContain('refs/heads/kdelta/api');

    const allowed = await runMain(f.control, { ...LOCAL, 'allow-exec': 'true' });
    expect(allowed.status).toBe(0);
    expect(existsSync(mark)).toBe(true);
    expect(allowed.outputs).toMatchObject({ updated: '1', unchanged: '1', failed: '0', 'render-failed': '0' });
  });

  // `:` in an annotation's properties is written %3A (the runner decodes it)
  it('a control-resource error is annotated on its file and line, and nothing is run', async () => {
    const f = localFleet();
    f.writeControl({
      'web.yaml': `${packageVariant('web', 'cluster-01')}---\n${packageVariant('db', 'no-such-repository')}`,
    });
    const r = await runMain(f.control, LOCAL);
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
    const f = localFleet();
    const r = await runMain(f.control, { ...LOCAL, shard: '3/2', token: 'ghs_secret_value' });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('::error::input "shard": must be k/n with 1 ≤ k ≤ n, e.g. 2/5 (got "3/2")');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('::add-mask::ghs_secret_value');
    expect(lines.slice(1).join('\n')).not.toContain('ghs_secret_value');
    const missing = await runMain(f.control, { forge: 'github', token: '' });
    expect(missing.status).toBe(1);
    expect(missing.stdout).toContain('::error::input "token": the github forge needs a token');
  });
});
