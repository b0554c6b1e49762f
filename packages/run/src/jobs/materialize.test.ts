import { watch } from 'node:fs';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { Parser } from 'yaml';
import { createFleet, git, tempDir, UPSTREAM_PACKAGE } from '@kdelta/test-support';
import type { FileContent, PackageFiles } from './file-content.js';
import type { MaterializeInput } from './materialize.js';
import { createPackageUpdateMaterialize, packageUpdateMaterialize } from './materialize.js';

const executable = { kind: 'executable', bytes: Buffer.from('#!/bin/sh\nexec cat -\n') } as const;
const link = { kind: 'symlink', target: '../outside' } as const;
const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0xc3, 0x28]);
const crlf = 'apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: windows\r\ndata:\r\n  a: "1"\r\n';

/**
 * What `prepare` made in the system's temp directory (where kptfile-model's makeTempDir makes
 * scratch directories), even when removed again by the time it returns: TMPDIR is a fresh
 * directory, watched, meanwhile.
 */
async function madeInTemp<T>(prepare: () => Promise<T>): Promise<{ value: T; made: string[]; temp: string }> {
  const temp = tempDir('kdelta-materialize-tmp-');
  const saved = process.env['TMPDIR'];
  const made: string[] = [];
  const watcher = watch(temp, (event, name) => {
    if (event === 'rename' && name) made.push(name);
  });
  process.env['TMPDIR'] = temp;
  try {
    const value = await prepare();
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last events are delivered
    return { value, made, temp };
  } finally {
    if (saved === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = saved;
    watcher.close();
  }
}

function fleetInput(): { input: (pkg: string, ref: string, local?: PackageFiles) => MaterializeInput; publishV2: () => void } {
  const f = createFleet([]);
  const cacheDir = tempDir('kdelta-materialize-cache-');
  const commit = (ref: string) => git(f.upstream, 'rev-parse', `${ref}^{commit}`);
  return {
    input: (pkg, ref, local) => ({
      variant: pkg,
      upstream: { repo: f.upstream, directory: 'base-ns', ref, commit: commit(ref) },
      downstream: { package: pkg, local },
      cacheDir,
      env: process.env,
    }),
    publishV2: () => {
      f.publish(
        { 'base-ns/namespace.yaml': UPSTREAM_PACKAGE['base-ns/namespace.yaml']!.replace('# the namespace', '# the namespace, v2') },
        'base-ns/v2',
      );
    },
  };
}

/** A downstream's copy of a package: a local edit, and files the run carries as they are. */
function edited(files: PackageFiles): Map<string, FileContent> {
  const local = new Map(files);
  local.set('namespace.yaml', (local.get('namespace.yaml') as string).replace('name: example', 'name: example-local'));
  local.set('fn/run.sh', executable);
  local.set('docs', link);
  local.set('logo.png', binary);
  local.set('windows.yaml', crlf);
  return local;
}

describe('the package-update materialize step', () => {
  it('prepares packages in memory: once an upstream is fetched, a get and a 3-way update make no directory', async () => {
    const fleet = fleetInput();
    const materialize = createPackageUpdateMaterialize();
    // the first get fetches the upstream (git's scratch checkout, once per upstream and ref)
    const first = await materialize(fleet.input('web', 'base-ns/v1'));
    const got = await madeInTemp(() => materialize(fleet.input('api', 'base-ns/v1')));
    expect(got.made).toEqual([]);
    expect(got.value.files.get('Kptfile')).toMatch(/name: api/);

    fleet.publishV2();
    // the first update fetches upstream v2 and the lock's commit
    await materialize(fleet.input('web', 'base-ns/v2', edited(first.files)));
    const updated = await madeInTemp(() => materialize(fleet.input('api', 'base-ns/v2', edited(got.value.files))));
    expect(updated.made).toEqual([]);
    const files = updated.value.files;
    expect(files.get('namespace.yaml')).toMatch(/name: example-local # the namespace, v2/);
    expect(files.get('Kptfile')).toMatch(/ref: base-ns\/v2/);
    expect(files.get('fn/run.sh')).toEqual(executable);
    expect(files.get('docs')).toEqual(link);
    expect(files.get('logo.png')).toEqual(binary);
    // merge comments added, every line still ending in CRLF
    expect(files.get('windows.yaml')).toMatch(/^metadata: # kpt-merge: \/windows\r$/m);
    expect(files.get('windows.yaml')).not.toMatch(/(^|[^\r])\n/);
  });

  it('parses what upstream changed once for the merge and the list of what upstream changed', async () => {
    const f = createFleet([]);
    onTestFinished(() => f.cleanup());
    const settings = (v: number) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n${Array.from({ length: 50 }, (_, i) => `  key-${i}: "value ${i % 10 === 0 ? v : 1}"\n`).join('')}`;
    f.publish({ 'base-ns/settings.yaml': settings(1) }, 'base-ns/s1');
    f.publish({ 'base-ns/settings.yaml': settings(2) }, 'base-ns/s2');
    const input = (ref: string, local?: PackageFiles): MaterializeInput => ({
      variant: 'web',
      upstream: { repo: f.upstream, directory: 'base-ns', ref, commit: git(f.upstream, 'rev-parse', `${ref}^{commit}`) },
      downstream: { package: 'web', local },
      cacheDir: tempDir('kdelta-materialize-cache-'),
      env: process.env,
    });
    const first = await packageUpdateMaterialize(input('base-ns/s1'));
    const parses = vi.spyOn(Parser.prototype, 'parse');
    onTestFinished(() => parses.mockRestore());
    const updated = await packageUpdateMaterialize(input('base-ns/s2', first.files));
    const texts = parses.mock.calls.map(([text]) => text).filter((text) => text.includes('name: settings'));
    // origin (as local has it: the downstream left it alone) and upstream, each parsed once
    expect(texts).toHaveLength(2);
    expect(new Set(texts).size).toBe(2);
    expect(updated.files.get('settings.yaml')).toContain('  key-10: "value 2"\n');
    expect(updated.upstreamChanges?.resources.map((c) => [c.subject, c.fields.length])).toEqual([['ConfigMap settings', 5]]);
  });

  it('parses the origin and upstream of a package fanned out to many downstreams once per run, each local copy once', async () => {
    const f = createFleet([]);
    onTestFinished(() => f.cleanup());
    const settings = (v: number) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n${Array.from({ length: 50 }, (_, i) => `  key-${i}: "value ${i % 10 === 0 ? v : 1}"\n`).join('')}`;
    f.publish({ 'base-ns/settings.yaml': settings(1) }, 'base-ns/s1');
    f.publish({ 'base-ns/settings.yaml': settings(2) }, 'base-ns/s2');
    const cacheDir = tempDir('kdelta-materialize-cache-');
    const input = (variant: string, ref: string, local?: PackageFiles): MaterializeInput => ({
      variant,
      upstream: { repo: f.upstream, directory: 'base-ns', ref, commit: git(f.upstream, 'rev-parse', `${ref}^{commit}`) },
      downstream: { package: 'web', local },
      cacheDir,
      env: process.env,
    });
    const materialize = createPackageUpdateMaterialize();
    const first = await materialize(input('first', 'base-ns/s1'));
    // each downstream edited its copy its own way: three local texts, one origin, one upstream
    const local = (n: number) =>
      new Map(first.files).set(
        'settings.yaml',
        (first.files.get('settings.yaml') as string).replace('key-5: "value 1"', `key-5: "local ${n}"`),
      );
    const parses = vi.spyOn(Parser.prototype, 'parse');
    onTestFinished(() => parses.mockRestore());
    const updated = [];
    for (const n of [1, 2, 3]) updated.push(await materialize(input(`v${n}`, 'base-ns/s2', local(n))));
    const texts = parses.mock.calls.map(([text]) => text).filter((text) => text.includes('name: settings'));
    expect(texts.filter((t) => t.includes('"local '))).toHaveLength(3);
    expect(texts.filter((t) => !t.includes('"local '))).toHaveLength(2);
    for (const [i, u] of updated.entries()) {
      expect(u.files.get('settings.yaml')).toContain('  key-10: "value 2"\n');
      expect(u.files.get('settings.yaml')).toContain(`  key-5: "local ${i + 1}"\n`);
    }
  });

  it('refuses a local file whose path leaves the package, naming it', async () => {
    const fleet = fleetInput();
    const first = await packageUpdateMaterialize(fleet.input('web', 'base-ns/v1'));
    fleet.publishV2();
    const local = new Map(first.files).set('../escape.yaml', 'x: 1\n');
    await expect(packageUpdateMaterialize(fleet.input('web', 'base-ns/v2', local))).rejects.toThrow(
      /refusing to write "\.\.\/escape\.yaml": not a path inside the package/,
    );
  });

  it('names a local file it cannot read by the package, never by a scratch directory', async () => {
    const fleet = fleetInput();
    const first = await packageUpdateMaterialize(fleet.input('web', 'base-ns/v1'));
    fleet.publishV2();
    const local = new Map(first.files).set('bad.yaml', new Uint8Array([0x6b, 0x3a, 0x20, 0xfc, 0x0a]));
    const { value: error, temp } = await madeInTemp(() =>
      packageUpdateMaterialize(fleet.input('web', 'base-ns/v2', local)).then(
        () => new Error('no error'),
        (e: unknown) => e as Error,
      ),
    );
    expect(error.message).toMatch(/web\/bad\.yaml: not UTF-8 text/);
    expect(error.message).not.toContain(temp);
  });
});
