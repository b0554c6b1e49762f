import { mkdtemp, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KptfileError } from './errors.js';
import { layoutResources, packageFiles, readPackage, savePackage, writePackage } from './package.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kdelta-pkg-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out[p] = await readFile(join(dir, p), 'utf8');
    }
  };
  await walk('');
  return out;
}

const KPTFILE = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata: # the package
  name: app
upstream:
  type: git
  git: {repo: https://example.com/blueprints.git, directory: /app, ref: v1}
  updateStrategy: resource-merge
pipeline:
  mutators:
  - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4 # keep me
    configMap:
      namespace: prod
`;

const MULTI = `# leading comment
apiVersion: v1
kind: Service
metadata:
  name: web   # trailing
spec:
  ports:
  - port: 80
---
# between
---   # a marker with a comment
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas:   3
...
`;

describe('readPackage', () => {
  it('reads the Kptfile, resources with file and index, other files, subpackages, .krmignore and symlinks', async () => {
    const dir = await tree({
      Kptfile: KPTFILE,
      'web.yaml': MULTI,
      'conf/cm.yml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
      'README.md': '# app\n',
      'patch.yaml': '- op: replace\n  path: /spec\n',
      'charts/values.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n',
      '.krmignore': 'charts/\n',
      'sub/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n',
      'sub/x.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: in-sub\n',
    });
    await symlink('web.yaml', join(dir, 'link.yaml'));
    const pkg = await readPackage(dir);
    expect(pkg.kptfile?.kptfile.metadata?.name).toBe('app');
    expect(pkg.resources.map((r) => [r.file, r.index, (r.object['metadata'] as { name: string }).name])).toEqual([
      ['conf/cm.yml', 0, 'c'],
      ['web.yaml', 0, 'web'],
      ['web.yaml', 1, 'web'],
    ]);
    expect(pkg.resources[2]?.object['kind']).toBe('Deployment');
    expect(pkg.subpackages).toEqual(['sub']);
    const kinds = Object.fromEntries(pkg.files.map((f) => [f.path, f.kind]));
    expect(kinds).toEqual({
      '.krmignore': 'other',
      Kptfile: 'kptfile',
      'README.md': 'other',
      'charts/values.yaml': 'ignored',
      'conf/cm.yml': 'krm',
      'link.yaml': 'symlink',
      'patch.yaml': 'other',
      'web.yaml': 'krm',
    });
    expect(pkg.files.find((f) => f.path === 'link.yaml')?.target).toBe('web.yaml');
  });

  it('round trip: writing back an unchanged package leaves every file byte-identical and untouched', async () => {
    const files = {
      Kptfile: KPTFILE,
      'web.yaml': MULTI,
      'notes.txt': 'x\r\ny',
      'a/b.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n',
    };
    const dir = await tree(files);
    const before = await snapshot(dir);
    const mtime = (await stat(join(dir, 'web.yaml'))).mtimeMs;
    const pkg = await readPackage(dir);
    const r = await writePackage(dir, packageFiles(pkg), { prune: true });
    expect(r.written).toEqual([]);
    expect(r.deleted).toEqual([]);
    expect(await snapshot(dir)).toEqual(before);
    expect((await stat(join(dir, 'web.yaml'))).mtimeMs).toBe(mtime);
    // Laying the unchanged resources out again gives the same bytes too.
    const laid = layoutResources(
      pkg,
      pkg.resources.map((res) => ({ text: res.text, local: { file: res.file, index: res.index } })),
    );
    for (const f of laid) expect(String(f.content)).toBe(files[f.path as keyof typeof files]);
  });

  it('a broken Kptfile names the file and the field, and nothing is written', async () => {
    const cases: [string, string][] = [
      ['apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: [\n', 'Kptfile: invalid YAML'],
      [
        'apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream:\n  updateStrategy: merge-please\n',
        'Kptfile: upstream.updateStrategy: unknown value "merge-please"',
      ],
      [
        'apiVersion: kpt.dev/v1\nkind: Kptfile\npipeline:\n  mutators:\n  - configMap: {a: b}\n',
        'Kptfile: pipeline.mutators[0].image: a function must name what to run',
      ],
      [
        'apiVersion: kpt.dev/v1\nkind: Kptfile\npipeline:\n  validators:\n  - image: ok/fn:v1\n  - image: Bad/Image:v1\n',
        'Kptfile: pipeline.validators[1].image: "Bad/Image:v1" is not a valid image reference',
      ],
    ];
    for (const [kptfile, message] of cases) {
      const dir = await tree({ Kptfile: kptfile, 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n' });
      const err = await readPackage(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KptfileError);
      expect((err as KptfileError).message).toContain(message);
      expect((err as KptfileError).file).toBe('Kptfile');
    }
  });

  it('a YAML file that does not parse names the file and the document', async () => {
    const dir = await tree({ 'a.yaml': 'apiVersion: v1\nkind: X\nmetadata:\n  name: a\n---\nkey: [unclosed\n' });
    await expect(readPackage(dir)).rejects.toThrow(/^a\.yaml: document 1: invalid YAML/);
  });
});

describe('savePackage', () => {
  it('writes back what changed in the view since it was read, leaving the rest and subpackages untouched', async () => {
    const dir = await tree({ Kptfile: KPTFILE, 'web.yaml': MULTI, 'old.txt': 'bye\n', 'sub/Kptfile': 'kind: Kptfile\n' });
    const mtime = (await stat(join(dir, 'web.yaml'))).mtimeMs;
    const pkg = await readPackage(dir);
    pkg.view.write('Kptfile', KPTFILE.replace('name: app', 'name: renamed'));
    pkg.view.write('new/cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n');
    pkg.view.delete('old.txt');
    // what was read is a snapshot: the view's edits do not change it
    expect(pkg.files.map((f) => f.path)).toContain('old.txt');
    const changes = await savePackage(pkg);
    expect(changes.written.map((w) => w.path)).toEqual(['Kptfile', 'new/cm.yaml']);
    expect(changes.deleted).toEqual(['old.txt']);
    expect(await snapshot(dir)).toEqual({
      Kptfile: KPTFILE.replace('name: app', 'name: renamed'),
      'web.yaml': MULTI,
      'new/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n',
      'sub/Kptfile': 'kind: Kptfile\n',
    });
    expect((await stat(join(dir, 'web.yaml'))).mtimeMs).toBe(mtime);
    expect((await savePackage(await readPackage(dir))).written).toEqual([]);
  });
});

describe('writePackage', () => {
  it('writes changed and new files, prunes removed ones, and leaves subpackages alone', async () => {
    const dir = await tree({ 'a.yaml': 'a: 1\n', 'b.yaml': 'b: 1\n', 'sub/Kptfile': 'kind: Kptfile\n', 'sub/c.yaml': 'c: 1\n' });
    const r = await writePackage(
      dir,
      [
        { path: 'a.yaml', content: 'a: 2\n' },
        { path: 'new/d.yaml', content: 'd: 1\n' },
      ],
      { prune: true },
    );
    expect([...r.written].sort()).toEqual(['a.yaml', 'new/d.yaml']);
    expect(r.deleted).toEqual(['b.yaml']);
    expect(await snapshot(dir)).toEqual({
      'a.yaml': 'a: 2\n',
      'new/d.yaml': 'd: 1\n',
      'sub/Kptfile': 'kind: Kptfile\n',
      'sub/c.yaml': 'c: 1\n',
    });
  });

  it('refuses paths outside the package before writing anything', async () => {
    const dir = await tree({ 'a.yaml': 'a: 1\n' });
    const err = await writePackage(dir, [
      { path: 'a.yaml', content: 'a: 2\n' },
      { path: '../escape.yaml', content: 'x' },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KptfileError);
    expect((err as KptfileError).message).toBe('../escape.yaml: path must be normalized and stay inside the package');
    expect(await snapshot(dir)).toEqual({ 'a.yaml': 'a: 1\n' });
  });

  it('leaves no temporary files behind when staging fails', async () => {
    const dir = await tree({ 'a.yaml': 'a: 1\n', blocker: 'i am a file' });
    const err = await writePackage(dir, [
      { path: 'a.yaml', content: 'a: 2\n' },
      { path: 'blocker/x.yaml', content: 'x' },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(await snapshot(dir)).toEqual({ 'a.yaml': 'a: 1\n', blocker: 'i am a file' });
  });
});

describe('layoutResources', () => {
  it('keeps local files and order, drops deleted resources, puts added ones where upstream had them', async () => {
    const dir = await tree({
      'web.yaml': MULTI,
      'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n',
    });
    const pkg = await readPackage(dir);
    const [svc, deploy] = pkg.resources.filter((r) => r.file === 'web.yaml');
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\n';
    const out = layoutResources(pkg, [
      { text: deploy!.text.replace('replicas:   3', 'replicas:   4'), local: { file: 'web.yaml', index: 1 } },
      { text: svc!.text, local: { file: 'web.yaml', index: 0 } },
      { text: cm, upstream: { file: 'web.yaml', index: 2 } },
      { text: cm.replace('added', 'other'), upstream: { file: 'config/other.yaml', index: 0 } },
    ]);
    expect(out.map((f) => f.path)).toEqual(['config/other.yaml', 'web.yaml']);
    expect(String(out[1]?.content)).toBe(MULTI.replace('replicas:   3', 'replicas:   4') + '---\n' + cm);
    expect(String(out[0]?.content)).toBe(cm.replace('added', 'other'));
  });
});
