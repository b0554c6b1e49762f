// docs/differences-from-kpt.md, each difference replayed on a small package in real git repositories:
// kdelta's side always; kpt's side too when the installed kpt is on PATH (kpt is never a
// dependency), so that a kpt release that changes its behaviour shows here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { cli } from './__fixtures__/runner.js';

const kptAvailable = spawnSync('kpt', ['version'], { encoding: 'utf8' }).status === 0;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-kptdiff-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, stdio: 'ignore' });
}

const KPTFILE = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: up\n';
type Files = Record<string, string>;

interface Outcome {
  /** The package's files after the step, by tool. */
  kdelta: Files;
  kpt: Files | undefined;
}

/** Every file below `dir`, by its relative path. */
function filesOf(dir: string): Files {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
  );
}

/**
 * Upstream at v1 then v2, fetched at v1 by both tools (with `edit` applied to each copy) and then
 * updated to v2; `stop: 'get'` stops after the get.
 */
async function replay(
  name: string,
  v1: Files,
  v2: Files,
  options: { edit?: (dir: string) => void; stop?: 'get'; kptFails?: RegExp } = {},
): Promise<Outcome> {
  const up = join(root, name, 'upstream');
  mkdirSync(up, { recursive: true });
  git(up, 'init', '--quiet', '--initial-branch=main');
  for (const [tag, files] of [['v1', v1] as const, ['v2', v2] as const]) {
    for (const f of readdirSync(up).filter((f) => f !== '.git')) rmSync(join(up, f), { recursive: true });
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(dirname(join(up, f)), { recursive: true });
      writeFileSync(join(up, f), text);
    }
    git(up, 'add', '-A');
    git(up, 'commit', '--quiet', '--allow-empty', '-m', tag);
    git(up, 'tag', tag);
  }
  const ws = join(root, name, 'ws');
  mkdirSync(ws);
  git(ws, 'init', '--quiet');
  const env = { ...process.env, KDELTA_CACHE_DIR: join(root, name, 'kd-cache'), KPT_CACHE_DIR: join(root, name, 'kpt-cache') };
  const kdelta = async (...args: string[]) => {
    const r = await cli(args, ws, env);
    expect(r.code, r.stderr).toBe(0);
  };
  await kdelta('pkg', 'get', `${up}.git@v1`, 'viaKdelta');
  if (kptAvailable) execFileSync('kpt', ['pkg', 'get', `${up}.git/@v1`, 'viaKpt'], { cwd: ws, env, stdio: 'ignore' });
  const outcome = (): Outcome => ({ kdelta: filesOf(join(ws, 'viaKdelta')), kpt: kptAvailable ? filesOf(join(ws, 'viaKpt')) : undefined });
  if (options.stop === 'get') return outcome();
  for (const d of kptAvailable ? ['viaKdelta', 'viaKpt'] : ['viaKdelta']) options.edit?.(join(ws, d));
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '-m', 'get');
  await kdelta('pkg', 'update', 'viaKdelta@v2', '--strategy=resource-merge');
  if (kptAvailable) {
    const r = spawnSync('kpt', ['pkg', 'update', 'viaKpt@v2', '--strategy=resource-merge'], { cwd: ws, env, encoding: 'utf8' });
    // A failing kpt leaves its copy as it was after the get.
    if (options.kptFails) expect(`${r.stdout}${r.stderr}`).toMatch(options.kptFails);
    expect(r.status !== 0, r.stderr).toBe(options.kptFails !== undefined);
  }
  return outcome();
}

const objects = (files: Files, file: string) => parseAllDocuments(files[file] ?? '').map((d) => d.toJS());
const configMaps = (files: Files) =>
  Object.keys(files)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => objects(files, f).map((o) => ({ file: f, data: o.data })));

