import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getPackage } from '@kdelta/package-update';
import { gitEnv, packageVariant, type Fleet } from '@kdelta/test-support';
import { cliFleets, proposalRecord } from './__fixtures__/cli-fleet.js';

/**
 * A human's commits on a proposal branch are carried forward (local forge, real git): when the
 * upstream or the variant moves, the branch gets a new commit on top of them, built by the 3-way
 * merge from the branch's package; when nothing moved, it is left alone.
 */

const { fleet, kdelta, cacheDir } = cliFleets();

const NAMESPACE = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n';

function git(f: Fleet, downstream: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: f.downstream(downstream), encoding: 'utf8' }).trim();
}

function isAncestor(f: Fleet, downstream: string, commit: string, of: string): boolean {
  try {
    git(f, downstream, 'merge-base', '--is-ancestor', commit, of);
    return true;
  } catch {
    return false;
  }
}

/** One variant `web` proposed into cluster-01 from base-ns/v1, published with `namespace`. */
async function proposed(namespace = NAMESPACE): Promise<Fleet> {
  const f = fleet(['cluster-01']);
  if (namespace !== NAMESPACE) f.publish({ 'base-ns/namespace.yaml': namespace }, 'base-ns/v1');
  f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
  const first = await kdelta(f, 'run');
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
  return f;
}

const branchHead = (f: Fleet) => git(f, 'cluster-01', 'rev-parse', 'refs/heads/kdelta/web');

