import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { ControlError, packageUpdateMaterialize, renderTable, run } from '@kdelta/run';
import { main } from '../../src/main.js';
import { cliFleets } from './__fixtures__/cli-fleet.js';

/** git in `cwd` as a developer of the control repository would run it. */
function devGit(cwd: string): (...args: string[]) => string {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Dev',
    GIT_AUTHOR_EMAIL: 'dev@example.com',
    GIT_COMMITTER_NAME: 'Dev',
    GIT_COMMITTER_EMAIL: 'dev@example.com',
  };
  return (...args) => execFileSync('git', args, { cwd, encoding: 'utf8', env }).trim();
}

const { cacheDir, fleet, io, opts } = cliFleets({ labels: { env: 'prod' }, downstreams: ['cluster-01', 'cluster-02'] });

function proposalFile(f: Fleet, downstream: string, variant: string): string {
  return join(f.control, '.kdelta', 'proposals', downstream, `${variant}.md`);
}

const CONTEXT = '  packageContext:\n    data:\n      team: blue\n';

describe('kdelta run', () => {
  it('renders the Kptfile pipeline after the mutations (unless --no-render); a failing render is proposed unrendered and said on its proposal alone', async () => {
    const f = fleet(['cluster-01', 'cluster-02']);
    // upstream gains a pipeline: the catalog's set-labels, run by kdelta's built-in implementation
    f.publish(
      {
        'base-ns/Kptfile':
          'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\ninfo:\n  description: a namespace\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.2.0\n    configMap:\n      team: blue\n',
      },
      'base-ns/v2',
    );
    // b's pipeline gains an exec function: refused without --allow-exec
    const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-run-fn-'));
    const fn = join(fnDir, 'pass.sh');
    writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });
    f.writeControl({
      'a.yaml': packageVariant('a', 'cluster-01', '', 'v2'),
      'b.yaml': packageVariant('b', 'cluster-02', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`, 'v2'),
    });
    try {
      const first = await run(opts(f, { env: { ...process.env, KDELTA_CACHE_DIR: cacheDir, KDELTA_CONTAINER_RUNTIME: undefined } }));
      const byName = Object.fromEntries(first.results.map((r) => [r.variant, r]));
      expect(byName.a?.action).toBe('proposed');
      expect(byName.a?.renderFailure).toBeUndefined();
      expect(f.files('cluster-01', 'kdelta/a', 'a')['namespace.yaml']).toMatch(/labels:\n\s+team: blue/);
      // b's render failed: the package is proposed as updated and mutated, unrendered, and says why
      expect(first.failed).toBe(0);
      expect(byName.b).toMatchObject({ action: 'proposed', writes: true, renderFailure: { function: fn, kptfile: 'b/Kptfile' } });
      expect(byName.b?.error).toBeUndefined();
      expect(byName.b?.renderFailure?.field).toMatch(/^pipeline\.mutators\[\d\]$/);
      expect(byName.b?.renderFailure?.message).toContain('pass --allow-exec');
      const unrendered = f.files('cluster-02', 'kdelta/b', 'b');
      expect(unrendered.Kptfile).toContain(`exec: ${fn}`);
      expect(unrendered['namespace.yaml']).not.toContain('team: blue');
      const record = readFileSync(proposalFile(f, 'cluster-02', 'b'), 'utf8');
      expect(record).toContain('\nrenderFailed: true\n');
      expect(record).toMatch(
        /status:\n {2}state: failure\n {2}description: "?render failed: function .*pass\.sh \(b\/Kptfile pipeline\.mutators\[\d\]\): see the proposal/,
      );
      expect(record).toContain('### Render failed');
      expect(record).toContain(`- function: \`${fn}\``);
      expect(record).toMatch(/- error: `.*is an exec function.*pass --allow-exec/);
      expect(readFileSync(proposalFile(f, 'cluster-01', 'a'), 'utf8')).not.toContain('Render failed');
      expect(renderTable(first)).toMatch(/\bb +cluster-02\/b +proposed, render failed: function .*pass\.sh/);
      expect(renderTable(first)).toContain('2 variant(s), 0 failed, 1 proposed unrendered (render failed)');

      // nothing new: the render fails the same way, and nothing is written
      const refs = f.refs('cluster-02');
      const second = await run(opts(f));
      const b2 = second.results.find((r) => r.variant === 'b');
      expect(b2).toMatchObject({ action: 'unchanged', writes: false, renderFailure: { function: fn } });
      expect(f.refs('cluster-02')).toEqual(refs);
      expect(readFileSync(proposalFile(f, 'cluster-02', 'b'), 'utf8')).toBe(record);

      // with --allow-exec the render succeeds: the same proposal gets the rendered package, the normal body, a success status
      const third = await run(opts(f, { allowExec: true }));
      const b3 = third.results.find((r) => r.variant === 'b');
      expect(b3?.action).toBe('updated');
      expect(b3?.renderFailure).toBeUndefined();
      expect(f.files('cluster-02', 'kdelta/b', 'b')['namespace.yaml']).toMatch(/labels:\n\s+team: blue/);
      const fixed = readFileSync(proposalFile(f, 'cluster-02', 'b'), 'utf8');
      expect(fixed).not.toContain('renderFailed');
      expect(fixed).not.toContain('Render failed');
      expect(fixed).toMatch(/status:\n {2}state: success\n/);
      expect(third.results.find((r) => r.variant === 'a')?.action).toBe('unchanged');
    } finally {
      rmSync(fnDir, { recursive: true, force: true });
    }

    const g = fleet(['cluster-01']);
    g.publish(
      {
        'base-ns/Kptfile':
          'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.2.0\n    configMap:\n      team: blue\n',
      },
      'base-ns/v2',
    );
    g.writeControl({ 'a.yaml': packageVariant('a', 'cluster-01', '', 'v2') });
    const plain = await run(opts(g, { render: false }));
    expect(plain.results[0]?.action).toBe('proposed');
    expect(g.files('cluster-01', 'kdelta/a', 'a')['namespace.yaml']).not.toContain('team: blue');
  });
  it('first run pushes kdelta/<variant> and writes a proposal; a second run pushes and writes nothing', async () => {
    const f = fleet();
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01', CONTEXT),
      'set.yaml':
        'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: ns\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: v1\n  targets:\n  - repositorySelector:\n      matchLabels:\n        env: prod\n    packageNames: [team-a]\n',
    });
    const first = await run(opts(f));
    expect(first.failed).toBe(0);
    expect(first.results.map((r) => [r.variant, r.downstream, r.action])).toEqual([
      ['ns-cluster-01-team-a', 'cluster-01/team-a', 'proposed'],
      ['ns-cluster-02-team-a', 'cluster-02/team-a', 'proposed'],
      ['web', 'cluster-01/web', 'proposed'],
    ]);
    // the branch holds the package with the variant applied, the base branch is untouched
    const pkg = f.files('cluster-01', 'kdelta/web', 'web');
    expect(Object.keys(pkg).sort()).toEqual(['Kptfile', 'namespace.yaml', 'package-context.yaml']);
    expect(pkg.Kptfile).toContain('config.porch.kpt.dev/package-variant: web');
    expect(pkg.Kptfile).toMatch(/upstreamLock:[\s\S]*ref: base-ns\/v1[\s\S]*commit: [0-9a-f]{40}/);
    expect(pkg['package-context.yaml']).toContain('team: blue');
    expect(pkg['namespace.yaml']).toContain('# the namespace');
    expect(f.files('cluster-01', 'main')).toEqual({ 'README.md': '# cluster-01\n' });
    // the proposal record: header, body, hidden metadata
    const record = readFileSync(proposalFile(f, 'cluster-01', 'web'), 'utf8');
    expect(record).toMatch(
      /^---\ntitle: "?kdelta: add web \(web\) from base-ns\/v1"?\nhead: kdelta\/web\nbase: main\nstate: open\nfingerprint: [0-9a-f]{32}\n/,
    );
    expect(record).toContain('- added `web/Kptfile`');
    expect(record).toMatch(/<!-- kdelta: \{.*"headCommit":"[0-9a-f]{40}".*\} -->/);

    const refs = [f.refs('cluster-01'), f.refs('cluster-02')];
    const records = ['web', 'ns-cluster-01-team-a'].map((v) => readFileSync(proposalFile(f, 'cluster-01', v), 'utf8'));
    let fetched = 0;
    const counting: typeof packageUpdateMaterialize = async (input) => {
      fetched++;
      return packageUpdateMaterialize(input);
    };
    const second = await run(opts(f, { materialize: counting }));
    expect(second.results.map((r) => r.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(fetched).toBe(0);
    expect([f.refs('cluster-01'), f.refs('cluster-02')]).toEqual(refs);
    expect(['web', 'ns-cluster-01-team-a'].map((v) => readFileSync(proposalFile(f, 'cluster-01', v), 'utf8'))).toEqual(records);
  });

  it('a required injection point without a source: the package is proposed with its False condition, and the proposal says not ready', async () => {
    const f = fleet(['cluster-01']);
    f.publish(
      {
        'base-ns/endpoints.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: endpoints\n  annotations:\n    kpt.dev/config-injection: required\ndata:\n  db: unset\n',
      },
      'base-ns/v2',
    );
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  injectors:\n  - name: us-east1-endpoints\n', 'v2') });
    const result = await run(opts(f));
    expect(result.failed).toBe(0);
    expect(result.results.map((r) => r.action)).toEqual(['proposed']);
    const kptfile = f.files('cluster-01', 'kdelta/web', 'web').Kptfile!;
    expect(kptfile).toContain('conditionType: config.injection.ConfigMap.endpoints');
    expect(kptfile).toMatch(/type: config\.injection\.ConfigMap\.endpoints\n\s+status: "?False"?/);
    const record = readFileSync(proposalFile(f, 'cluster-01', 'web'), 'utf8');
    expect(record).toContain('### Not ready');
    expect(record).toContain('- `config.injection.ConfigMap.endpoints`: no in-cluster resources of type v1.ConfigMap');
  });

  it('a moved tag yields an update proposal that keeps the downstream edits and reports the conflicts', async () => {
    const f = fleet(['cluster-01']);
    const logo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0x81]);
    f.publish(
      {
        'base-ns/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n  size: small\n',
        'base-ns/logo.png': logo,
      },
      'base-ns/v1',
    );
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', CONTEXT) });
    const first = await run(opts(f));
    expect(first.results[0]).toMatchObject({ action: 'proposed' });
    const bare = f.downstream('cluster-01');
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/web'], { cwd: bare });
    // edits on the downstream's default branch: one field upstream will change too, one it will not
    const merged = f.files('cluster-01', 'main', 'web');
    f.commitAs('cluster-01', 'main', {
      'web/settings.yaml': merged['settings.yaml']!.replace('level: info', 'level: debug').replace(
        'size: small',
        'size: large\n  owner: team-blue',
      ),
      'web/local-only.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n',
    });
    const moved = f.publish(
      {
        'base-ns/settings.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: warn\n  size: small\n  timeout: 30s\n',
      },
      'base-ns/v1',
    );
    const second = await run(opts(f));
    expect(second.results[0]).toMatchObject({ action: 'proposed', upstream: { commit: moved }, conflictCount: 1 });
    const pkg = f.files('cluster-01', 'kdelta/web', 'web');
    // upstream's change, and every downstream edit but the one upstream replaced
    expect(pkg['settings.yaml']).toContain('timeout: 30s');
    expect(pkg['settings.yaml']).toContain('size: large');
    expect(pkg['settings.yaml']).toContain('owner: team-blue');
    expect(pkg['settings.yaml']).toContain('level: warn');
    expect(pkg['local-only.yaml']).toContain('name: mine');
    expect(pkg['package-context.yaml']).toContain('team: blue');
    expect(pkg.Kptfile).toContain(`commit: ${moved}`);
    expect(pkg.Kptfile).toContain('config.porch.kpt.dev/package-variant: web');
    // a binary file comes through byte for byte
    expect(execFileSync('git', ['show', 'kdelta/web:web/logo.png'], { cwd: bare })).toEqual(logo);
    // the proposal reports the conflict: field, the three values, the rule
    const record = readFileSync(proposalFile(f, 'cluster-01', 'web'), 'utf8');
    expect(record).toMatch(/^title: "?kdelta: update web \(web\) to base-ns\/v1"?$/m);
    expect(record).toContain('### Conflicts (1)');
    expect(record).toContain('| ConfigMap settings | `.data.level` | `info` | `warn` | `debug` | upstream-changed | upstream |');
  });

  it('update mode: each package of the control repository with an upstream gets its own update proposal', async () => {
    const f = fleet([]);
    const { getPackage } = await import('@kdelta/package-update');
    const sh = devGit(f.control);
    sh('init', '--quiet', '--initial-branch=main');
    mkdirSync(join(f.control, 'apps'));
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'apps', 'ns'), cacheDir });
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'pinned'), cacheDir });
    // a local edit in the control repository, committed
    const nsFile = join(f.control, 'apps', 'ns', 'namespace.yaml');
    writeFileSync(
      nsFile,
      readFileSync(nsFile, 'utf8').replace(
        '  name: example # the namespace\n',
        '  name: example # the namespace\n  labels:\n    team: blue\n',
      ),
    );
    writeFileSync(
      join(f.control, 'pinned', 'Kptfile'),
      readFileSync(join(f.control, 'pinned', 'Kptfile'), 'utf8').replace(/ref: base-ns\/v1/g, 'ref: base-ns/v0'),
    );
    execFileSync('git', ['tag', 'base-ns/v0', 'base-ns/v1'], { cwd: f.upstream });
    sh('add', '--all');
    sh('commit', '--quiet', '-m', 'packages');
    const main = sh('rev-parse', 'main');
    const moved = f.publish(
      {
        'base-ns/namespace.yaml':
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  annotations:\n    owner: platform\n',
      },
      'base-ns/v1',
    );

    const onlyVariants = await run(opts(f, { mode: 'variants' }));
    expect(onlyVariants.results).toEqual([]);
    const first = await run(opts(f, { mode: 'updates' }));
    expect(first.failed).toBe(0);
    expect(first.results.map((r) => [r.variant, r.downstream, r.action])).toEqual([
      ['update-apps-ns', 'control/apps/ns', 'proposed'],
      ['update-pinned', 'control/pinned', 'up-to-date'],
    ]);
    expect(first.results[0]!.upstream).toMatchObject({ ref: 'base-ns/v1', commit: moved });
    // the branch is in the control repository; its base branch and work tree are untouched
    expect(sh('rev-parse', 'main')).toBe(main);
    const updated = sh('show', 'kdelta/update-apps-ns:apps/ns/namespace.yaml');
    expect(updated).toContain('owner: platform');
    expect(updated).toContain('team: blue');
    expect(sh('show', 'kdelta/update-apps-ns:apps/ns/Kptfile')).toContain(`commit: ${moved}`);
    expect(readFileSync(nsFile, 'utf8')).not.toContain('owner: platform');
    const record = readFileSync(join(f.control, '.kdelta', 'proposals', 'control', 'update-apps-ns.md'), 'utf8');
    expect(record).toMatch(/^title: "?kdelta: update apps\/ns to base-ns\/v1"?$/m);
    expect(record).toMatch(/^head: kdelta\/update-apps-ns$/m);
    // readiness recorded with the proposal (a commit status on GitHub)
    expect(record).toMatch(/^status:\n {2}state: success\n {2}description: no conflicts$/m);
    // nothing new: nothing pushed, nothing rewritten
    const refs = sh('for-each-ref', '--format=%(refname) %(objectname)');
    const again = await run(opts(f, { mode: 'both' }));
    expect(again.results.map((r) => r.action)).toEqual(['unchanged', 'up-to-date']);
    expect(sh('for-each-ref', '--format=%(refname) %(objectname)')).toBe(refs);
    expect(readFileSync(join(f.control, '.kdelta', 'proposals', 'control', 'update-apps-ns.md'), 'utf8')).toBe(record);
  });

  it('update mode follows an abbreviated commit id as pkg update does, at a tip or deeper in history', async () => {
    const f = fleet([]);
    const { getPackage } = await import('@kdelta/package-update');
    const sh = devGit(f.control);
    sh('init', '--quiet', '--initial-branch=main');
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'deep'), cacheDir });
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'tip'), cacheDir });
    const older = f.publish(
      { 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n  labels:\n    tier: older\n' },
      'base-ns/v1',
    );
    const tip = f.publish(
      { 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n  labels:\n    tier: tip\n' },
      'base-ns/v1',
    );
    const follow = (dir: string, ref: string) =>
      writeFileSync(
        join(f.control, dir, 'Kptfile'),
        readFileSync(join(f.control, dir, 'Kptfile'), 'utf8').replace(/ref: base-ns\/v1/g, `ref: ${ref}`),
      );
    follow('deep', older.slice(0, 8));
    follow('tip', tip.slice(0, 8));
    sh('add', '--all');
    sh('commit', '--quiet', '-m', 'packages');

    const report = await run(opts(f, { mode: 'updates' }));
    expect(report.results.map((r) => [r.variant, r.action, r.upstream?.commit, r.error])).toEqual([
      ['update-deep', 'proposed', older, undefined],
      ['update-tip', 'proposed', tip, undefined],
    ]);
    expect(sh('show', 'kdelta/update-deep:deep/namespace.yaml')).toContain('tier: older');
    expect(sh('show', 'kdelta/update-tip:tip/namespace.yaml')).toContain('tier: tip');
  });

  it('update mode reads a ref that YAML would read as a number (a tag 2024) as the text written, as kpt does', async () => {
    const f = fleet([]);
    const { getPackage } = await import('@kdelta/package-update');
    const sh = devGit(f.control);
    sh('init', '--quiet', '--initial-branch=main');
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'dated'), cacheDir });
    const tagged = f.publish(
      { 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n  labels:\n    tier: dated\n' },
      '2024',
    );
    const kptfile = join(f.control, 'dated', 'Kptfile');
    writeFileSync(kptfile, readFileSync(kptfile, 'utf8').replace(/ref: base-ns\/v1\n/, 'ref: 2024\n'));
    sh('add', '--all');
    sh('commit', '--quiet', '-m', 'follow the 2024 tag');

    const report = await run(opts(f, { mode: 'updates' }));
    expect(report.results.map((r) => [r.variant, r.action, r.upstream?.commit, r.error])).toEqual([
      ['update-dated', 'proposed', tagged, undefined],
    ]);
    expect(sh('show', 'kdelta/update-dated:dated/namespace.yaml')).toContain('tier: dated');
  });

  it('update mode renders after the update; a failing render is proposed unrendered and said on its proposal', async () => {
    const f = fleet([]);
    const { getPackage } = await import('@kdelta/package-update');
    const sh = devGit(f.control);
    const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-run-fn-'));
    const fn = join(fnDir, 'pass.sh');
    writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });
    try {
      sh('init', '--quiet', '--initial-branch=main');
      mkdirSync(join(f.control, 'apps'));
      for (const name of ['labelled', 'exec']) {
        const dir = join(f.control, 'apps', name);
        await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: dir, cacheDir });
        // the local pipeline, kept by the update: set-labels (built-in), or an exec function
        const fnLine =
          name === 'exec' ? `  - exec: ${fn}\n` : '  - image: gcr.io/kpt-fn/set-labels:v0.2.0\n    configMap:\n      rendered: green\n';
        writeFileSync(join(dir, 'Kptfile'), `${readFileSync(join(dir, 'Kptfile'), 'utf8')}pipeline:\n  mutators:\n${fnLine}`);
      }
      sh('add', '--all');
      sh('commit', '--quiet', '-m', 'packages');
      f.publish(
        {
          'base-ns/namespace.yaml':
            'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  annotations:\n    owner: platform\n',
        },
        'base-ns/v1',
      );
      const env = { ...process.env, KDELTA_CACHE_DIR: cacheDir, KDELTA_CONTAINER_RUNTIME: undefined };
      const first = await run(opts(f, { mode: 'updates', env }));
      expect(first.failed).toBe(0);
      expect(first.results.map((r) => [r.variant, r.action, r.renderFailure?.function])).toEqual([
        ['update-apps-exec', 'proposed', fn],
        ['update-apps-labelled', 'proposed', undefined],
      ]);
      const labelled = sh('show', 'kdelta/update-apps-labelled:apps/labelled/namespace.yaml');
      expect(labelled).toContain('owner: platform');
      expect(labelled).toMatch(/labels:\n\s+rendered: green/);
      // the failing one: updated, unrendered, and its proposal says why
      expect(first.results[0]?.renderFailure).toMatchObject({ kptfile: 'apps/exec/Kptfile', field: 'pipeline.mutators[0]' });
      expect(sh('show', 'kdelta/update-apps-exec:apps/exec/namespace.yaml')).toContain('owner: platform');
      const recordFile = join(f.control, '.kdelta', 'proposals', 'control', 'update-apps-exec.md');
      const record = readFileSync(recordFile, 'utf8');
      expect(record).toContain('\nrenderFailed: true\n');
      expect(record).toContain('### Render failed');
      expect(record).toMatch(
        /status:\n {2}state: failure\n {2}description: "?render failed: function .*pass\.sh \(apps\/exec\/Kptfile pipeline\.mutators\[0\]\)/,
      );

      const refs = sh('for-each-ref', '--format=%(refname) %(objectname)');
      const again = await run(opts(f, { mode: 'updates', env }));
      expect(again.results.map((r) => [r.action, r.writes])).toEqual([
        ['unchanged', false],
        ['unchanged', false],
      ]);
      expect(sh('for-each-ref', '--format=%(refname) %(objectname)')).toBe(refs);
      expect(readFileSync(recordFile, 'utf8')).toBe(record);

      const allowed = await run(opts(f, { mode: 'updates', env, allowExec: true }));
      expect(allowed.results[0]).toMatchObject({ variant: 'update-apps-exec', action: 'updated' });
      expect(allowed.results[0]?.renderFailure).toBeUndefined();
      const fixed = readFileSync(recordFile, 'utf8');
      expect(fixed).not.toContain('Render failed');
      expect(fixed).toMatch(/status:\n {2}state: success\n/);
    } finally {
      rmSync(fnDir, { recursive: true, force: true });
    }
  });

  it('one unreachable downstream fails alone, and the command exits 1', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'gone.yaml': repository('cluster-09', join(f.root, 'no-such-repo.git')),
      'web.yaml': packageVariant('web', 'cluster-01'),
      'lost.yaml': packageVariant('lost', 'cluster-09'),
    });
    const { io: cli, out } = io(f.control);
    const code = await main(['run', '--report', 'report.json'], cli);
    expect(code).toBe(1);
    const report = JSON.parse(readFileSync(join(f.control, 'report.json'), 'utf8')) as {
      failed: number;
      results: { variant: string; action: string; error?: string }[];
    };
    expect(report.failed).toBe(1);
    expect(report.results.find((r) => r.variant === 'lost')).toMatchObject({ action: 'failed' });
    expect(report.results.find((r) => r.variant === 'lost')!.error).toContain('no-such-repo.git');
    expect(report.results.find((r) => r.variant === 'web')).toMatchObject({ action: 'proposed' });
    expect(out.stdout).toMatch(/^VARIANT\s+DOWNSTREAM\s+ACTION\s+PROPOSAL\s+CONFLICTS\n/);
    expect(out.stdout).toMatch(/web\s+cluster-01\/web\s+proposed\s+\.kdelta\/proposals\/cluster-01\/web\.md\s+0/);
    expect(out.stderr).toMatch(/\[\d\/2\] lost → cluster-09\/lost: failed: /);
    expect(f.refs('cluster-01')).toContain('refs/heads/kdelta/web');
    // kdelta proposals lists the record
    const listed = io(f.control);
    expect(await main(['proposals'], listed.io)).toBe(0);
    expect(listed.out.stdout).toMatch(/open\s+cluster-01\s+kdelta\/web\s+0\s+kdelta: add web/);
  });

  it('a removed variant yields a removal proposal (delete) or an ownership-only one (orphan)', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01', '  deletionPolicy: orphan\n'),
    });
    await run(opts(f));
    const bare = f.downstream('cluster-01');
    // both proposals merged
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/web'], { cwd: bare });
    f.commitAs(
      'cluster-01',
      'main',
      Object.fromEntries(Object.entries(f.files('cluster-01', 'kdelta/api', 'api')).map(([k, v]) => [`api/${k}`, v])),
    );
    f.writeControl({ 'web.yaml': null, 'api.yaml': null, 'other.yaml': packageVariant('other', 'cluster-01') });
    const result = await run(opts(f));
    const by = Object.fromEntries(result.results.map((r) => [r.variant, r]));
    expect(by.web, JSON.stringify(by.web)).toMatchObject({ action: 'removal-proposed', downstream: 'cluster-01/web' });
    expect(by.api).toMatchObject({ action: 'orphan-proposed' });
    expect(by.other).toMatchObject({ action: 'proposed' });
    expect(f.files('cluster-01', 'kdelta/web', 'web')).toEqual({});
    const api = f.files('cluster-01', 'kdelta/api', 'api');
    expect(api.Kptfile).not.toContain('config.porch.kpt.dev/package-variant');
    expect(api['namespace.yaml']).toContain('kind: Namespace');
    expect(readFileSync(proposalFile(f, 'cluster-01', 'web'), 'utf8')).toContain('this removes package `web`');
    // a second run proposes the same removal again: nothing is pushed
    const refs = f.refs('cluster-01');
    const again = await run(opts(f));
    expect(again.results.map((r) => r.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(f.refs('cluster-01')).toEqual(refs);
  });

  it('leaves an existing package it does not own alone, unless adoptionPolicy is adoptExisting', async () => {
    const f = fleet(['cluster-01']);
    f.commitAs('cluster-01', 'main', {
      'web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n',
      'web/package-context.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: web\n',
    });
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const refs = f.refs('cluster-01');
    const first = await run(opts(f));
    expect(first.results[0]).toMatchObject({ action: 'not-adopted', writes: false });
    expect(first.results[0]!.message).toContain('belongs to no variant; adoptionPolicy adoptNone leaves it alone');
    expect(f.refs('cluster-01')).toEqual(refs);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  adoptionPolicy: adoptExisting\n') });
    const second = await run(opts(f));
    expect(second.results[0]).toMatchObject({ action: 'proposed' });
    expect(f.files('cluster-01', 'kdelta/web', 'web').Kptfile).toContain('config.porch.kpt.dev/package-variant: web');
  });

  it('shards cover every variant exactly once', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'set.yaml':
        'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: many\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: v1\n  targets:\n  - repositories:\n    - name: cluster-01\n      packageNames: [a, b, c, d, e, f, g, h]\n',
    });
    const seen: string[] = [];
    for (const k of [1, 2, 3]) {
      const r = await run(opts(f, { shard: `${k}/3`, dryRun: true }));
      seen.push(...r.results.map((x) => x.variant));
      expect(r.results.every((x) => x.action === 'proposed' && x.writes && x.dryRun)).toBe(true);
    }
    expect(seen.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((p) => `many-cluster-01-${p}`));
    // a dry run writes nothing
    expect(f.refs('cluster-01')).not.toContain('kdelta/');
    expect(existsSync(join(f.control, '.kdelta', 'proposals'))).toBe(false);
  });

  describe('bad control resources: a clear error, nothing pushed', () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      ['invalid YAML', { 'web.yaml': 'apiVersion: v1\nkind: [oops\n' }, /\.kdelta\/web\.yaml: document 1: invalid YAML at line \d/],
      [
        'an unknown kind in a Porch group',
        { 'web.yaml': 'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVarient\nmetadata:\n  name: x\n' },
        /\.kdelta\/web\.yaml: document 1 \(PackageVarient "x"\): kind: unknown kind "PackageVarient"/,
      ],
      [
        'a set that selects nothing',
        {
          'set.yaml':
            'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: none\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: v1\n  targets:\n  - repositorySelector:\n      matchLabels:\n        env: staging\n',
        },
        /\.kdelta\/set\.yaml: document 1 \(PackageVariantSet "none"\): spec\.targets: selects nothing: spec\.targets\[0\]\.repositorySelector selects no Repository/,
      ],
      [
        'an unknown field',
        { 'web.yaml': packageVariant('web', 'cluster-01', '  adoptPolicy: adoptExisting\n') },
        /web\.yaml: document 1 \(PackageVariant "web"\): spec\.adoptPolicy: unknown field/,
      ],
    ];
    for (const [name, files, message] of cases) {
      it(name, async () => {
        const f = fleet(['cluster-01']);
        f.writeControl({ 'ok.yaml': packageVariant('ok', 'cluster-01'), ...files });
        const refs = f.refs('cluster-01');
        const error = await run(opts(f)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ControlError);
        expect((error as Error).message).toMatch(message);
        expect(f.refs('cluster-01')).toEqual(refs);
        expect(existsSync(join(f.control, '.kdelta', 'proposals'))).toBe(false);
      });
    }

    it('a revision that does not exist fails that variant, naming file and field', async () => {
      const f = fleet(['cluster-01']);
      f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v9') });
      const refs = f.refs('cluster-01');
      const { io: cli, out } = io(f.control);
      expect(await main(['run'], cli)).toBe(1);
      expect(out.stderr).toContain(
        'web → cluster-01/web: failed: .kdelta/web.yaml: document 1 (PackageVariant "web"): spec.upstream.revision: "v9" is not a tag ("base-ns/v9" or "v9"), a branch or a full commit of',
      );
      expect(f.refs('cluster-01')).toEqual(refs);
      // no proposal: only the dashboard, which lists the failure
      expect(readdirSync(join(f.control, '.kdelta', 'proposals'))).toEqual(['dashboard.md']);
      // the report says what failed as a code a program can act on, beside the message
      const report = await run(opts(f, { dryRun: true }));
      expect(report.results[0]).toMatchObject({ action: 'failed', code: 'upstream-unresolved' });
      expect(report.results[0]!.error).toContain('spec.upstream.revision: "v9" is not a tag');
    });
  });

  it('follows the highest semver tag of the upstream package when asked', async () => {
    const f = fleet(['cluster-01']);
    execFileSync('git', ['tag', '-d', 'base-ns/v1'], { cwd: f.upstream, stdio: 'ignore' }); // a Porch revision would come first
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: v1-2-0\n' }, 'base-ns/v1.2.0');
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: v1-10-0\n' }, 'base-ns/v1.10.0');
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: rc\n' }, 'base-ns/v1.10.1-rc.1');
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01').replace(
        '  name: web\n',
        '  name: web\n  annotations:\n    kdelta.dev/upstream-policy: highest-semver\n',
      ),
    });
    const r = await run(opts(f));
    expect(r.results[0]).toMatchObject({ action: 'proposed', upstream: { ref: 'base-ns/v1.10.0' } });
    expect(f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']).toContain('name: v1-10-0');
  });

  it('a package new in a deployment repository gets its package context when upstream has none (Porch), elsewhere not', async () => {
    const f = fleet(['cluster-01', 'cluster-02']);
    f.publish({ 'base-ns/package-context.yaml': null }, 'base-ns/v2');
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('cluster-01', f.downstream('cluster-01')).replace('spec:\n', 'spec:\n  deployment: true\n'),
        repository('cluster-02', f.downstream('cluster-02')),
      ].join('---\n'),
      'a.yaml': packageVariant('a', 'cluster-01', CONTEXT, 'v2'),
      'b.yaml': packageVariant('b', 'cluster-02', CONTEXT, 'v2'),
    });
    const r = await run(opts(f));
    const byName = Object.fromEntries(r.results.map((x) => [x.variant, x]));
    expect(byName.a?.action).toBe('proposed');
    const context = f.files('cluster-01', 'kdelta/a', 'a')['package-context.yaml'];
    expect(context).toMatch(/name: kptfile\.kpt\.dev/);
    expect(context).toMatch(/data:\n {2}name: a\n {2}team: blue\n/);
    expect(context).toContain('config.kubernetes.io/local-config: "true"');
    // not a deployment repository: Porch creates no package context, and the variant's data needs one
    expect(byName.b?.action).toBe('failed');
    expect(byName.b?.error).toContain('package-context.yaml: not found');
  });

  it('a downstream shared by two control repositories: each proposes removing only its own packages (and unrecorded old ones)', async () => {
    const f = fleet(['cluster-01']);
    // each control repository is known by its remote URL (a path is recorded for none)
    const withOrigin = (dir: string, url: string) => {
      const g = devGit(dir);
      g('init', '--quiet', '--initial-branch=main');
      g('remote', 'add', 'origin', url);
      g('commit', '--quiet', '--allow-empty', '-m', 'control');
    };
    withOrigin(f.control, 'https://git.invalid/acme/control-1.git');
    f.writeControl({ 'a.yaml': packageVariant('a', 'cluster-01') });
    expect((await run({ ...opts(f), mode: 'variants' })).results.map((r) => [r.variant, r.action])).toEqual([['a', 'proposed']]);
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/a'], { cwd: f.downstream('cluster-01') });
    expect(f.files('cluster-01', 'main', 'a').Kptfile).toContain('kdelta.dev/control-repository:');
    // a package an older kdelta wrote: its owner only
    const old = f.files('cluster-01', 'main', 'a');
    const oldKptfile = old
      .Kptfile!.replace(/\n\s*kdelta\.dev\/control-repository: .*/, '')
      .replace(/package-variant: a/, 'package-variant: old');
    f.commitAs('cluster-01', 'main', { 'old/Kptfile': oldKptfile, 'old/namespace.yaml': old['namespace.yaml']! });

    // a second control repository writing to the same downstream
    const second = join(f.root, 'control-2');
    mkdirSync(join(second, '.kdelta'), { recursive: true });
    writeFileSync(
      join(second, '.kdelta', 'control.yaml'),
      [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01')), packageVariant('b', 'cluster-01')].join(
        '---\n',
      ),
    );
    withOrigin(second, 'https://git.invalid/acme/control-2.git');
    const other = await run({ ...opts(f), cwd: second, mode: 'variants' });
    const byOther = Object.fromEntries(other.results.map((r) => [r.variant, r.action]));
    expect(byOther).toEqual({ b: 'proposed', old: 'removal-proposed' });

    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/b'], { cwd: f.downstream('cluster-01') });
    // the first control repository still removes its own variant's package when the variant goes
    f.writeControl({ 'a.yaml': null, 'c.yaml': packageVariant('c', 'cluster-01') });
    const own = await run({ ...opts(f), mode: 'variants' });
    expect(Object.fromEntries(own.results.map((r) => [r.variant, r.action]))).toMatchObject({ a: 'removal-proposed', c: 'proposed' });
    expect(own.results.some((r) => r.variant === 'b')).toBe(false);
  });

  it('a merged removal proposal is recorded as merged', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({
      'web.yaml': packageVariant('web', 'cluster-01'),
      'api.yaml': packageVariant('api', 'cluster-01', '  deletionPolicy: orphan\n'),
    });
    await run(opts(f));
    const bare = f.downstream('cluster-01');
    const merge = (branch: string) => {
      const work = join(f.root, `merge-${branch.replace('/', '-')}`);
      execFileSync('git', ['clone', '--quiet', bare, work]);
      execFileSync('git', ['-c', 'user.name=r', '-c', 'user.email=r@example.com', 'merge', '--quiet', '--no-edit', `origin/${branch}`], {
        cwd: work,
      });
      execFileSync('git', ['push', '--quiet', 'origin', 'main'], { cwd: work });
      rmSync(work, { recursive: true, force: true });
    };
    merge('kdelta/web');
    merge('kdelta/api');
    f.writeControl({ 'web.yaml': null, 'api.yaml': null, 'other.yaml': packageVariant('other', 'cluster-01') });
    const removed = await run(opts(f));
    expect(removed.results.map((r) => [r.variant, r.action])).toEqual([
      ['api', 'orphan-proposed'],
      ['other', 'proposed'],
      ['web', 'removal-proposed'],
    ]);
    merge('kdelta/web');
    merge('kdelta/api');
    // the removal branch of web is also deleted after the merge, as forges offer to
    execFileSync('git', ['update-ref', '-d', 'refs/heads/kdelta/web'], { cwd: bare });
    const after = await run(opts(f));
    // (other's proposal is rebased on the moved base: not what this is about)
    expect(after.results.filter((r) => r.variant !== 'other').map((r) => [r.variant, r.action, r.message])).toEqual([
      ['api', 'up-to-date', 'the proposal was merged'],
      ['web', 'up-to-date', 'the proposal was merged'],
    ]);
    for (const v of ['web', 'api']) expect(readFileSync(proposalFile(f, 'cluster-01', v), 'utf8')).toMatch(/\nstate: merged\n/);
    // and nothing more the next time
    expect((await run(opts(f))).results.map((r) => r.variant)).toEqual(['other']);
  });
});
