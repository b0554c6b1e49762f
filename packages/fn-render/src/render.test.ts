import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { PackageTree } from '@kdelta/kptfile-model';
import { renderDirectory, renderPackage, resultsYaml } from './index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kdelta-render-'));
  dirs.push(d);
  return d;
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(join(root, r)).isDirectory()) walk(r);
      else out[r] = readFileSync(join(root, r), 'utf8');
    }
  };
  walk('');
  return out;
}

/** A KRM function as a Node script: `body` gets the parsed ResourceList `rl` and may change it. */
function nodeFunction(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `#!/usr/bin/env node
import { readFileSync, appendFileSync } from 'node:fs';
const yaml = await import(${JSON.stringify(import.meta.resolve('yaml'))});
const rl = yaml.parse(readFileSync(0, 'utf8'));
${body}
process.stdout.write(yaml.stringify(rl));
`,
  );
  chmodSync(path, 0o755);
  return path;
}

const kptfile = (name: string, pipeline: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n${pipeline}`;

describe('renderDirectory with exec functions', () => {
  it('runs subpackages first, gives the root every resource with its path annotations, and writes the result', async () => {
    const root = tempDir();
    const fns = tempDir();
    const log = join(fns, 'log');
    const record = nodeFunction(
      fns,
      'record.mjs',
      `appendFileSync(${JSON.stringify(log)}, JSON.stringify({ items: rl.items.map((i) => [i.kind, i.metadata.name, i.metadata.annotations['config.kubernetes.io/path'], i.metadata.annotations['internal.config.kubernetes.io/package-path']]), config: rl.functionConfig ?? null }) + '\\n');
for (const i of rl.items) if (i.kind === 'ConfigMap') { i.data = { ...(i.data ?? {}), seen: (i.data?.seen ?? '') + (rl.functionConfig?.data?.tag ?? 'x') }; }`,
    );
    writeTree(root, {
      Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${record}\n      configMap:\n        tag: R\n`),
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top # the top map\ndata:\n  a: "1"\n',
      'sub/Kptfile': kptfile('sub', `pipeline:\n  mutators:\n    - exec: ${record}\n      configPath: fn-config.yaml\n`),
      'sub/fn-config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  tag: S\n',
      'sub/d.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # kept\n',
      'README.md': 'not a resource\n',
    });
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(true);
    const calls = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // the subpackage renders first, on its own resources, with its configPath as functionConfig
    expect(calls[0].items).toEqual([
      ['Kptfile', 'sub', 'Kptfile', 'sub'],
      ['Deployment', 'web', 'd.yaml', 'sub'],
      ['ConfigMap', 'conf', 'fn-config.yaml', 'sub'],
    ]);
    expect(calls[0].config.data).toEqual({ tag: 'S' });
    // then the root, on the subpackage's rendered resources and then its own (kpt's order); configMap as a ConfigMap
    expect(calls[1].items.map((i: string[]) => `${i[3]}:${i[2]}`)).toEqual([
      'sub:Kptfile',
      'sub:d.yaml',
      'sub:fn-config.yaml',
      '.:Kptfile',
      '.:cm.yaml',
    ]);
    expect(calls[1].config).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'function-input' }, data: { tag: 'R' } });
    const files = snapshot(root);
    // annotations taken off, both functions applied in order; the comment the function dropped is back
    expect(files['cm.yaml']).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top # the top map\ndata:\n  a: "1"\n  seen: R\n');
    expect(parse(files['sub/fn-config.yaml'] as string).data).toEqual({ tag: 'S', seen: 'SR' });
    // a resource the functions did not change keeps its bytes, comments included
    expect(files['sub/d.yaml']).toBe('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # kept\n');
    expect(files['README.md']).toBe('not a resource\n');
    expect(out.ok && out.results.map((r) => [r.package, r.field, r.exitCode, r.runtime])).toEqual([
      ['sub', 'pipeline.mutators[0]', 0, 'exec'],
      ['', 'pipeline.mutators[0]', 0, 'exec'],
    ]);
  });

  it('gives back the comments a function dropped from a resource it changed, field by field, as kpt does', async () => {
    const root = tempDir();
    const fns = tempDir();
    // the function parses and prints with a library that keeps no comments
    const fn = nodeFunction(
      fns,
      'fn.mjs',
      `for (const i of rl.items) if (i.kind === 'Deployment') { i.spec.replicas = 3; i.spec.template.spec.containers[0].image = 'nginx:2.0'; i.metadata.labels.extra = 'x'; i.spec.template.spec.containers[0].args.push('c'); }`,
    );
    const before = [
      '# head comment',
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: web # name comment',
      '  labels: # the labels',
      '    app: web',
      'spec:',
      '  # replicas comment above',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a kpt setter comment, literal text
      '  replicas: 1 # kpt-set: ${replicas}',
      '  template:',
      '    spec:',
      '      containers:',
      '      - name: main',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a kpt setter comment, literal text
      '        image: nginx:1.0 # kpt-set: ${image}',
      '        args:',
      '        - a # first arg',
      '        - b',
      '',
    ].join('\n');
    writeTree(root, { Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${fn}\n`), 'd.yaml': before });
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(true);
    // what kpt fn render (1.0.0-beta.56) writes for the same package and function
    expect(readFileSync(join(root, 'd.yaml'), 'utf8')).toBe(
      before
        .replace('    app: web\n', '    app: web\n    extra: x\n')
        .replace('replicas: 1', 'replicas: 3')
        .replace('nginx:1.0', 'nginx:2.0')
        .replace('        - b\n', '        - b\n        - c\n'),
    );
  });

  it('honours selectors and exclude: the function sees only the chosen resources, the others are kept', async () => {
    const root = tempDir();
    const fns = tempDir();
    const log = join(fns, 'log');
    const fn = nodeFunction(
      fns,
      'fn.mjs',
      `appendFileSync(${JSON.stringify(log)}, rl.items.map((i) => i.metadata.name).join(',') + '\\n');
for (const i of rl.items) { i.metadata.labels = { touched: 'yes' }; }`,
    );
    writeTree(root, {
      Kptfile: kptfile(
        'root',
        `pipeline:\n  mutators:\n    - exec: ${fn}\n      selectors:\n        - kind: ConfigMap\n        - name: web\n      exclude:\n        - labels:\n            keep: me\n`,
      ),
      'r.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels:\n    keep: me\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n',
    });
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(true);
    expect(readFileSync(log, 'utf8')).toBe('a,web\n');
    const docs = parseAllDocuments(readFileSync(join(root, 'r.yaml'), 'utf8')).map((d) => d.toJS());
    expect(docs.map((d) => [d.metadata.name, d.metadata.labels ?? null])).toEqual([
      ['a', { touched: 'yes' }],
      ['b', { keep: 'me' }],
      ['web', { touched: 'yes' }],
      ['svc', null],
    ]);
  });

  it('moves resources where a function changes their path annotation, writes new ones, deletes emptied files', async () => {
    const root = tempDir();
    const fns = tempDir();
    const fn = nodeFunction(
      fns,
      'fn.mjs',
      `rl.items = rl.items.filter((i) => i.metadata.name !== 'gone');
for (const i of rl.items) if (i.metadata.name === 'mover') { i.metadata.annotations['config.kubernetes.io/path'] = 'moved/here.yaml'; i.metadata.annotations['internal.config.kubernetes.io/path'] = 'moved/here.yaml'; }
rl.items.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Fresh', namespace: 'ns1' } });`,
    );
    writeTree(root, {
      Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${fn}\n`),
      'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n',
      'b.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mover\n',
    });
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(true);
    const files = snapshot(root);
    expect(Object.keys(files).sort()).toEqual(['Kptfile', 'moved/here.yaml', 'ns1/configmap_Fresh.yaml']);
    expect(files['moved/here.yaml']).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mover\n');
  });

  it('names a new resource without a path after its kind in lower case and its name as written (kpt: configmap_NoPath.yaml)', async () => {
    const root = tempDir();
    const fns = tempDir();
    const fn = nodeFunction(
      fns,
      'fn.mjs',
      `rl.items.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'NoPath' } }, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'Db', namespace: 'NS' } });`,
    );
    writeTree(root, { Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${fn}\n`) });
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(true);
    expect(Object.keys(snapshot(root)).sort()).toEqual(['Kptfile', 'NS/secret_Db.yaml', 'configmap_NoPath.yaml']);
  });

  it('a function that puts a resource outside its package fails, named, with its results; nothing is written', async () => {
    const root = tempDir();
    const fns = tempDir();
    const fn = nodeFunction(
      fns,
      'up.mjs',
      `for (const i of rl.items) if (i.metadata.name === 'b') { i.metadata.annotations['config.kubernetes.io/path'] = '../up.yaml'; i.metadata.annotations['internal.config.kubernetes.io/path'] = '../up.yaml'; }
rl.results = [{ message: 'moved b', severity: 'info' }];`,
    );
    const files = {
      Kptfile: kptfile('root', ''),
      'sub/Kptfile': kptfile('sub', `pipeline:\n  mutators:\n    - exec: ${fn}\n`),
      'sub/b.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n',
    };
    writeTree(root, files);
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.function).toBe(fn);
    expect(out.error.package).toBe('sub');
    expect(out.error.message).toContain('sub/Kptfile: pipeline.mutators[0]: function');
    expect(out.error.message).toContain('function must not modify resources outside of package: ConfigMap "b" has path "../up.yaml"');
    expect(out.results.map((r) => [r.package, r.exitCode, r.results.map((x) => x.message)])).toEqual([['sub', 1, ['moved b']]]);
    expect(snapshot(root)).toEqual(files);
  });

  it('a function that removes the Kptfile fails once, and is listed once in the results', async () => {
    const root = tempDir();
    const fns = tempDir();
    const fn = nodeFunction(fns, 'drop.mjs', `rl.items = rl.items.filter((i) => i.kind !== 'Kptfile');`);
    const files = {
      Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${fn}\n`),
      'c.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    };
    writeTree(root, files);
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.message).toContain('it removed the Kptfile of the package');
    expect(out.results.map((r) => [r.field, r.exitCode])).toEqual([['pipeline.mutators[0]', 1]]);
    expect(snapshot(root)).toEqual(files);
  });

  it('a function that moves a resource out of the root package fails, as in kpt, and nothing is written', async () => {
    const root = tempDir();
    const fns = tempDir();
    const fn = nodeFunction(
      fns,
      'escape.mjs',
      `for (const i of rl.items) if (i.kind === 'ConfigMap') { i.metadata.annotations['config.kubernetes.io/path'] = '../escape.yaml'; i.metadata.annotations['internal.config.kubernetes.io/path'] = '../escape.yaml'; }`,
    );
    const files = {
      Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${fn}\n`),
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n',
    };
    writeTree(root, files);
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.function).toBe(fn);
    expect(out.error.message).toContain('function must not modify resources outside of package: ConfigMap "app" has path "../escape.yaml"');
    expect(out.results.map((r) => r.exitCode)).toEqual([1]);
    expect(snapshot(root)).toEqual(files);
    expect(readdirSync(dirname(root)).filter((f) => f === 'escape.yaml')).toEqual([]);
  });

  it('a failing function stops the render with its results and leaves every file as it was', async () => {
    const root = tempDir();
    const fns = tempDir();
    const good = nodeFunction(fns, 'good.mjs', `for (const i of rl.items) i.metadata.labels = { ok: 'yes' };`);
    const bad = nodeFunction(
      fns,
      'bad.mjs',
      `rl.results = [{ message: 'replicas must be at least 2', severity: 'error', resourceRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } }];
process.stdout.write(yaml.stringify(rl)); process.stderr.write('validation failed\\n'); process.exit(1);`,
    );
    const files = {
      Kptfile: kptfile('root', `pipeline:\n  mutators:\n    - exec: ${good}\n  validators:\n    - exec: ${bad}\n`),
      'd.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n',
      'sub/Kptfile': kptfile('sub', `pipeline:\n  mutators:\n    - exec: ${good}\n`),
      'sub/c.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    };
    writeTree(root, files);
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.function).toBe(bad);
    expect(out.error.message).toContain('pipeline.validators[0]');
    expect(out.error.message).toContain('replicas must be at least 2');
    expect(out.results.map((r) => [r.package, r.field, r.exitCode])).toEqual([
      ['sub', 'pipeline.mutators[0]', 0],
      ['', 'pipeline.mutators[0]', 0],
      ['', 'pipeline.validators[0]', 1],
    ]);
    expect(out.results[2]?.stderr).toBe('validation failed\n');
    expect(resultsYaml(out.results)).toContain('replicas must be at least 2');
    expect(snapshot(root)).toEqual(files);
  });

  it('an exec path that does not exist is a failure naming it; the package is untouched', async () => {
    const root = tempDir();
    const files = {
      Kptfile: kptfile('root', 'pipeline:\n  mutators:\n    - exec: ./no-such-fn\n'),
      'c.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    };
    writeTree(root, files);
    const out = await renderDirectory(root, { cwd: root, allowExec: true });
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.message).toMatch(/"\.\/no-such-fn" failed: .*no-such-fn: no such executable/);
    expect(snapshot(root)).toEqual(files);
  });

  it('without allowExec an exec function anywhere in the tree is refused before any function runs', async () => {
    const root = tempDir();
    const fns = tempDir();
    const log = join(fns, 'ran');
    const fn = nodeFunction(fns, 'mark.mjs', `appendFileSync(${JSON.stringify(log)}, 'ran\\n');`);
    const files = {
      // the subpackage's function would run first: it must not run either
      Kptfile: kptfile(
        'root',
        `pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap:\n        a: b\n  validators:\n    - exec: ${fn}\n`,
      ),
      'c.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
      'sub/Kptfile': kptfile('sub', `pipeline:\n  mutators:\n    - exec: ${fn}\n`),
    };
    writeTree(root, files);
    const out = await renderDirectory(root, { cwd: root, runtime: 'builtin' });
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.error).toMatchObject({ function: fn, field: 'pipeline.validators[0]', package: '' });
      expect(out.error.message).toMatch(
        /\/Kptfile: pipeline\.validators\[0\]: function ".*mark\.mjs" is an exec function .*pass --allow-exec/,
      );
      expect(out.results).toEqual([]);
    }
    expect(existsSync(log)).toBe(false);
    expect(snapshot(root)).toEqual(files);
    // allowed, the same tree renders and both functions run
    const allowed = await renderDirectory(root, { cwd: root, runtime: 'builtin', allowExec: true });
    expect(allowed.ok).toBe(true);
    expect(readFileSync(log, 'utf8')).toBe('ran\nran\n');
  });

  it('a configPath that is not in the package is an error naming the Kptfile field', async () => {
    const tree = PackageTree.fromFiles([
      ['Kptfile', kptfile('root', 'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configPath: missing.yaml\n')],
    ]);
    const out = await renderPackage(tree, { runtime: 'builtin' });
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.message).toBe('Kptfile: pipeline.mutators[0].configPath: "missing.yaml" is not a file of the package');
  });
});

