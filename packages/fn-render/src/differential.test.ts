/**
 * `kdelta fn render` (the built CLI) against `kpt fn render` on copies of the same package: the
 * same files must come out holding the same resources. Exec functions need only kpt; image
 * functions need kpt and a container engine that answers (`docker info`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const CLI = fileURLToPath(new URL('../../cli/bin/kdelta.js', import.meta.url));
const hasCli = existsSync(fileURLToPath(new URL('../../cli/dist/main.js', import.meta.url)));
const hasKpt = spawnSync('kpt', ['version'], { stdio: 'ignore' }).status === 0;
// asked only when kpt is there: without it the engine is not needed, and `docker info` can hang
const hasDockerEngine = hasKpt && spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 15_000 }).status === 0;

/** Why a test cannot run here (what is missing), else undefined: the test is reported skipped with it. */
function missing(needs: { kpt?: boolean; docker?: boolean }): string | undefined {
  const absent = [
    ...(hasCli ? [] : ['the built CLI (run pnpm build)']),
    ...(needs.kpt && !hasKpt ? ['kpt'] : []),
    ...(needs.docker && !hasDockerEngine ? ['a docker engine that answers `docker info`'] : []),
  ];
  return absent.length > 0 ? `skipped: needs ${absent.join(' and ')}` : undefined;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'kdelta-diff-'));
  dirs.push(d);
  return d;
};

function writeTree(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

/** Every YAML file as its resources (plain data): what must agree. */
function resources(root: string): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(join(root, r)).isDirectory()) walk(r);
      else if (/\.ya?ml$|^Kptfile$/.test(name)) out[r] = parseAllDocuments(readFileSync(join(root, r), 'utf8')).map((d) => d.toJS());
    }
  };
  walk('');
  return out;
}

function kdelta(args: string[], cwd: string): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

const kptfile = (name: string, pipeline: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n${pipeline}`;

describe('kdelta fn render', () => {
  it('prints each function and its results, writes results.yaml, and fails naming the function', async ({ skip }) => {
    skip(missing({}) !== undefined, missing({}));
    const root = tempDir();
    writeTree(root, {
      'pkg/Kptfile': kptfile(
        'pkg',
        'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap:\n        app: web\n',
      ),
      'pkg/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    });
    const ok = kdelta(['fn', 'render', 'pkg', '--runtime', 'builtin', '--results-dir', 'out'], root);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('Package "pkg":\n[PASS] "gcr.io/kpt-fn/set-labels:v0.2" (built-in) in ');
    expect(ok.stdout).toContain('Successfully executed 1 function(s) in 1 package(s); 2 file(s) changed.');
    expect(readFileSync(join(root, 'pkg/cm.yaml'), 'utf8')).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    app: web\n',
    );
    expect(readFileSync(join(root, 'out/results.yaml'), 'utf8')).toContain('kind: FunctionResultList');

    writeTree(root, { 'bad/Kptfile': kptfile('bad', 'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/starlark:v0.4\n') });
    const bad = kdelta(['fn', 'render', 'bad', '--runtime', 'builtin'], root);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('function "gcr.io/kpt-fn/starlark:v0.4" has no built-in implementation');
    expect(bad.stderr).toContain('Nothing written');
  });

  it('refuses an exec function without --allow-exec before anything runs, as kpt does', async ({ skip }) => {
    skip(missing({}) !== undefined, missing({}));
    const root = tempDir();
    const fn = join(root, 'fn.sh');
    const files = {
      'pkg/Kptfile': kptfile(
        'pkg',
        `pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap:\n        app: web\n    - exec: ${fn}\n`,
      ),
      'pkg/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    };
    writeTree(root, files);
    writeFileSync(fn, `#!/bin/sh\ntouch ${join(root, 'ran')}\ncat\n`);
    chmodSync(fn, 0o755);
    const refused = kdelta(['fn', 'render', 'pkg', '--runtime', 'builtin'], root);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`pkg/Kptfile: pipeline.mutators[1]: function "${fn}" is an exec function`);
    expect(refused.stderr).toContain('pass --allow-exec');
    expect(refused.stdout).not.toContain('[PASS]');
    expect(existsSync(join(root, 'ran'))).toBe(false);
    expect(readFileSync(join(root, 'pkg/cm.yaml'), 'utf8')).toBe(files['pkg/cm.yaml']);
    if (hasKpt) {
      // kpt's own refusal, for comparison: it too runs nothing
      const viaKpt = spawnSync('kpt', ['fn', 'render', join(root, 'pkg')], { encoding: 'utf8' });
      expect(viaKpt.status).toBe(1);
      expect(viaKpt.stderr).toContain('must run with `--allow-exec` option to allow running function binaries');
      expect(existsSync(join(root, 'ran'))).toBe(false);
    }
    const allowed = kdelta(['fn', 'render', 'pkg', '--runtime', 'builtin', '--allow-exec'], root);
    expect(allowed.status, allowed.stderr).toBe(0);
    expect(existsSync(join(root, 'ran'))).toBe(true);
  });
});