describe('human commits on a proposal branch are carried forward', () => {
  it('a human edit survives an upstream release: one new commit on top, the edit and the release merged, the lock at the new commit, the record naming the carried commit', async () => {
    const f = await proposed();
    const kdeltaCommit = branchHead(f);
    const ns = f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']!;
    const human = f.commitAs('cluster-01', 'kdelta/web', {
      'web/namespace.yaml': ns.replace(
        '  name: example # the namespace\n',
        '  name: example # the namespace\n  labels:\n    owner: human\n',
      ),
    });
    // the upstream releases again: base-ns/v1 moves to a commit that adds an annotation
    const release = f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');

    const second = await kdelta(f, 'run', '--report', 'report.json');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/web\s+cluster-01\/web\s+updated/);
    const after = branchHead(f);
    // the branch only moved forward: the human's commit (and kdelta's first) are in its history,
    // and the new commit sits directly on the human's
    expect(isAncestor(f, 'cluster-01', human, after)).toBe(true);
    expect(isAncestor(f, 'cluster-01', kdeltaCommit, after)).toBe(true);
    expect(git(f, 'cluster-01', 'rev-parse', `${after}^`)).toBe(human);
    // the proposal is built from the base branch, which has no package yet: it adds it
    expect(git(f, 'cluster-01', 'log', '--format=%s', `${human}..${after}`)).toMatch(/^kdelta: add web \(web\) from base-ns\/v1$/);
    const files = f.files('cluster-01', 'kdelta/web', 'web');
    expect(files['namespace.yaml']).toContain('owner: human');
    expect(files['namespace.yaml']).toContain('tier: gold');
    expect(files['Kptfile']).toMatch(new RegExp(`upstreamLock:[\\s\\S]*commit: ${release}`));

    const record = proposalRecord(f, 'cluster-01', 'web');
    expect(record).toContain('### Carried forward');
    expect(record).toContain(`- \`${human.slice(0, 12)}\` by Human: \`a human edit\``);
    // what changed is still against the base branch, which has no package yet
    expect(record).toMatch(/### What changed\n\n- added `web\/Kptfile`\n/);
    expect(record).toContain('- added `web/namespace.yaml`');
    expect(record).toContain(`"headCommit":"${after}"`);

    // nothing moved since: zero writes
    const refs = f.refs('cluster-01');
    const third = await kdelta(f, 'run');
    expect(third.stdout).toMatch(/web\s+cluster-01\/web\s+unchanged/);
    expect(f.refs('cluster-01')).toBe(refs);
    expect(proposalRecord(f, 'cluster-01', 'web')).toBe(record);
  });

  it("a human edit of a field upstream changes too is reported as a clash with the carried commit, the human's value as local", async () => {
    const f = await proposed(`${NAMESPACE}  annotations:\n    tier: bronze\n`);
    const ns = f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']!;
    expect(ns).toContain('tier: bronze');
    const human = f.commitAs('cluster-01', 'kdelta/web', { 'web/namespace.yaml': ns.replace('tier: bronze', 'tier: silver') });
    f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');

    const second = await kdelta(f, 'run');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/web\s+cluster-01\/web\s+updated\s+\S+\s+1\b/);
    expect(isAncestor(f, 'cluster-01', human, branchHead(f))).toBe(true);
    const record = proposalRecord(f, 'cluster-01', 'web');
    // not a conflict with the base branch (which has no package): a clash with the human's commit
    expect(record).not.toContain('### Conflicts');
    expect(record).toContain('### Clashes with commits on this branch (1)');
    expect(record).toMatch(/\| `\.metadata\.annotations\.tier` \| `bronze` \| `gold` \| `silver` \|/);
    expect(record).toMatch(/status:\n {2}state: failure\n/);
    expect(record).toContain(`\`${human.slice(0, 12)}\` by Human`);
  });

  it('a human commit is left alone while nothing moved, and carried forward when the variant changes', async () => {
    const f = await proposed();
    const human = f.commitAs('cluster-01', 'kdelta/web', { 'web/notes.md': 'mine\n' });
    const refs = f.refs('cluster-01');
    const record = proposalRecord(f, 'cluster-01', 'web');
    const still = await kdelta(f, 'run');
    expect(still.stdout).toMatch(/web\s+cluster-01\/web\s+blocked/);
    expect(f.refs('cluster-01')).toBe(refs);
    expect(proposalRecord(f, 'cluster-01', 'web')).toBe(record);

    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '  packageContext:\n    data:\n      team: green\n') });
    const changed = await kdelta(f, 'run');
    expect(changed.stdout).toMatch(/web\s+cluster-01\/web\s+updated/);
    expect(git(f, 'cluster-01', 'rev-parse', 'refs/heads/kdelta/web^')).toBe(human);
    const files = f.files('cluster-01', 'kdelta/web', 'web');
    expect(files['notes.md']).toBe('mine\n');
    expect(files['package-context.yaml']).toContain('team: green');
  });

  it("update mode: a human commit on a package's update branch in the control repository is carried forward too", async () => {
    const f = fleet([]);
    const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv }).trim();
    sh(f.control, 'init', '--quiet', '--initial-branch=main');
    mkdirSync(join(f.control, 'apps'));
    await getPackage({ repo: f.upstream, directory: '/base-ns', ref: 'base-ns/v1', destination: join(f.control, 'apps', 'ns'), cacheDir });
    sh(f.control, 'add', '--all');
    sh(f.control, 'commit', '--quiet', '-m', 'packages');
    f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: bronze\n` }, 'base-ns/v1');
    expect((await kdelta(f, 'run', '--mode', 'updates')).stdout).toMatch(/update-apps-ns\s+control\/apps\/ns\s+proposed/);

    // a reviewer commits on the update's branch: a clone, an edit, a push
    const work = join(f.root, 'review');
    sh(f.root, 'clone', '--quiet', '--branch', 'kdelta/update-apps-ns', f.control, work);
    const nsFile = join(work, 'apps', 'ns', 'namespace.yaml');
    writeFileSync(
      nsFile,
      readFileSync(nsFile, 'utf8').replace(
        '  name: example # the namespace\n',
        '  name: example # the namespace\n  labels:\n    owner: human\n',
      ),
    );
    sh(work, 'commit', '--quiet', '--all', '-m', 'label the namespace');
    sh(work, 'push', '--quiet', 'origin', 'kdelta/update-apps-ns');
    const human = sh(work, 'rev-parse', 'HEAD');
    rmSync(work, { recursive: true, force: true });

    const release = f.publish({ 'base-ns/namespace.yaml': `${NAMESPACE}  annotations:\n    tier: gold\n` }, 'base-ns/v1');
    const second = await kdelta(f, 'run', '--mode', 'updates');
    expect(second.stdout).toMatch(/update-apps-ns\s+control\/apps\/ns\s+updated/);
    expect(sh(f.control, 'rev-parse', 'kdelta/update-apps-ns^')).toBe(human);
    const namespace = sh(f.control, 'show', 'kdelta/update-apps-ns:apps/ns/namespace.yaml');
    expect(namespace).toContain('owner: human');
    expect(namespace).toContain('tier: gold');
    expect(sh(f.control, 'show', 'kdelta/update-apps-ns:apps/ns/Kptfile')).toContain(`commit: ${release}`);
    expect(proposalRecord(f, 'control', 'update-apps-ns')).toContain(`- \`${human.slice(0, 12)}\` by Test: \`label the namespace\``);
  });
});