describe('renderPackage runtimes', () => {
  const pkg = (image: string) =>
    PackageTree.fromFiles([
      ['Kptfile', kptfile('root', `pipeline:\n  mutators:\n    - image: ${image}\n      configMap:\n        env: prod\n`)],
      ['c.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n'],
    ]);

  it('runs an image through the container runtime with no network, read-only, the image as written', async () => {
    const fns = tempDir();
    const argsLog = join(fns, 'args');
    const runtime = nodeFunction(
      fns,
      'fake-docker.mjs',
      `appendFileSync(${JSON.stringify(argsLog)}, JSON.stringify(process.argv.slice(2)));
for (const i of rl.items) i.metadata.labels = { via: 'container' };`,
    );
    const tree = pkg('gcr.io/kpt-fn/set-labels:v0.2.0');
    const out = await renderPackage(tree, { env: { ...process.env, KDELTA_CONTAINER_RUNTIME: runtime } });
    expect(out.ok).toBe(true);
    expect(JSON.parse(readFileSync(argsLog, 'utf8'))).toEqual([
      'run',
      '--rm',
      '-i',
      '--network',
      'none',
      '--read-only',
      '--user',
      'nobody',
      '--security-opt',
      'no-new-privileges',
      'gcr.io/kpt-fn/set-labels:v0.2.0',
    ]);
    if (!out.ok) return;
    expect(out.results[0]?.runtime).toBe('container');
    expect(parse(out.tree.text('c.yaml') as string).metadata.labels).toEqual({ via: 'container' });
    // the input tree is untouched
    expect(tree.text('c.yaml')).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n');
  });

  it('uses the built-in when no container runtime answers, or when asked', async () => {
    for (const options of [{ containerRuntime: null }, { runtime: 'builtin' as const, containerRuntime: '/nonexistent/docker' }]) {
      const out = await renderPackage(pkg('ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.4'), options);
      expect(out.ok).toBe(true);
      if (!out.ok) continue;
      expect(out.results[0]?.runtime).toBe('builtin');
      expect(parse(out.tree.text('c.yaml') as string).metadata.labels).toEqual({ env: 'prod' });
    }
  });

  it('an image named without a registry is taken from the catalog, as kpt reads it: gcr.io/kpt-fn/<name>', async () => {
    const builtin = await renderPackage(pkg('set-labels:v0.2'), { containerRuntime: null });
    expect(builtin.ok).toBe(true);
    if (builtin.ok) expect(parse(builtin.tree.text('c.yaml') as string).metadata.labels).toEqual({ env: 'prod' });
    const fns = tempDir();
    const argsLog = join(fns, 'args');
    const runtime = nodeFunction(
      fns,
      'fake-docker.mjs',
      `appendFileSync(${JSON.stringify(argsLog)}, JSON.stringify(process.argv.slice(2)));`,
    );
    const container = await renderPackage(pkg('set-labels:v0.2'), { env: { ...process.env, KDELTA_CONTAINER_RUNTIME: runtime } });
    expect(container.ok).toBe(true);
    expect(JSON.parse(readFileSync(argsLog, 'utf8')).at(-1)).toBe('gcr.io/kpt-fn/set-labels:v0.2');
  });

  it('an image with no runtime and no built-in is an error naming the function', async () => {
    const out = await renderPackage(pkg('gcr.io/kpt-fn/starlark:v0.4'), { containerRuntime: null });
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.error.function).toBe('gcr.io/kpt-fn/starlark:v0.4');
      expect(out.error.message).toContain(
        '"gcr.io/kpt-fn/starlark:v0.4" cannot run: no container runtime (docker or podman) answers and kdelta has no built-in for it',
      );
    }
    const only = await renderPackage(pkg('gcr.io/kpt-fn/set-labels:v0.2'), { runtime: 'exec' });
    expect(only.ok).toBe(false);
    if (!only.ok) expect(only.error.message).toContain('--runtime exec runs only exec: functions');
    const forced = await renderPackage(pkg('gcr.io/kpt-fn/set-labels:v0.2'), { runtime: 'container', containerRuntime: null });
    expect(forced.ok).toBe(false);
    if (!forced.ok) expect(forced.error.message).toContain('needs a container runtime');
  });

  it('a package without a Kptfile is not rendered', async () => {
    const out = await renderPackage(PackageTree.fromFiles([['c.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n']]));
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.message).toContain('not a kpt package (no Kptfile)');
  });
});

