// Hostile inputs to `kdelta run`: names and settings that would push past review or make two
// proposals overwrite each other, output paths that fail only after the pushes, and signals to a
// busy run. Real git repositories (the fleet of @kdelta/test-support); the signal tests run the
// built CLI (`packages/cli/bin/kdelta.js`; run `pnpm build` first).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { killGroup, startKdelta } from '../src/__fixtures__/crash.js';
import { main } from '../src/main.js';
import { cliFleets } from './run/__fixtures__/cli-fleet.js';
import { ControlError, run, shardOf } from '@kdelta/run';

const { cacheDir, fleet, io, opts } = cliFleets();

const runSettings = (spec: string) => `apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: settings\nspec:\n${spec}`;

describe('review cannot be bypassed', () => {
  it('an empty branch prefix is refused, as a flag and in RunSettings, before anything is pushed (a variant named main would commit onto the base branch)', async () => {
    const f = fleet();
    f.writeControl({ 'main.yaml': packageVariant('main', 'cluster-01') });
    const refs = f.refs('cluster-01');

    const { io: cli, out } = io(f.control);
    expect(await main(['run', '--branch-prefix', ''], cli)).toBe(1);
    expect(out.stderr).toMatch(/--branch-prefix: must not be empty/);
    expect(f.refs('cluster-01')).toEqual(refs);

    f.writeControl({ 'settings.yaml': runSettings("  branchPrefix: ''\n") });
    const error = await run(opts(f)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ControlError);
    expect((error as Error).message).toMatch(
      /settings\.yaml: document 1 \(RunSettings "settings"\): spec\.branchPrefix: must not be empty/,
    );
    expect(f.refs('cluster-01')).toEqual(refs);
    expect(existsSync(join(f.control, '.kdelta', 'proposals'))).toBe(false);
  });

  it('a proposal branch that is the base branch is never pushed to, whatever the prefix and names', async () => {
    const f = fleet();
    // the downstream's base branch is kdelta/prod, and the variant is named prod
    git(f.downstream('cluster-01'), 'branch', 'kdelta/prod', 'main');
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('cluster-01', f.downstream('cluster-01')).replace('branch: main', 'branch: kdelta/prod'),
      ].join('---\n'),
      'prod.yaml': packageVariant('prod', 'cluster-01'),
    });
    const refs = f.refs('cluster-01');
    const report = await run(opts(f));
    expect(report.results[0]).toMatchObject({ variant: 'prod', action: 'failed', writes: false });
    expect(report.results[0]?.error).toMatch(
      /the proposal branch "kdelta\/prod" is the base branch of cluster-01: nothing is pushed to it/,
    );
    expect(f.refs('cluster-01')).toEqual(refs);
  });

  it("a human's branch with the proposal's name is not overwritten, even when it holds no commit of its own", async () => {
    const f = fleet();
    // a branch someone made from main that happens to be named like the proposal
    git(f.downstream('cluster-01'), 'branch', 'kdelta/web', 'main');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const refs = f.refs('cluster-01');
    const report = await run(opts(f));
    expect(report.results[0]).toMatchObject({ variant: 'web', action: 'blocked', writes: false });
    expect(report.results[0]?.message).toMatch(
      /branch kdelta\/web has 1 commit\(s\) kdelta did not make \([0-9a-f]{12} by Test <test@example\.com>\)/,
    );
    expect(f.refs('cluster-01')).toEqual(refs);
  });

  it('a proposal no longer needed is not closed by deleting its branch when a human has committed on it', async () => {
    const f = fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed' });
    // a human adds notes on the proposal's branch, and someone commits the package to main by hand
    f.commitAs('cluster-01', 'kdelta/web', { 'NOTES.md': 'my review notes\n' });
    const pkg = f.files('cluster-01', 'kdelta/web', 'web');
    f.commitAs('cluster-01', 'main', Object.fromEntries(Object.entries(pkg).map(([k, v]) => [`web/${k}`, v])));
    const refs = f.refs('cluster-01');
    const second = await run(opts(f));
    // its one write: the proposal's status names the commit (hostile-review.test.ts)
    expect(second.results[0]).toMatchObject({ action: 'blocked', writes: true });
    expect(second.results[0]?.message).toMatch(
      /branch kdelta\/web has 1 commit\(s\) kdelta did not make \([0-9a-f]{12} by Human <human@example\.com>\)/,
    );
    expect(f.refs('cluster-01')).toEqual(refs);
  });
});