describe('differential: kpt fn render and kdelta fn render give the same resources', () => {
  it('with exec functions, subpackages, selectors and moved resources', async ({ skip }) => {
    skip(missing({ kpt: true }) !== undefined, missing({ kpt: true }));
    const fns = tempDir();
    const fn = join(fns, 'fn.mjs');
    writeFileSync(
      fn,
      `#!/usr/bin/env node
import { readFileSync } from 'node:fs';
const yaml = await import(${JSON.stringify(import.meta.resolve('yaml'))});
const rl = yaml.parse(readFileSync(0, 'utf8'));
const tag = rl.functionConfig?.data?.tag ?? 'none';
for (const i of rl.items) {
  if (i.kind === 'Kptfile') continue;
  i.metadata.labels = { ...(i.metadata.labels ?? {}), [tag]: 'yes' };
  if (i.metadata.name === 'mover') { i.metadata.annotations['config.kubernetes.io/path'] = 'moved.yaml'; i.metadata.annotations['internal.config.kubernetes.io/path'] = 'moved.yaml'; }
}
if (tag === 'root') rl.items.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Made', namespace: 'team' } });
process.stdout.write(yaml.stringify(rl));
`,
    );
    chmodSync(fn, 0o755);
    const files = {
      Kptfile: kptfile(
        'root',
        `pipeline:\n  mutators:\n    - exec: ${fn}\n      configMap:\n        tag: root\n      selectors:\n        - kind: ConfigMap\n`,
      ),
      'cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # a comment\ndata:\n  k: v\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mover\n',
      'svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n',
      'sub/Kptfile': kptfile('sub', `pipeline:\n  mutators:\n    - exec: ${fn}\n      configPath: conf.yaml\n`),
      'sub/conf.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  tag: sub\n',
      'sub/d.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n',
    };
    const viaKpt = tempDir();
    const viaKdelta = tempDir();
    writeTree(viaKpt, files);
    writeTree(viaKdelta, files);
    execFileSync('kpt', ['fn', 'render', viaKpt, '--allow-exec'], { stdio: 'pipe' });
    const r = kdelta(['fn', 'render', viaKdelta, '--allow-exec'], viaKdelta);
    expect(r.stderr).toBe('');
    expect(resources(viaKdelta)).toEqual(resources(viaKpt));
    // and the render did something
    expect(resources(viaKdelta)['moved.yaml']).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mover', labels: { root: 'yes' } } },
    ]);
    expect(resources(viaKdelta)['team/configmap_Made.yaml']).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Made', namespace: 'team' } },
    ]);
    expect(resources(viaKdelta)['sub/d.yaml']).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', labels: { sub: 'yes' } } },
    ]);
  });

  it('with the catalog images, kdelta using its built-ins', async ({ skip }) => {
    skip(missing({ kpt: true, docker: true }) !== undefined, missing({ kpt: true, docker: true }));
    const files = {
      Kptfile: kptfile(
        'root',
        'pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n      configMap:\n        namespace: prod\n    - image: gcr.io/kpt-fn/set-labels:v0.2.0\n      configMap:\n        app: web\n',
      ),
      'r.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: dev\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: dev\nspec:\n  selector:\n    tier: front\n',
    };
    const viaKpt = tempDir();
    const viaKdelta = tempDir();
    writeTree(viaKpt, files);
    writeTree(viaKdelta, files);
    execFileSync('kpt', ['fn', 'render', viaKpt], { stdio: 'pipe' });
    const r = kdelta(['fn', 'render', viaKdelta, '--runtime', 'builtin'], viaKdelta);
    expect(r.status).toBe(0);
    expect(resources(viaKdelta)).toEqual(resources(viaKpt));
  });
});