describe('container images the user allows', () => {
  /**
   * A `docker` first on PATH that answers `info` (so it is the runtime found) and records every
   * other invocation, then acts as a function that changes nothing: the log is what ran.
   */
  function fakeDocker(): { env: Record<string, string | undefined>; runs: () => string[] } {
    const bin = tempDir();
    const log = join(bin, 'runs.log');
    writeFileSync(join(bin, 'docker'), `#!/bin/sh\n[ "$1" = info ] && exit 0\nprintf '%s\\n' "$*" >> '${log}'\nexec cat\n`, {
      mode: 0o755,
    });
    const env: Record<string, string | undefined> = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    delete env.KDELTA_CONTAINER_RUNTIME;
    return { env, runs: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
  }
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n';
  const pipeline = (list: string, ...images: string[]) =>
    `pipeline:\n  ${list}:\n${images.map((i) => `    - image: ${i}\n      configMap:\n        team: a\n`).join('')}`;

  it('an image from a registry the user did not allow fails the render before any container runs, naming the Kptfile, the field, the image and the setting', async () => {
    // the subpackage's catalogue function runs first: it must not run either
    const tree = PackageTree.fromFiles([
      ['Kptfile', kptfile('root', pipeline('validators', 'gcr.io/kpt-fn/kubeval:v0.3', 'evil.example.com/tracker:latest'))],
      ['c.yaml', cm],
      ['sub/Kptfile', kptfile('sub', pipeline('mutators', 'gcr.io/kpt-fn/set-labels:v0.2'))],
    ]);
    for (const runtime of ['auto', 'container'] as const) {
      const docker = fakeDocker();
      const out = await renderPackage(tree, { env: docker.env, runtime });
      expect(out.ok).toBe(false);
      if (out.ok) continue;
      expect(out.error).toMatchObject({
        code: 'image-not-allowed',
        package: '',
        function: 'evil.example.com/tracker:latest',
        field: 'pipeline.validators[1]',
      });
      expect(out.error.message).toBe(
        'Kptfile: pipeline.validators[1]: function "evil.example.com/tracker:latest" would run the container image evil.example.com/tracker:latest, which is not allowed (the allowed images are gcr.io/kpt-fn/, ghcr.io/kptdev/krm-functions-catalog/): allow it with --allow-image evil.example.com/tracker (the Action\'s input allowed-images)',
      );
      expect(out.results).toEqual([]);
      expect(docker.runs()).toEqual([]);
    }
  });

  const allowedCases: readonly [what: string, images: string[], allowedImages: readonly string[] | undefined][] = [
    ["kpt's catalogues, by default", ['gcr.io/kpt-fn/set-labels:v0.2', 'ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5'], undefined],
    ['a catalogue short name, as gcr.io/kpt-fn/<name>', ['set-labels:v0.2'], undefined],
    ['an image the user allowed by its repository', ['evil.example.com/tracker:latest'], ['evil.example.com/tracker']],
    ['any image with *', ['evil.example.com/tracker:latest', 'gcr.io/kpt-fn/set-labels:v0.2'], ['*']],
  ];
  it.each(allowedCases)('%s runs in the container runtime', async (_what, images, allowedImages) => {
    const docker = fakeDocker();
    const tree = PackageTree.fromFiles([
      ['Kptfile', kptfile('root', pipeline('mutators', ...images))],
      ['c.yaml', cm],
    ]);
    const out = await renderPackage(tree, { env: docker.env, ...(allowedImages ? { allowedImages } : {}) });
    expect(out.ok).toBe(true);
    expect(docker.runs().map((line) => line.split(' ').at(-1))).toEqual(images.map((i) => (i.includes('/') ? i : `gcr.io/kpt-fn/${i}`)));
  });

  it('with no image allowed, a catalogue function runs built-in under auto, and is refused under --runtime container', async () => {
    const tree = PackageTree.fromFiles([
      ['Kptfile', kptfile('root', pipeline('mutators', 'gcr.io/kpt-fn/set-labels:v0.2'))],
      ['c.yaml', cm],
    ]);
    const docker = fakeDocker();
    const auto = await renderPackage(tree, { env: docker.env, allowedImages: [] });
    expect(auto.ok).toBe(true);
    if (auto.ok) {
      expect(auto.results.map((r) => r.runtime)).toEqual(['builtin']);
      expect(parse(auto.tree.text('c.yaml') as string).metadata.labels).toEqual({ team: 'a' });
    }
    const forced = await renderPackage(tree, { env: docker.env, allowedImages: [], runtime: 'container' });
    expect(forced.ok).toBe(false);
    if (!forced.ok) {
      expect(forced.error.code).toBe('image-not-allowed');
      expect(forced.error.message).toContain('which is not allowed (no image is allowed to run here)');
    }
    expect(docker.runs()).toEqual([]);
  });
});

describe('file modes', () => {
  it('a file the render rewrites keeps its executable bit; one it does not touch keeps its mode and bytes', async () => {
    const root = tempDir();
    writeTree(root, {
      Kptfile:
        'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2.0\n      configMap:\n        app: web\n',
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n',
      'fn/run.sh': '#!/bin/sh\ncat\n',
    });
    chmodSync(join(root, 'cm.yaml'), 0o755);
    chmodSync(join(root, 'fn/run.sh'), 0o755);
    const out = await renderDirectory(root, { cwd: root, runtime: 'builtin' });
    expect(out.ok).toBe(true);
    expect(readFileSync(join(root, 'cm.yaml'), 'utf8')).toContain('app: web');
    expect(statSync(join(root, 'cm.yaml')).mode & 0o111).not.toBe(0);
    expect(statSync(join(root, 'fn/run.sh')).mode & 0o111).not.toBe(0);
  });
});
