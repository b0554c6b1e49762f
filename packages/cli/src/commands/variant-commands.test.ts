import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile, mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { main } from '../main.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kdelta-variant-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(rel: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
  await writeFile(path.join(dir, rel), text);
}

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: dir, env: {} });
  return { code, stdout, stderr };
}

async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) {
      const p = path.join(e.parentPath, e.name);
      out[path.relative(root, p)] = await readFile(p, 'utf8');
    }
  }
  return out;
}

const repositories = ['useast1', 'uswest1', 'useast2']
  .map(
    (region, i) => `apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: cluster-0${i + 1}
  namespace: default
  labels: {region: ${region}, env: prod, org: ${i === 1 ? 'finance' : 'hr'}}
spec:
  git: {repo: https://example.com/cluster-0${i + 1}.git, branch: main}
`,
  )
  .join('---\n');

function pvs(template: string, targets = `  - repositorySelector:\n      matchLabels: {org: hr}\n`): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: example
  namespace: default
spec:
  upstream: {repo: catalog, package: foo, revision: v1}
  targets:
${targets}${template ? `    template:\n${template}` : ''}`;
}

describe('kdelta variantset expand', () => {
  it('prints one PackageVariant per selected repository, with CEL templates evaluated', async () => {
    await write('objects/repos.yaml', repositories);
    await write(
      'set.yaml',
      pvs(`      labelExprs:
      - key: org
        valueExpr: "repository.labels['org']"
      injectors:
      - nameExpr: "repository.labels['region'] + '-endpoints'"
`),
    );
    const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'objects');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const variants = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(variants.map((v) => v.metadata.name)).toEqual(['example-cluster-01-foo', 'example-cluster-03-foo']);
    expect(variants[1]).toMatchObject({
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'PackageVariant',
      metadata: { namespace: 'default', labels: { 'config.porch.kpt.dev/packagevariantset': 'example' } },
      spec: {
        upstream: { repo: 'catalog', package: 'foo', revision: 'v1' },
        downstream: { repo: 'cluster-03', package: 'foo' },
        labels: { org: 'hr' },
        injectors: [{ name: 'useast2-endpoints' }],
      },
    });
  });

  it('gives the same names on every run, shortened with a hash past 63 characters', async () => {
    const long = 'a-very-long-package-name-that-goes-on-and-on-and-on-for-ever';
    await write('set.yaml', pvs('', `  - repositories:\n    - name: cluster-01\n      packageNames: [${long}, short]\n`));
    await write('repos.yaml', repositories);
    const first = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    const second = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const names = parseAllDocuments(first.stdout).map((d) => d.toJS().metadata.name as string);
    const id = `example-cluster-01-${long}`;
    expect(names[0]).toBe(`${id.slice(0, 54)}-${createHash('sha1').update(id).digest('hex').slice(0, 8)}`);
    expect(names[0]!.length).toBe(63);
    expect(names[1]).toBe('example-cluster-01-short');
  });

  const bad: [string, string, string, string][] = [
    [
      'two targeting modes in one target',
      '',
      `  - repositories: [{name: cluster-01}]\n    repositorySelector: {matchLabels: {org: hr}}\n`,
      'spec.targets[0] must specify one of `repositories`, `repositorySelector`, or `objectSelector`',
    ],
    [
      'a CEL syntax error',
      `      labelExprs:\n      - key: org\n        valueExpr: "repository.labels['org'] +"\n`,
      '',
      'spec.targets[0].template.labelExprs[0].valueExpr: ERROR: <input>:1:',
    ],
    [
      'an unknown variable',
      `      annotationExprs:\n      - key: a\n        value: b\n      - key: owner\n        valueExpr: "cluster.name"\n`,
      '',
      "spec.targets[0].template.annotationExprs[1].valueExpr: ERROR: <input>:1:1: undeclared reference to 'cluster'",
    ],
    [
      '`repository` in the repo expression',
      `      downstream:\n        repoExpr: "repository.name"\n`,
      '',
      "spec.targets[0].template.downstream.repoExpr: ERROR: <input>:1:1: undeclared reference to 'repository'",
    ],
    [
      'a result typed int',
      `      labelExprs:\n      - key: count\n        valueExpr: "size(repository.labels)"\n`,
      '',
      'spec.targets[0].template.labelExprs[0].valueExpr: expression must evaluate to a string, but its type is int',
    ],
    [
      'a result that is a map at run time',
      `      labelExprs:\n      - key: count\n        valueExpr: "repository.labels"\n`,
      '',
      'template.labelExprs[0].valueExpr: expression must evaluate to a string, got map',
    ],
    [
      'a missing label at run time',
      `      labelExprs:\n      - key: tier\n        valueExpr: "repository.labels['tier']"\n`,
      '',
      'spec.targets[0] (repository "cluster-01", package "foo"): template.labelExprs[0].valueExpr: ERROR: <input>:1:1: no such key: tier',
    ],
    [
      'a reserved-looking wrong type',
      `      labels: {replicas: 3}\n`,
      '',
      'spec.targets[0].template.labels.replicas: expected string, got number',
    ],
  ];
  for (const [what, template, targets, message] of bad) {
    it(`exits 1 naming the file and the field path for ${what}`, async () => {
      await write('objects/repos.yaml', repositories);
      await write('set.yaml', pvs(template, targets || undefined));
      const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'objects');
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('set.yaml: document 1 (PackageVariantSet "example")');
      expect(r.stderr).toContain(message);
    });
  }

  it('requires --set and reports YAML errors with the document and line', async () => {
    expect((await run('variantset', 'expand')).stderr).toContain('--set <pvs.yaml> is required');
    await write('set.yaml', 'kind: PackageVariantSet\n---\nkind: [unclosed\n');
    const r = await run('variantset', 'expand', '--set', 'set.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/set\.yaml: document 2: invalid YAML at line \d+/);
  });
});

const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app # the package
info:
  description: app
pipeline:
  mutators:
  - image: set-labels:v0.1 # keep me
    configMap: {app: foo}
`;
const packageContext = `apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  name: app
`;
const endpoints = `apiVersion: v1
kind: ConfigMap
metadata:
  name: endpoints
  annotations:
    kpt.dev/config-injection: required
data:
  db: placeholder
`;
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
`;

function pv(extra = ''): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-east
  namespace: default
spec:
  upstream: {repo: catalog, package: app, revision: v1}
  downstream: {repo: cluster-01, package: app}
  packageContext:
    data: {region: us-east1}
  pipeline:
    mutators:
    - name: set-ns
      image: set-namespace:v0.4
      configMap: {namespace: east}
  injectors:
  - name: us-east1-endpoints
${extra}`;
}