describe('docs/differences-from-kpt.md', () => {
  it('a type fix upstream made (local-config true → "true") is taken; kpt keeps the boolean', async () => {
    const cm = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setters\n  annotations:\n    config.kubernetes.io/local-config: ${v}\ndata:\n  a: b\n`;
    const r = await replay(
      'type-fix',
      { Kptfile: KPTFILE, 'setters.yaml': cm('true') },
      { Kptfile: KPTFILE, 'setters.yaml': cm('"true"') },
    );
    const value = (files: Files) => objects(files, 'setters.yaml')[0].metadata.annotations['config.kubernetes.io/local-config'];
    expect(value(r.kdelta)).toBe('true');
    if (r.kpt) expect(value(r.kpt)).toBe(true);
  });

  it("a Kptfile's metadata.namespace is kept on get; kpt drops it", async () => {
    const kptfile = `${KPTFILE}  namespace: team-a\n`;
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n';
    const r = await replay('namespace', { Kptfile: kptfile, 'cm.yaml': cm }, { Kptfile: kptfile, 'cm.yaml': cm }, { stop: 'get' });
    expect(parse(r.kdelta.Kptfile!).metadata.namespace).toBe('team-a');
    if (r.kpt) expect(parse(r.kpt.Kptfile!).metadata.namespace).toBeUndefined();
  });

  it("upstream renaming a function's image leaves no empty function; kpt leaves `- {}`", async () => {
    const fn = (image: string) => `${KPTFILE}pipeline:\n  mutators:\n    - image: ${image}\n      configMap:\n        app: web\n`;
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n';
    const renamed = 'ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2';
    const r = await replay(
      'function-image',
      { Kptfile: fn('gcr.io/kpt-fn/set-labels:v0.1'), 'cm.yaml': cm },
      { Kptfile: fn(renamed), 'cm.yaml': cm },
    );
    expect(parse(r.kdelta.Kptfile!).pipeline.mutators).toEqual([{ image: renamed, configMap: { app: 'web' } }]);
    if (r.kpt) expect(parse(r.kpt.Kptfile!).pipeline.mutators).toEqual([{}, { image: renamed, configMap: { app: 'web' } }]);
  });

  it('a resource upstream moved to another file, edited locally, is written once; kpt writes it twice', async () => {
    const cm = (a: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: ${a}\n`;
    const r = await replay(
      'renamed-file',
      { Kptfile: KPTFILE, 'cm.yaml': cm('b') },
      { Kptfile: KPTFILE, 'configmap.yaml': cm('c') },
      {
        edit: (dir) =>
          writeFileSync(join(dir, 'cm.yaml'), readFileSync(join(dir, 'cm.yaml'), 'utf8').replace('  a: b\n', '  a: b\n  local: x\n')),
      },
    );
    expect(configMaps(r.kdelta)).toEqual([{ file: 'configmap.yaml', data: { a: 'c', local: 'x' } }]);
    if (r.kpt)
      expect(configMaps(r.kpt)).toEqual([
        { file: 'cm.yaml', data: { a: 'b', local: 'x' } },
        { file: 'configmap.yaml', data: { a: 'c' } },
      ]);
  });

  it("a file upstream split in two, with no local edit, gives upstream's files exactly, as kpt does", async () => {
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\n`;
    const r = await replay(
      'split-file',
      { Kptfile: KPTFILE, 'all.yaml': `${cm('a')}---\n${cm('b')}` },
      { Kptfile: KPTFILE, 'a.yaml': cm('a'), 'b.yaml': cm('b') },
    );
    const layout = [
      { file: 'a.yaml', data: { k: 'v' } },
      { file: 'b.yaml', data: { k: 'v' } },
    ];
    expect(configMaps(r.kdelta)).toEqual(layout);
    if (r.kpt) expect(configMaps(r.kpt)).toEqual(layout);
  });

  it("flow-style metadata keeps its identity through a local namespace change; kpt loses upstream's change", async () => {
    const cm = (k: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {annotations: {}, name: c, namespace: ns}\ndata:\n  k: ${k}\n`;
    const r = await replay(
      'flow-metadata',
      { Kptfile: KPTFILE, 'cm.yaml': cm('v1') },
      { Kptfile: KPTFILE, 'cm.yaml': cm('v2') },
      {
        edit: (dir) =>
          writeFileSync(join(dir, 'cm.yaml'), readFileSync(join(dir, 'cm.yaml'), 'utf8').replace('namespace: ns', 'namespace: ns-local')),
      },
    );
    expect(configMaps(r.kdelta)).toEqual([{ file: 'cm.yaml', data: { k: 'v2' } }]);
    if (r.kpt) expect(configMaps(r.kpt)).toEqual([{ file: 'cm.yaml', data: { k: 'v1' } }]);
  });

  it("upstream's null fields are kept as written (merge(o, u, o) = u); kpt removes every null", async () => {
    const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  creationTimestamp: null\ndata:\n  k: ${v}\n`;
    const r = await replay('nulls', { Kptfile: KPTFILE, 'cm.yaml': cm('v1') }, { Kptfile: KPTFILE, 'cm.yaml': cm('v2') });
    const [merged] = objects(r.kdelta, 'cm.yaml');
    expect(merged.data).toEqual({ k: 'v2' });
    expect(merged.metadata).toHaveProperty('creationTimestamp', null);
    if (r.kpt) {
      const [object] = objects(r.kpt, 'cm.yaml');
      expect(object.data).toEqual({ k: 'v2' });
      expect(object.metadata).not.toHaveProperty('creationTimestamp');
    }
  });

  it('a map upstream deleted goes; kpt leaves its emptied maps behind', async () => {
    const widget = (spec: string) => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n${spec}`;
    const r = await replay(
      'emptied-maps',
      { Kptfile: KPTFILE, 'w.yaml': widget('  size: 1\n  extra:\n    a: null\n    b:\n      c: 1\n') },
      { Kptfile: KPTFILE, 'w.yaml': widget('  size: 1\n') },
    );
    expect(objects(r.kdelta, 'w.yaml')[0].spec).toEqual({ size: 1 });
    if (r.kpt) expect(objects(r.kpt, 'w.yaml')[0].spec).toEqual({ size: 1, extra: { b: {} } });
  });

  it("a field upstream changed from a map to a scalar takes upstream's value; kpt fails", async () => {
    const pvs = (pkg: string) =>
      `apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: amf\nspec:\n  upstream:\n    package:${pkg}\n`;
    const r = await replay(
      'kind-change',
      { Kptfile: KPTFILE, 'pvs.yaml': pvs('\n      repo: catalog\n      name: amf') },
      { Kptfile: KPTFILE, 'pvs.yaml': pvs(' amf') },
      { kptFails: /wrong node kind: expected MappingNode but got ScalarNode/ },
    );
    expect(objects(r.kdelta, 'pvs.yaml')[0].spec.upstream).toEqual({ package: 'amf' });
    if (r.kpt) expect(objects(r.kpt, 'pvs.yaml')[0].spec.upstream.package).toEqual({ repo: 'catalog', name: 'amf' });
  });

  it('a YAML file .krmignore names is updated as a plain file; kpt keeps it as it was at origin', async () => {
    const results = (k: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: results\ndata:\n  k: ${k}\n`;
    const release = (k: string): Files => ({
      Kptfile: KPTFILE,
      '.krmignore': '.expected\n',
      'cm.yaml': results(k).replace('results', 'c'),
      '.expected/results.yaml': results(k),
      '.expected/notes.txt': `notes ${k}\n`,
    });
    const r = await replay('krmignore', { ...release('v1'), '.expected/gone.yaml': 'skip: [Kptfile]\n' }, release('v2'));
    const expected = (files: Files) => Object.fromEntries(Object.entries(files).filter(([f]) => f.startsWith('.expected/')));
    // no local edit: kdelta gives upstream's files, the deletion too
    expect(expected(r.kdelta)).toEqual({ '.expected/notes.txt': 'notes v2\n', '.expected/results.yaml': results('v2') });
    if (r.kpt) {
      // kpt updates the text file but neither merges nor replaces the YAML files
      expect(expected(r.kpt)).toEqual({
        '.expected/gone.yaml': 'skip: [Kptfile]\n',
        '.expected/notes.txt': 'notes v2\n',
        '.expected/results.yaml': results('v1'),
      });
      expect(configMaps(r.kpt).find((c) => c.file === 'cm.yaml')?.data).toEqual({ k: 'v2' });
    }
  });
  it("a resource kept against upstream's deletion stays where local has it; kpt sorts it by its local index among upstream's", async () => {
    const cm = (name: string, v = 'v1') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: ${v}\n`;
    const stream = (...docs: string[]) => docs.join('---\n');
    // upstream deletes a, b and c; local changed c, so both tools keep it
    const r = await replay(
      'kept-in-place',
      { Kptfile: KPTFILE, 'all.yaml': stream(cm('a'), cm('b'), cm('c'), cm('d'), cm('e')) },
      { Kptfile: KPTFILE, 'all.yaml': stream(cm('d'), cm('e')) },
      {
        edit: (dir) =>
          writeFileSync(
            join(dir, 'all.yaml'),
            readFileSync(join(dir, 'all.yaml'), 'utf8').replace(
              'k: v1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /d',
              'k: mine\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /d',
            ),
          ),
      },
    );
    const order = (files: Files) => objects(files, 'all.yaml').map((o) => `${o.metadata.name}=${o.data.k}`);
    expect(order(r.kdelta)).toEqual(['c=mine', 'd=v1', 'e=v1']);
    if (r.kpt) expect(order(r.kpt)).toEqual(['d=v1', 'e=v1', 'c=mine']);
  });
});