describe('names that would share a branch, a record or a package', () => {
  it('a variant name that is not a Kubernetes object name is a plan error naming the rule (a/b and a_b would share a record)', async () => {
    const f = fleet();
    f.writeControl({ 'a.yaml': packageVariant('a_b', 'cluster-01') });
    const refs = f.refs('cluster-01');
    const error = await run(opts(f)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ControlError);
    expect((error as Error).message).toContain(
      'a.yaml: document 1 (PackageVariant "a_b"): metadata.name: "a_b" is not a valid Kubernetes object name (RFC 1123 subdomain',
    );
    expect(f.refs('cluster-01')).toEqual(refs);
  });

  it('two Repositories naming one repository (another spelling of its URL) cannot both write one package: a plan error naming both', async () => {
    const f = fleet();
    const url = f.downstream('cluster-01');
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('prod', url),
        // the same repository: trailing slash, file:// URL
        repository('prod-again', `file://${url}/`),
      ].join('---\n'),
      'a.yaml': packageVariant('a', 'prod').replace('package: a\n', 'package: web\n'),
      'b.yaml': packageVariant('b', 'prod-again').replace('package: b\n', 'package: web\n'),
    });
    const refs = f.refs('cluster-01');
    const error = await run(opts(f)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ControlError);
    expect((error as Error).message).toMatch(
      /b\.yaml: document 1 \(PackageVariant "b"\): variants "a" \(Repository "prod"\) and "b" \(Repository "prod-again"\) both write package directory "web" of file:\/\/.*cluster-01\.git\/: each would overwrite the other's proposal/,
    );
    expect(f.refs('cluster-01')).toEqual(refs);
    expect(existsSync(join(f.control, '.kdelta', 'proposals'))).toBe(false);
  });
  it('a variant and a package update of the control repository that would share a branch: an error naming both, before anything is pushed', async () => {
    const f = fleet();
    const { getPackage } = await import('@kdelta/package-update');
    git(f.control, 'init', '--quiet', '--initial-branch=main');
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'web'), cacheDir });
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('self', f.control)].join('---\n'),
      // its branch is kdelta/update-web, the update's of package web
      'pv.yaml': packageVariant('update-web', 'self'),
    });
    git(f.control, 'add', '--all');
    git(f.control, '-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', 'commit', '--quiet', '-m', 'control');
    const refs = git(f.control, 'for-each-ref');
    const error = await run(opts(f)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'name-collision' });
    expect((error as Error).message).toMatch(
      /^variant "update-web" and package update "update-web" \(web\) would share the branch "kdelta\/update-web" of .*control: each would overwrite the other's proposal$/,
    );
    expect(git(f.control, 'for-each-ref')).toBe(refs);
  });

  it('two packages a downstream says belong to one gone variant: one removal proposal, the other refused, naming both', async () => {
    const f = fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    const owned = (name: string) =>
      `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n  annotations:\n    config.porch.kpt.dev/package-variant: old\n`;
    f.commitAs('cluster-01', 'main', { 'a/Kptfile': owned('a'), 'b/Kptfile': owned('b') });
    const report = await run(opts(f));
    const old = report.results.filter((r) => r.variant === 'old');
    expect(old.map((r) => [r.downstream, r.action])).toEqual([
      ['cluster-01/a', 'removal-proposed'],
      ['cluster-01/b', 'failed'],
    ]);
    expect(old[1]?.error).toMatch(
      /^the removal of package "a" \(variant "old" is gone\) and the removal of package "b" \(variant "old" is gone\) would share the branch "kdelta\/old" of .*cluster-01: each would overwrite the other's proposal: left alone$/,
    );
    // the one proposal removes a alone
    expect(Object.keys(f.files('cluster-01', 'kdelta/old'))).toEqual(expect.arrayContaining(['b/Kptfile']));
    expect(Object.keys(f.files('cluster-01', 'kdelta/old'))).not.toContain('a/Kptfile');
  });
});