const clusterObjects = `apiVersion: v1
kind: ConfigMap
metadata:
  name: us-east1-endpoints
  namespace: default
data:
  db: db.us-east1.example.com
`;

async function writePackage(): Promise<void> {
  await write('pkg/Kptfile', kptfile);
  await write('pkg/package-context.yaml', packageContext);
  await write('pkg/endpoints.yaml', endpoints);
  await write('pkg/deploy/deployment.yaml', deployment);
  await write('objects.yaml', clusterObjects);
}

describe('kdelta variant apply', () => {
  it('applies package context, pipeline and injection in place, prints the conditions, and is idempotent', async () => {
    await writePackage();
    await write('pv.yaml', pv());
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = parse(r.stdout);
    expect(report.conditions).toEqual([
      { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
      { type: 'Ready', status: 'True', reason: 'NoErrors', message: 'successfully ensured downstream package variant' },
    ]);
    expect(report.package.changedFiles).toEqual(['Kptfile', 'endpoints.yaml', 'package-context.yaml']);
    expect(report.package.readinessGates).toEqual(['config.injection.ConfigMap.endpoints']);

    const files = await snapshot(path.join(dir, 'pkg'));
    expect(files['deploy/deployment.yaml']).toBe(deployment);
    expect(parse(files['package-context.yaml']!).data).toEqual({ name: 'app', region: 'us-east1' });
    const k = parse(files['Kptfile']!);
    expect(k.pipeline.mutators.map((m: { name?: string }) => m.name)).toEqual(['PackageVariant.app-east.set-ns.0', undefined]);
    expect(files['Kptfile']).toContain('# keep me');
    expect(files['Kptfile']).toContain('name: app # the package');
    expect(k.info.readinessGates).toEqual([{ conditionType: 'config.injection.ConfigMap.endpoints' }]);
    expect(k.status.conditions[0]).toMatchObject({ status: 'True', reason: 'ConfigInjected' });
    const injected = parse(files['endpoints.yaml']!);
    expect(injected.data).toEqual({ db: 'db.us-east1.example.com' });
    expect(injected.metadata.annotations).toMatchObject({
      'kpt.dev/injected-resource': 'us-east1-endpoints',
      'kpt.dev/injected-resource-name': 'us-east1-endpoints',
    });

    const again = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(again.code).toBe(0);
    expect(parse(again.stdout).package.changedFiles).toEqual([]);
    expect(await snapshot(path.join(dir, 'pkg'))).toEqual(files);
  });

  const failures: [string, () => Promise<void>, string][] = [
    [
      'a reserved package-context key',
      () => write('pv.yaml', pv().replace('data: {region: us-east1}', 'data: {region: us-east1, name: other}')),
      'pv.yaml: document 1 (PackageVariant "app-east"): spec.packageContext.data: Invalid value: {"name":"other","region":"us-east1"}: must not contain the key "name"',
    ],
    [
      'a missing kptfile.kpt.dev ConfigMap',
      async () => {
        await write('pv.yaml', pv());
        await rm(path.join(dir, 'pkg/package-context.yaml'));
      },
      `${path.join('pkg', 'package-context.yaml')}: not found in package 'pkg'; spec.packageContext needs its "kptfile.kpt.dev" ConfigMap`,
    ],
    [
      'an invalid injection annotation value',
      async () => {
        await write('pv.yaml', pv());
        await write('pkg/endpoints.yaml', endpoints.replace('required', 'mandatory'));
      },
      'errors in injection points: endpoints.yaml: ConfigMap/endpoints has invalid "kpt.dev/config-injection" annotation value of "mandatory"',
    ],
    [
      'a wrong type in the variant',
      () => write('pv.yaml', pv().replace('name: us-east1-endpoints', 'name: [a, b]')),
      'spec.injectors[0].name: expected string, got list',
    ],
  ];
  for (const [what, setup, message] of failures) {
    it(`exits 1 and writes nothing for ${what}`, async () => {
      await writePackage();
      await setup();
      const before = await snapshot(path.join(dir, 'pkg'));
      const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(await snapshot(path.join(dir, 'pkg'))).toEqual(before);
    });
  }

  it('refuses a directory without a Kptfile and a file with two PackageVariants', async () => {
    await write('empty/readme.md', 'x');
    await write('pv.yaml', pv());
    expect((await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'empty')).stderr).toContain('empty: no Kptfile');
    await write('two.yaml', `${pv()}---\n${pv()}`);
    const r = await run('variant', 'apply', '--variant', 'two.yaml', '--package', 'empty');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('two.yaml: expected one PackageVariant document, found 2');
  });
});

