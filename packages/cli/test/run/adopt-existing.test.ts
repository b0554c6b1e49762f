import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, git, packageVariant, repository, writeTree, type Fleet } from '@kdelta/test-support';
import type { Io } from '../../src/command.js';
import { main } from '../../src/main.js';

const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-run-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

async function kdelta(cwd: string, ...args: string[]) {
  return kdeltaIn({ KDELTA_ALLOW_LOCAL_UPSTREAMS: '1' }, cwd, ...args);
}

async function kdeltaIn(env: Record<string, string>, cwd: string, ...args: string[]) {
  const out = { stdout: '', stderr: '' };
  const { KDELTA_ALLOW_LOCAL_UPSTREAMS: _, ...inherited } = process.env;
  const io: Io = {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    cwd,
    env: { ...inherited, KDELTA_CACHE_DIR: cacheDir, ...env },
  };
  const code = await main(args, io);
  return { code, ...out };
}

const NAMESPACE = (labels: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n${labels}`;

/**
 * A cluster repository made the way fleets are today: `pkg get` of the catalog's base-ns at v2
 * (no package context upstream), a local edit committed on top. The catalog has since released v3.
 */
async function fleetOfCopies(): Promise<Fleet> {
  const f = createFleet(['cluster-01']);
  fleets.push(f);
  f.publish({ 'base-ns/package-context.yaml': null, 'base-ns/namespace.yaml': NAMESPACE('    tier: silver\n') }, 'base-ns/v2');
  const work = join(f.root, 'cluster-01-work');
  git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), work);
  // `<repo>.git/<package>`, as kpt names a repository on this machine
  symlinkSync(f.upstream, `${f.upstream}.git`);
  const got = await kdelta(work, 'pkg', 'get', `${f.upstream}.git/base-ns@base-ns/v2`, 'web');
  expect(got.code, got.stderr).toBe(0);
  const kptfile = parse(readFileSync(join(work, 'web', 'Kptfile'), 'utf8'));
  // kpt's shape: upstream and upstreamLock, nothing of kdelta's
  expect(kptfile.upstream).toMatchObject({ type: 'git', git: { directory: '/base-ns', ref: 'base-ns/v2' } });
  expect(kptfile.upstreamLock).toMatchObject({ type: 'git', git: { ref: 'base-ns/v2' } });
  expect(JSON.stringify(kptfile.metadata)).not.toContain('package-variant');
  writeTree(work, {
    'web/namespace.yaml': readFileSync(join(work, 'web', 'namespace.yaml'), 'utf8').replace(
      'tier: silver\n',
      'tier: silver\n    owner: team-red\n',
    ),
  });
  git(work, 'add', '--all');
  git(work, 'commit', '--quiet', '-m', 'web from the catalog, with a local label');
  git(work, 'push', '--quiet', 'origin', 'main');
  f.publish({ 'base-ns/namespace.yaml': NAMESPACE('    tier: gold\n') }, 'base-ns/v3');
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      `${repository('cluster-01', f.downstream('cluster-01'))}  deployment: true\n`,
    ].join('---\n'),
  });
  return f;
}

const CONTEXT = '  packageContext:\n    data:\n      team: blue\n';

describe('adopting what is already there', () => {
  it('adoptExisting takes a kpt copy: 3-way update from its own lock (local edits kept), owner annotation, and the package context of a deployment repository', async () => {
    const f = await fleetOfCopies();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', `  adoptionPolicy: adoptExisting\n${CONTEXT}`, 'v3') });
    const result = await kdelta(f.control, 'run');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    const files = f.files('cluster-01', 'kdelta/web', 'web');
    const kptfile = parse(files.Kptfile!);
    expect(kptfile.metadata.annotations['config.porch.kpt.dev/package-variant']).toBe('web');
    expect(kptfile.upstreamLock.git.ref).toBe('base-ns/v3');
    // upstream's v2 → v3 change merged in, the local label kept
    expect(files['namespace.yaml']).toContain('tier: gold');
    expect(files['namespace.yaml']).toContain('owner: team-red');
    // as `kpt pkg get --for-deployment` makes it, then the variant's packageContext applied
    const context = parse(files['package-context.yaml']!);
    expect(context).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'kptfile.kpt.dev' }, data: { name: 'web', team: 'blue' } });
  });

  it('a copy whose upstreamLock names a repository that cannot be reached fails naming that Kptfile field, and nothing is pushed', async () => {
    const f = await fleetOfCopies();
    const work = join(f.root, 'cluster-01-work');
    const kptfile = readFileSync(join(work, 'web', 'Kptfile'), 'utf8');
    const lockRepo = parse(kptfile).upstreamLock.git.repo as string;
    // made with `kpt pkg get` from a URL this runner cannot reach (a mirror, another server)
    writeTree(work, { 'web/Kptfile': kptfile.split(lockRepo).join('https://127.0.0.1:9/elsewhere/catalog.git') });
    git(work, 'commit', '--quiet', '-am', 'a copy made from another URL');
    git(work, 'push', '--quiet', 'origin', 'main');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', `  adoptionPolicy: adoptExisting\n${CONTEXT}`, 'v3') });
    const refs = f.refs('cluster-01');
    const result = await kdelta(f.control, 'run');
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain(
      "web/Kptfile: upstreamLock.git.repo https://127.0.0.1:9/elsewhere/catalog.git: the package's last upstream commit",
    );
    expect(f.refs('cluster-01')).toEqual(refs);
  });

  it('takes a kpt copy whose upstreamLock names the Repository without its `.git` (kpt drops it) as that Repository, local upstreams not allowed', async () => {
    const f = createFleet(['cluster-01']);
    fleets.push(f);
    f.publish({ 'base-ns/package-context.yaml': null, 'base-ns/namespace.yaml': NAMESPACE('    tier: silver\n') }, 'base-ns/v2');
    f.publish({ 'base-ns/namespace.yaml': NAMESPACE('    tier: gold\n') }, 'base-ns/v3');
    // the catalog as a bare `<name>.git`, with nothing at `<name>`
    const catalog = join(f.root, 'catalog');
    git(f.root, 'clone', '--quiet', '--bare', f.upstream, `${catalog}.git`);
    const work = join(f.root, 'cluster-01-work');
    git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), work);
    const got = await kdeltaIn({}, work, 'pkg', 'get', `${catalog}.git/base-ns@base-ns/v2`, 'web');
    expect(got.code, got.stderr).toBe(0);
    expect(parse(readFileSync(join(work, 'web', 'Kptfile'), 'utf8')).upstreamLock.git.repo).toBe(catalog);
    git(work, 'add', '--all');
    git(work, 'commit', '--quiet', '-m', 'web from the catalog');
    git(work, 'push', '--quiet', 'origin', 'main');
    f.writeControl({
      'repositories.yaml': [repository('catalog', `${catalog}.git`), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01', '  adoptionPolicy: adoptExisting\n', 'v3'),
    });
    const result = await kdeltaIn({}, f.control, 'run');
    expect(result.stdout + result.stderr).not.toContain('is on this machine');
    expect(result.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(result.code).toBe(0);
    expect(f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']).toContain('tier: gold');
  });

  it('adoptNone (the default) reports the copy as not adopted and leaves it untouched', async () => {
    const f = await fleetOfCopies();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', CONTEXT, 'v3') });
    const refs = f.refs('cluster-01');
    const result = await kdelta(f.control, 'run');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/web\s+cluster-01\/web\s+not-adopted/);
    expect(f.refs('cluster-01')).toEqual(refs);
  });
});
