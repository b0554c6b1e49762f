// Resources whose metadata is written in flow style (kubebuilder writes `annotations: {}`) keep
// their upstream identity through pkg get and a local rename, on real git repositories; and an
// upstream change that finds no local resource is reported, never dropped in silence.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cli } from './__fixtures__/runner.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-flow-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

function run(cwd: string, ...args: string[]) {
  return cli(args, cwd, { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') });
}

/** The package's resource files as written at v1; v2 changes every `k: v1` to `k: v2`. */
const FILES: Record<string, string> = {
  'flow.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {annotations: {}, name: flow, namespace: ns}\ndata:\n  k: v1\n',
  'flow-no-annotations.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow-bare, namespace: ns}\ndata:\n  k: v1\n',
  'empty-annotations.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n  namespace: ns\n  annotations: {}\ndata:\n  k: v1\n',
  'inline-annotations.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inline\n  namespace: ns\n  annotations: {a: b}\ndata:\n  k: v1\n',
};

/** An upstream repository with the package at tags v1 and v2, and a workspace repository. */
function setup(name: string, files: Record<string, string>) {
  const up = join(root, name, 'upstream');
  mkdirSync(up, { recursive: true });
  git(up, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(up, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: up\n');
  for (const [f, text] of Object.entries(files)) writeFileSync(join(up, f), text);
  git(up, 'add', '-A');
  git(up, 'commit', '--quiet', '-m', 'v1');
  git(up, 'tag', 'v1');
  for (const [f, text] of Object.entries(files)) writeFileSync(join(up, f), text.replace('k: v1', 'k: v2'));
  git(up, 'commit', '--quiet', '-am', 'v2');
  git(up, 'tag', 'v2');
  const ws = join(root, name, 'ws');
  mkdirSync(ws);
  git(ws, 'init', '--quiet');
  return { up, ws, pkg: join(ws, 'pkg') };
}

const read = (pkg: string, file: string) => readFileSync(join(pkg, file), 'utf8');
const data = (pkg: string, file: string) => parse(read(pkg, file)).data;

describe('flow-style metadata keeps its upstream identity', () => {
  it('get marks every resource as kpt does, and a later update still reaches it after a local namespace change', async () => {
    const { up, ws, pkg } = setup('namespace', FILES);
    expect((await run(ws, 'pkg', 'get', `${up}.git@v1`, 'pkg')).code).toBe(0);
    // kpt's identifier goes into the flow map; the merge comment after it, on the `metadata:` line
    expect(read(pkg, 'flow.yaml')).toBe(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|ns|flow'}, name: flow, namespace: ns} # kpt-merge: ns/flow\ndata:\n  k: v1\n",
    );
    expect(read(pkg, 'flow-no-annotations.yaml')).toContain(
      "metadata: {name: flow-bare, namespace: ns, annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|ns|flow-bare'}} # kpt-merge: ns/flow-bare\n",
    );
    // inside block metadata: empty annotations become a block map, inline ones get one more entry (as kpt writes them)
    expect(read(pkg, 'empty-annotations.yaml')).toBe(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: ns/empty\n  name: empty\n  namespace: ns\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|ns|empty'\ndata:\n  k: v1\n",
    );
    expect(read(pkg, 'inline-annotations.yaml')).toContain(
      "  annotations: {a: b, internal.kpt.dev/upstream-identifier: '|ConfigMap|ns|inline'}\n",
    );

    for (const f of Object.keys(FILES)) writeFileSync(join(pkg, f), read(pkg, f).replace(/namespace: ns\b/, 'namespace: ns-local'));
    git(ws, 'add', '-A');
    git(ws, 'commit', '--quiet', '-m', 'local namespace');
    const update = await run(ws, 'pkg', 'update', 'pkg@v2');
    expect(update.code, update.stderr).toBe(0);
    expect(update.stderr).not.toContain('conflict');
    for (const f of Object.keys(FILES)) {
      expect(data(pkg, f), f).toEqual({ k: 'v2' });
      expect(parse(read(pkg, f)).metadata.namespace, f).toBe('ns-local');
    }
  });

  it('a package kpt got (identifier in the flow map, its comment on the next key) keeps its identity too', async () => {
    const { up, ws, pkg } = setup('kpt-marked', { 'flow.yaml': FILES['flow.yaml']! });
    expect((await run(ws, 'pkg', 'get', `${up}.git@v1`, 'pkg')).code).toBe(0);
    // what kpt 1.0.0-beta.56 writes for this file on get, with the local namespace changed since
    writeFileSync(
      join(pkg, 'flow.yaml'),
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow, namespace: ns-local, annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|ns|flow'}}\ndata: # kpt-merge: ns/flow\n  k: v1\n",
    );
    git(ws, 'add', '-A');
    git(ws, 'commit', '--quiet', '-m', 'as kpt wrote it');
    const update = await run(ws, 'pkg', 'update', 'pkg@v2');
    expect(update.code, update.stderr).toBe(0);
    expect(data(pkg, 'flow.yaml')).toEqual({ k: 'v2' });
    expect(parse(read(pkg, 'flow.yaml')).metadata.namespace).toBe('ns-local');
  });

  it("says so when upstream changed a resource no local resource matches, and keeps local's", async () => {
    const { up, ws, pkg } = setup('unmatched', { 'cm.yaml': FILES['empty-annotations.yaml']! });
    expect((await run(ws, 'pkg', 'get', `${up}.git@v1`, 'pkg')).code).toBe(0);
    // renamed by hand with the identity dropped: nothing ties it to upstream's resource any more
    writeFileSync(
      join(pkg, 'cm.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n  namespace: ns-local\ndata:\n  k: v1\n',
    );
    git(ws, 'add', '-A');
    git(ws, 'commit', '--quiet', '-m', 'identity dropped');
    const update = await run(ws, 'pkg', 'update', 'pkg@v2');
    expect(update.code, update.stderr).toBe(0);
    expect(update.stderr).toContain(
      'ConfigMap ns/empty [pkg/cm.yaml]: upstream changed it and local deleted it (or renamed it without a merge comment); it stays deleted',
    );
    expect(data(pkg, 'cm.yaml')).toEqual({ k: 'v1' });
  });
});