describe('strict variant inputs', () => {
  it('refuses an unknown PackageVariant field by its path, writing nothing', async () => {
    await writePackage();
    await write('pv.yaml', pv().replace('  packageContext:', '  packagecontext: {}\n  packageContext:'));
    const before = await snapshot(path.join(dir, 'pkg'));
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pv.yaml: document 1 (PackageVariant "app-east"): spec.packagecontext: unknown field');
    expect(await snapshot(path.join(dir, 'pkg'))).toEqual(before);
  });

  it('checks the pipeline functions before writing: a malformed image never reaches the Kptfile', async () => {
    await writePackage();
    await write('pv.yaml', pv().replace('image: set-namespace:v0.4', 'image: "Set Namespace:v0.4"'));
    const before = await snapshot(path.join(dir, 'pkg'));
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('spec.pipeline.mutators[0].image: "Set Namespace:v0.4" is');
    expect(await snapshot(path.join(dir, 'pkg'))).toEqual(before);
  });

  it('a required injection point with no source: the package is written as Porch does, exit 0 with a not-ready warning', async () => {
    await writePackage();
    await write('objects.yaml', clusterObjects.replace('us-east1-endpoints', 'us-west1-endpoints'));
    await write('pv.yaml', pv());
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(r.code).toBe(0);
    expect(parse(r.stdout).package.ready).toBe(false);
    expect(r.stderr).toContain('warning: not ready: pkg: required injection point config.injection.ConfigMap.endpoints has no source');
    const k = parse(await readFile(path.join(dir, 'pkg/Kptfile'), 'utf8'));
    expect(k.info.readinessGates).toEqual([{ conditionType: 'config.injection.ConfigMap.endpoints' }]);
    expect(k.status.conditions[0]).toMatchObject({ type: 'config.injection.ConfigMap.endpoints', status: 'False' });
    // for those who want a gate to fail the step: the same files, exit 3
    const before = await snapshot(path.join(dir, 'pkg'));
    const strict = await run(
      'variant',
      'apply',
      '--variant',
      'pv.yaml',
      '--package',
      'pkg',
      '--objects',
      'objects.yaml',
      '--fail-if-not-ready',
    );
    expect(strict.code).toBe(3);
    expect(strict.stderr).toContain('not ready: pkg: required injection point config.injection.ConfigMap.endpoints');
    expect(await snapshot(path.join(dir, 'pkg'))).toEqual(before);
  });

  it("a package YAML file that holds no KRM object is an error naming it, writing nothing (Porch's junk.yaml case)", async () => {
    await writePackage();
    await write('pkg/junk.yaml', 'baddata\n');
    await write('pv.yaml', pv());
    const before = await snapshot(path.join(dir, 'pkg'));
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pkg/junk.yaml: failed to extract objects: document 1 is a scalar, not a KRM object');
    expect(await snapshot(path.join(dir, 'pkg'))).toEqual(before);
    // the same for an injection source
    await rm(path.join(dir, 'pkg/junk.yaml'));
    await write('objects/a.yaml', clusterObjects);
    await write('objects/junk.yaml', 'baddata\n');
    const source = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects');
    expect(source.code).toBe(1);
    expect(source.stderr).toContain('objects/junk.yaml: document 1: expected a KRM object (a map), got string');
  });

  it('two injection sources that match equally are an error naming both, writing nothing', async () => {
    await writePackage();
    await write('objects/a.yaml', clusterObjects);
    await write('objects/b.yaml', clusterObjects.replace('db.us-east1', 'db2.us-east1'));
    await write('pv.yaml', pv());
    const before = await snapshot(path.join(dir, 'pkg'));
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--objects', 'objects');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'objects/a.yaml: document 1 (ConfigMap "us-east1-endpoints") and objects/b.yaml: document 1 (ConfigMap "us-east1-endpoints") are the same object',
    );
    expect(await snapshot(path.join(dir, 'pkg'))).toEqual(before);
  });

  it('a flag given twice with different values is a usage error; the same value twice is fine', async () => {
    await writePackage();
    await write('pv.yaml', pv());
    const r = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--package', 'other');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--package given twice with different values: "pkg" and "other"');
    const same = await run('variant', 'apply', '--variant', 'pv.yaml', '--package', 'pkg', '--package', 'pkg', '--objects', 'objects.yaml');
    expect(same.code).toBe(0);
  });

  it('packageNames beside a repositorySelector instantiates each name in every selected repository', async () => {
    await write('repos.yaml', repositories);
    await write('set.yaml', pvs('', `  - repositorySelector:\n      matchLabels: {org: hr}\n    packageNames: [foo-a, foo-b]\n`));
    const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const pairs = parseAllDocuments(r.stdout).map((d) => `${d.toJS().spec.downstream.repo}/${d.toJS().spec.downstream.package}`);
    expect(pairs).toEqual(['cluster-01/foo-a', 'cluster-01/foo-b', 'cluster-03/foo-a', 'cluster-03/foo-b']);
  });

  it('an unknown PackageVariantSet field is an error naming its path', async () => {
    await write('repos.yaml', repositories);
    await write('set.yaml', pvs('', `  - repositorySelector:\n      matchLabels: {org: hr}\n      packageNames: [foo-a]\n`));
    const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('spec.targets[0].repositorySelector.packageNames: unknown field');
  });

  it('reports Porch\'s validation messages beside unknown fields, every problem at once (Porch\'s case "invalid targets")', async () => {
    await write('repos.yaml', repositories);
    await write(
      'set.yaml',
      'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: my-pv\nspec:\n  targets:\n' +
        '  - repositories: [{name: ""}]\n  - repositories: [{name: bar}]\n    repositorySelector: {foo: bar}\n' +
        '  - repositories: [{name: bar, packageNames: ["", foo]}]\n',
    );
    const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    for (const problem of [
      'spec.targets[1].repositorySelector.foo: unknown field',
      'spec.upstream is a required field',
      'spec.targets[0].repositories[0].name cannot be empty',
      'spec.targets[1] must specify one of `repositories`, `repositorySelector`, or `objectSelector`',
      'spec.targets[2].repositories[0].packageNames[0] cannot be empty',
    ])
      expect(r.stderr).toContain(problem);
  });

  it('a target naming a Repository that does not exist is an error for that target', async () => {
    await write('repos.yaml', repositories);
    await write('set.yaml', pvs('', `  - repositories: [{name: cluster-01}, {name: cluster-09}]\n`));
    const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('spec.targets[0].repositories[1]: Repository "cluster-09" does not exist in namespace "default"');
  });

  it('a set that selects no target exits 0 with a warning', async () => {
    await write('repos.yaml', repositories);
    await write('set.yaml', pvs('', `  - repositorySelector:\n      matchLabels: {org: legal}\n`));
    const r = await run('variantset', 'expand', '--set', 'set.yaml', '--objects', 'repos.yaml');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'warning: set.yaml: document 1 (PackageVariantSet "example"): spec.targets[0].repositorySelector selects no Repository in namespace "default"',
    );
    expect(r.stderr).toContain('selects no target: no PackageVariant generated');
  });
});