describe('every output path is checked before the first write or push', () => {
  it('kdelta run --report or --proposals-dir under a regular file: the error names the flag and nothing is pushed', async () => {
    const f = fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    writeFileSync(join(f.control, 'notes.txt'), 'a file\n');
    const refs = f.refs('cluster-01');
    for (const [flag, path] of [
      ['--report', 'notes.txt/report.json'],
      ['--proposals-dir', 'notes.txt/proposals'],
    ] as const) {
      const { io: cli, out } = io(f.control);
      expect(await main(['run', flag, path], cli)).toBe(1);
      expect(out.stderr).toContain(`kdelta run: ${flag} ${path}: ${join(f.control, 'notes.txt')} is a file, not a directory`);
      expect(f.refs('cluster-01')).toEqual(refs);
    }
    // the same directory from RunSettings: run() checks it before any job
    f.writeControl({ 'settings.yaml': runSettings('  proposalsDir: notes.txt/proposals\n') });
    const error = await run(opts(f)).catch((e: unknown) => e);
    expect((error as Error).message).toContain('RunSettings spec.proposalsDir notes.txt/proposals');
    expect(f.refs('cluster-01')).toEqual(refs);
    expect(existsSync(join(f.control, '.kdelta', 'proposals'))).toBe(false);
  });

  it('kdelta merge3 --output /proc/x returns at once with an error naming the flag (a recursive mkdir there never returns); so do --report and fn render --results-dir', {
    timeout: 15_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdelta-hostile-merge3-'));
    try {
      const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "${v}"\n`;
      for (const [name, v] of [
        ['o.yaml', '1'],
        ['u.yaml', '2'],
        ['l.yaml', '1'],
      ] as const)
        writeFileSync(join(dir, name), cm(v));
      const sides = ['--original', 'o.yaml', '--updated', 'u.yaml', '--local', 'l.yaml'];
      const proc = io(dir);
      expect(await main(['merge3', ...sides, '--output', '/proc/kdelta-x'], proc.io)).toBe(1);
      expect(proc.out.stderr).toMatch(/^kdelta merge3: --output \/proc\/kdelta-x: cannot write in \/proc \(E[A-Z]+\)/);
      writeFileSync(join(dir, 'file'), '');
      const report = io(dir);
      expect(await main(['merge3', ...sides, '--output', 'out', '--report', 'file/r.json'], report.io)).toBe(1);
      expect(report.out.stderr).toContain('--report file/r.json: ');
      expect(existsSync(join(dir, 'out'))).toBe(false);
      // fn render writes the package: --results-dir is checked before the render
      writeFileSync(join(dir, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n');
      const render = io(dir);
      expect(await main(['fn', 'render', '.', '--results-dir', 'file/results'], render.io)).toBe(1);
      expect(render.out.stderr).toContain(`kdelta fn render: --results-dir file/results: ${join(dir, 'file')} is a file, not a directory`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('signals', () => {
  const RESOURCES = 600;
  const VARIANTS = 8;

  /** A fleet that keeps a run busy for a while: a package of many files, fanned out to several variants. */
  function busyFleet(): { f: Fleet; env: NodeJS.ProcessEnv; tmp: string } {
    const f = fleet(['cluster-01', 'cluster-02']);
    const files: Record<string, string> = {};
    for (let i = 0; i < RESOURCES; i++) {
      files[`base-ns/cm-${i}.yaml`] = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  key: value-${i}\n`;
    }
    f.publish(files, 'base-ns/v1');
    const variants: Record<string, string> = {};
    for (let i = 0; i < VARIANTS; i++) variants[`v${i}.yaml`] = packageVariant(`v${i}`, i % 2 === 0 ? 'cluster-01' : 'cluster-02');
    f.writeControl(variants);
    // the run's own temporary directory: what it leaves there is all this test's
    const tmp = join(f.root, 'tmp');
    mkdirSync(tmp);
    return { f, tmp, env: { ...process.env, TMPDIR: tmp, KDELTA_CACHE_DIR: join(f.root, 'cache') } };
  }

  const leftovers = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('kdelta-'));

  /** Resolves once the run has made its work directory and is working in a package's. */
  async function busy(tmp: string, within = 60_000): Promise<void> {
    const started = Date.now();
    while (!(leftovers(tmp).some((n) => n.startsWith('kdelta-run-')) && leftovers(tmp).length > 1)) {
      if (Date.now() - started > within) throw new Error(`the run did not get busy within ${within} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('SIGTERM ends a busy run within seconds and removes its work directories', { timeout: 120_000 }, async () => {
    const { f, env, tmp } = busyFleet();
    const { child, done } = startKdelta(['run'], f.control, env);
    try {
      await busy(tmp);
      const sent = Date.now();
      child.kill('SIGTERM');
      const result = await done;
      const ms = Date.now() - sent;
      expect(result.code, result.stderr).toBe(143);
      expect(ms).toBeLessThan(15_000);
      expect(leftovers(tmp)).toEqual([]);
    } finally {
      killGroup(child);
    }
  });

  it('run() stops between steps when its signal is aborted: no job starts after it, and it rejects as interrupted', async () => {
    const f = fleet(['cluster-01']);
    const variants: Record<string, string> = {};
    for (let i = 0; i < 6; i++) variants[`v${i}.yaml`] = packageVariant(`v${i}`, 'cluster-01');
    f.writeControl(variants);
    const controller = new AbortController();
    const error = await run(
      opts(f, {
        concurrency: 1,
        signal: controller.signal,
        onProgress: (e) => {
          if (e.type === 'done') controller.abort(new Error('interrupted by SIGTERM'));
        },
      }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'interrupted', message: 'the run was interrupted (interrupted by SIGTERM)' });
    // the first variant was proposed whole; none after it
    expect(f.refs('cluster-01').match(/refs\/heads\/kdelta\//g)).toHaveLength(1);
  });

  it('the next run sweeps the work directories of a SIGKILLed run (only those whose process is gone)', { timeout: 120_000 }, async () => {
    const { f, env, tmp } = busyFleet();
    const { child, done } = startKdelta(['run'], f.control, env);
    await busy(tmp);
    killGroup(child);
    await done;
    const left = leftovers(tmp);
    expect(left.some((n) => n.startsWith('kdelta-run-'))).toBe(true);
    // a live process's directory is never taken: one named as kdelta names them, with this test's pid
    const hostTag = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
    const live = `kdelta-run-${process.pid}.${hostTag}-live`;
    mkdirSync(join(tmp, live));
    // the next run, made quick: a dry run of a shard holding none of the variants
    const names = new Set(Array.from({ length: VARIANTS }, (_, i) => shardOf(`v${i}`, 1000)));
    const empty = Array.from({ length: 1000 }, (_, i) => i + 1).find((k) => !names.has(k))!;
    const next = startKdelta(['run', '--dry-run', '--shard', `${empty}/1000`], f.control, env);
    const result = await next.done;
    expect(result.code, result.stderr).toBe(0);
    expect(leftovers(tmp)).toEqual([live]);
  });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}
