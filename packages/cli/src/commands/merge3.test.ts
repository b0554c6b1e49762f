import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '@kdelta/test-support';
import { describe, expect, test } from 'vitest';
import { main } from '../main.js';
import type { Io } from '../command.js';

async function kdelta(args: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const io: Io = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd, env: {} };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

function tree(root: string, files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const deploy = (image: string, replicas = 1, extra = '') =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}${extra}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ${image}\n`;

function workspace() {
  const dir = tempDir('kdelta-merge3-');
  tree(dir, {
    'o/app/deploy.yaml': deploy('web:1'),
    'u/app/deploy.yaml': deploy('web:2'),
    'u/app/svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n',
    'l/app/deploy.yaml': deploy('web:1', 4, ' # prod'),
  });
  return dir;
}

describe('kdelta merge3', () => {
  test('an error in the original or updated file names that file and its side, not the local file', async () => {
    const dir = tempDir('kdelta-merge3-');
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n';
    tree(dir, { 'orig.yaml': 'a: [\n', 'upd.yaml': cm, 'loc.yaml': cm, 'list.yaml': '- 1\n' });
    const bad = await kdelta(['merge3', '--original', 'orig.yaml', '--updated', 'upd.yaml', '--local', 'loc.yaml'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^kdelta merge3: orig\.yaml \(origin\): document 0: invalid YAML \(line 2\)/);
    const single = await kdelta(['merge3', '--original', 'orig.yaml', '--updated', 'upd.yaml', '--local', 'loc.yaml', '--single'], dir);
    expect(single.stderr).toMatch(/^kdelta merge3: orig\.yaml \(origin\): document 0: invalid YAML/);
    const notMap = await kdelta(['merge3', '--original', 'loc.yaml', '--updated', 'list.yaml', '--local', 'loc.yaml'], dir);
    expect(notMap.stderr).toBe(
      'kdelta merge3: list.yaml (upstream): document 0: upstream document is not a mapping (a resource must be a YAML map)\n',
    );
    const local = await kdelta(['merge3', '--original', 'loc.yaml', '--updated', 'upd.yaml', '--local', 'orig.yaml'], dir);
    expect(local.stderr).toMatch(/^kdelta merge3: orig\.yaml \(local\): document 0: invalid YAML/);
  });

  test("a field pinned with # kdelta:local keeps local's value and comment, reported as a decision", async () => {
    const dir = tempDir('kdelta-merge3-');
    tree(dir, {
      'o/deploy.yaml': deploy('web:1', 1),
      'u/deploy.yaml': deploy('web:2', 2),
      'l/deploy.yaml': deploy('web:1', 5, ' # kdelta:local'),
    });
    for (const strategy of ['upstream-wins', 'local-wins', 'fail']) {
      const r = await kdelta(
        ['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--on-conflict', strategy, '--report', 'r.json'],
        dir,
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(deploy('web:2', 5, ' # kdelta:local'));
      expect(r.stderr).toBe("apps/Deployment web: .spec.replicas is pinned (# kdelta:local): local's 5 kept, upstream 1→2\n");
      const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
      expect(report.conflicts).toEqual([]);
      expect(report.decisions).toMatchObject([
        { path: '.spec.replicas', rule: 'pinned-local', values: { origin: 1, upstream: 2, local: 5 } },
      ]);
    }
  });

  test('merges directories to stdout as one YAML stream, local edits kept', async () => {
    const dir = workspace();
    const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${deploy('web:2', 4, ' # prod')}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n`);
  });

  test('with no local edit, a map upstream deleted goes with the nulls origin had in it', async () => {
    const widget = (spec: string) => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 1\n${spec}`;
    const origin = widget('  extra:\n    a: null\n    b:\n      c: 1\n');
    const dir = tree(tempDir('kdelta-nulls-'), { 'o.yaml': origin, 'u.yaml': widget(''), 'l.yaml': origin });
    const r = await kdelta(['merge3', '--original', 'o.yaml', '--updated', 'u.yaml', '--local', 'l.yaml'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(widget(''));
  });

  test('--output writes the local layout and --report says what happened', async () => {
    const dir = workspace();
    const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--output', 'out', '--report', 'r.json'], dir);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, 'out/app/deploy.yaml'), 'utf8')).toBe(deploy('web:2', 4, ' # prod'));
    expect(readFileSync(join(dir, 'out/app/svc.yaml'), 'utf8')).toContain('kind: Service');
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    expect(report.resources.map((x: { resource: string; action: string }) => `${x.action} ${x.resource}`)).toEqual([
      'merged apps/Deployment web',
      'added Service web',
    ]);
    expect(report.conflicts).toEqual([]);
  });

  test('--on-conflict fail exits 3, prints the conflict and writes nothing', async () => {
    const dir = workspace();
    tree(dir, { 'l/app/deploy.yaml': deploy('web:1-patched') });
    const r = await kdelta(
      ['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--output', 'out', '--on-conflict', 'fail'],
      dir,
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('.spec.template.spec.containers[name="web"].image web:1→web:1-patched');
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  test('--on-conflict local-wins keeps the local value', async () => {
    const dir = workspace();
    tree(dir, { 'l/app/deploy.yaml': deploy('web:1-patched') });
    const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--on-conflict', 'local-wins'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('image: web:1-patched');
  });

  test('bad input exits 1 naming the file, the document and the reason; nothing written', async () => {
    const dir = workspace();
    tree(dir, { 'l/app/deploy.yaml': `${deploy('web:1')}---\nkind: [\n` });
    const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--output', 'out'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/app\/deploy\.yaml \(local\): document 1: invalid YAML \(line 14\)/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  test('--single merges one value per file', async () => {
    const dir = tree(tempDir('kdelta-single-'), {
      'o.yaml': 'a: 1\nlist: [1, 2]\n',
      'u.yaml': 'a: 2\nlist: [1, 2]\nb: new\n',
      'l.yaml': 'a: 1 # mine\nlist: [3]\n',
    });
    const r = await kdelta(['merge3', '--single', '--original', 'o.yaml', '--updated', 'u.yaml', '--local', 'l.yaml'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('a: 2 # mine\nlist: [3]\nb: new\n');
  });

  test('a Kptfile is merged by the pipeline rules', async () => {
    const kptfile = (fns: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n${fns}`;
    const dir = tree(tempDir('kdelta-kptfile-'), {
      'o/Kptfile': kptfile('    - image: gcr.io/kpt-fn/set-labels:v0.1\n'),
      'u/Kptfile': kptfile('    - image: gcr.io/kpt-fn/set-labels:v0.2\n    - image: gcr.io/kpt-fn/apply-setters:v0.1\n'),
      'l/Kptfile': kptfile('    - image: gcr.io/kpt-fn/set-labels:v0.1\n    - image: gcr.io/kpt-fn/set-namespace:v0.1\n'),
    });
    const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const images = [...r.stdout.matchAll(/image: (\S+)/g)].map((m) => m[1]);
    expect(images).toEqual(['gcr.io/kpt-fn/set-labels:v0.2', 'gcr.io/kpt-fn/set-namespace:v0.1', 'gcr.io/kpt-fn/apply-setters:v0.1']);
  });

  describe('a Kptfile whose pipeline both sides changed is merged like a resource', () => {
    const kptfile = (labels: string, comment = '') =>
      `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.1${comment}\n      configPath: ${labels}\n`;
    const both = () =>
      tree(tempDir('kdelta-kptfile-'), {
        'o/Kptfile': kptfile('labels.yaml'),
        'u/Kptfile': kptfile('labels-updated.yaml'),
        'l/Kptfile': kptfile('labels-local.yaml', ' # our labels'),
      });
    const path = '.pipeline.mutators[key="gcr.io/kpt-fn/set-labels"].configPath';

    test("upstream-wins takes upstream's value, keeps local's comment and reports the conflict", async () => {
      const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l'], both());
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(kptfile('labels-updated.yaml', ' # our labels'));
      expect(r.stderr).toContain(`${path} labels.yaml→labels-local.yaml, upstream labels.yaml→labels-updated.yaml; upstream wins`);
    });

    test("local-wins keeps local's value and reports that local won", async () => {
      const dir = both();
      const r = await kdelta(
        ['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--on-conflict', 'local-wins', '--report', 'r.json'],
        dir,
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(kptfile('labels-local.yaml', ' # our labels'));
      expect(r.stderr).toContain(`${path} labels.yaml→labels-local.yaml, upstream labels.yaml→labels-updated.yaml; local wins`);
      const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
      expect(report.conflicts).toMatchObject([{ file: 'Kptfile', resource: 'kpt.dev/Kptfile app', path, winner: 'local' }]);
    });

    test('fail exits 3 and writes nothing', async () => {
      const dir = both();
      const r = await kdelta(
        ['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--output', 'l', '--on-conflict', 'fail'],
        dir,
      );
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(path);
      expect(readFileSync(join(dir, 'l/Kptfile'), 'utf8')).toBe(kptfile('labels-local.yaml', ' # our labels'));
    });

    test('a function upstream deleted that holds a pinned field is kept whole, reported as a decision', async () => {
      const head = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n';
      const setters = '    - image: gcr.io/kpt-fn/apply-setters:v0.1\n      configMap:\n        tier: web # kdelta:local\n';
      const labels = '    - image: gcr.io/kpt-fn/set-labels:v0.1\n';
      const dir = tree(tempDir('kdelta-kptfile-'), {
        'o/Kptfile': `${head}${labels}${setters.replace(' # kdelta:local', '')}`,
        'u/Kptfile': `${head}${labels}`,
        'l/Kptfile': `${head}${labels}${setters}`,
      });
      const r = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l'], dir);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${head}${labels}${setters}`);
      expect(r.stderr).toContain('.pipeline.mutators[key="gcr.io/kpt-fn/apply-setters"] is pinned (# kdelta:local)');
    });
  });

  test('usage errors say what is wrong', async () => {
    const r = await kdelta(['merge3', '--original', 'o'], tmpdir());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--updated is required/);
    const bad = await kdelta(['merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--on-conflict', 'maybe'], tmpdir());
    expect(bad.stderr).toMatch(/--on-conflict must be one of upstream-wins, local-wins, fail \(got "maybe"\)/);
  });

  test('the built binary runs and returns the exit code', async () => {
    const bin = fileURLToPath(new URL('../../bin/kdelta.js', import.meta.url));
    if (!existsSync(fileURLToPath(new URL('../../dist/main.js', import.meta.url)))) {
      throw new Error('packages/cli is not built: run `pnpm build` (pnpm test does) before this test');
    }
    const dir = workspace();
    const r = await promisify(execFile)(
      process.execPath,
      [bin, 'merge3', '--original', 'o', '--updated', 'u', '--local', 'l', '--output', 'l'],
      { cwd: dir },
    );
    expect(r.stdout).toBe('');
    expect(readdirSync(join(dir, 'l/app')).sort()).toEqual(['deploy.yaml', 'svc.yaml']);
  });
});
