import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant, type Fleet } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import { main } from '../../src/main.js';
import { cliFleets } from './__fixtures__/cli-fleet.js';

const { cacheDir, fleet } = cliFleets();

const env = { ...process.env, KDELTA_CACHE_DIR: cacheDir };
const opts = (f: Fleet, extra: Partial<RunOptions> = {}): RunOptions => ({ cwd: f.control, cacheDir, env, ...extra });

function devGit(cwd: string): (...args: string[]) => string {
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Dev',
    GIT_AUTHOR_EMAIL: 'dev@example.com',
    GIT_COMMITTER_NAME: 'Dev',
    GIT_COMMITTER_EMAIL: 'dev@example.com',
  };
  return (...args) => execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv }).trim();
}

describe('kdelta run: proposals say what happened', () => {
  it("an unnamed function of a variant's pipeline is named PackageVariant.<variant>..<index>, as seed 004 says", async () => {
    const f = fleet(['c1']);
    f.writeControl({
      'web.yaml': packageVariant(
        'web',
        'c1',
        '  pipeline:\n    mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2.0\n      configMap:\n        team: blue\n    - name: annotate\n      image: gcr.io/kpt-fn/set-annotations:v0.1.4\n      configMap:\n        owner: web\n',
      ),
    });
    const r = await run(opts(f));
    expect(r.results[0]?.action).toBe('proposed');
    const kptfile = f.files('c1', 'kdelta/web', 'web').Kptfile!;
    expect(kptfile).toContain('name: PackageVariant.web..0');
    expect(kptfile).toContain('name: PackageVariant.web.annotate.1');
    // applying it again keeps one copy of each
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/web'], { cwd: f.downstream('c1') });
    expect((await run(opts(f))).results[0]?.action).toBe('up-to-date');
    expect(f.files('c1', 'main', 'web').Kptfile!.match(/PackageVariant\.web\./g)).toHaveLength(2);
  });

  it('update mode says when the work tree has uncommitted changes to a Kptfile it manages', async () => {
    const f = fleet([]);
    const { getPackage } = await import('@kdelta/package-update');
    const sh = devGit(f.control);
    sh('init', '--quiet', '--initial-branch=main');
    mkdirSync(join(f.control, 'apps'));
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'apps', 'ns'), cacheDir });
    sh('add', '--all');
    sh('commit', '--quiet', '-m', 'packages');
    const quiet = await run(opts(f, { mode: 'updates' }));
    expect(quiet.warnings.join('\n')).not.toContain('uncommitted');

    // the user moves the package to a new release in the work tree and runs before committing
    execFileSync('git', ['tag', 'base-ns/v2', 'base-ns/v1'], { cwd: f.upstream });
    const kptfile = join(f.control, 'apps', 'ns', 'Kptfile');
    writeFileSync(kptfile, readFileSync(kptfile, 'utf8').replace(/ref: base-ns\/v1/g, 'ref: base-ns/v2'));
    let stderr = '';
    const code = await main(['run', '--mode', 'updates'], {
      stdout: () => undefined,
      stderr: (t) => void (stderr += t),
      cwd: f.control,
      env,
    });
    expect(code).toBe(0);
    expect(stderr).toContain(
      'warning: update mode reads branch "main" of the control repository as committed, not the work tree: uncommitted changes to apps/ns/Kptfile are not part of this run (commit them, then run again)',
    );
  });
});
