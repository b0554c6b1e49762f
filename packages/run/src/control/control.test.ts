import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { KdeltaError } from '@kdelta/errors';
import { ControlError, loadControl } from './control.js';
import { planRun } from '../plan/plan.js';

const schemaDir = new URL('../../schema/', import.meta.url).pathname;
const schema = JSON.parse(readFileSync(join(schemaDir, 'kdelta-config.schema.json'), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
const root = mkdtempSync(join(tmpdir(), 'kdelta-control-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function configDir(files: Record<string, string>): string {
  const dir = join(root, `c${++n}`);
  for (const [name, text] of Object.entries(files)) {
    const full = join(dir, name);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, text);
  }
  return dir;
}

async function issues(files: Record<string, string>): Promise<string> {
  const error = await loadControl({ dir: configDir(files), display: '.kdelta' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ControlError);
  return (error as Error).message;
}

const REPO = 'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  git:\n    repo: /tmp/r.git\n';

describe('the published JSON Schema', () => {
  const examples = readdirSync(join(schemaDir, 'examples')).filter((f) => f.endsWith('.yaml'));

  it('validates every example document', () => {
    expect(examples.length).toBeGreaterThan(0);
    for (const file of examples) {
      for (const doc of parseAllDocuments(readFileSync(join(schemaDir, 'examples', file), 'utf8'))) {
        const ok = validate(doc.toJS());
        expect(ok, `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('and the loader accepts the examples as a config directory', async () => {
    const config = await loadControl({ dir: join(schemaDir, 'examples') });
    expect(config.repositories.map((r) => r.name)).toEqual(['catalog', 'cluster-01', 'cluster-02']);
    expect(config.settings.values).toEqual({
      forge: 'local',
      mode: 'variants',
      concurrency: 8,
      authorName: 'kdelta',
      authorEmail: 'kdelta@example.com',
    });
    const plan = planRun(config, { cwd: root });
    expect(plan.variants.map((v) => `${v.name} ${v.upstream.directory} ${v.upstream.policy} → ${v.downstream.directory}`)).toEqual([
      'base-ns-cluster-01-team-a packages/base-ns highest-semver → team-a',
      'base-ns-cluster-01-team-b packages/base-ns highest-semver → team-b',
      'base-ns-cluster-02-team-a packages/base-ns highest-semver → team-a',
      'base-ns-cluster-02-team-b packages/base-ns highest-semver → team-b',
      'cluster-01-web packages/web pinned → web',
    ]);
  });

  it('rejects what the loader rejects', async () => {
    const bad = [
      'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n  upstream: {repo: a, package: b}\n  downstream: {repo: c, package: d}\n  deletionPolicy: keep\n',
      'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  git:\n    branch: main\n',
      'apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: s\nspec:\n  concurrency: 0\n',
    ];
    for (const text of bad) {
      expect(validate(parseAllDocuments(text)[0]!.toJS())).toBe(false);
      await expect(loadControl({ dir: configDir({ 'x.yaml': text }) })).rejects.toBeInstanceOf(ControlError);
    }
  });
});

describe('the JSON Schema covers what the loader reads', () => {
  const definitions = (schema as { definitions: Record<string, SchemaNode> }).definitions;
  interface SchemaNode {
    properties?: Record<string, SchemaNode>;
  }
  const at = (kind: string, path: string[]): string[] => {
    let node: SchemaNode | undefined = definitions[kind];
    for (const p of path) node = node?.properties?.[p];
    return Object.keys(node?.properties ?? {}).sort();
  };
  /** The fields the loader allows at `path`, from its own "unknown field (expected one of …)" message. */
  const allowed = async (document: string): Promise<string[]> => {
    const message = await loadControl({ dir: configDir({ 'x.yaml': document }), display: '.kdelta' }).then(
      () => '',
      (e: unknown) => (e as Error).message,
    );
    const list = /zzz: unknown field \(expected one of ([^)]*)\)/.exec(message)?.[1];
    expect(list, message).toBeDefined();
    return list!.split(', ').sort();
  };
  const PV =
    'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n  upstream: {repo: a, package: b}\n  downstream: {repo: c, package: d}\n';
  const PVS =
    'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: x\nspec:\n  upstream: {repo: a, package: b}\n  targets:\n  - repositories: [{name: c}]\n';
  const SETTINGS = 'apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: s\nspec:\n';

  it('every field of Repository, PackageVariant, PackageVariantSet and RunSettings', async () => {
    expect(at('Repository', ['spec'])).toEqual(await allowed(`${REPO}  zzz: 1\n`));
    expect(at('Repository', ['spec', 'git'])).toEqual(await allowed(`${REPO}    zzz: 1\n`));
    expect(at('PackageVariant', ['spec'])).toEqual(await allowed(`${PV}  zzz: 1\n`));
    expect(at('PackageVariantSet', ['spec'])).toEqual(await allowed(`${PVS}  zzz: 1\n`));
    expect(at('RunSettings', ['spec'])).toEqual(await allowed(`${SETTINGS}  zzz: 1\n`));
    expect(at('RunSettings', ['spec', 'github'])).toEqual(await allowed(`${SETTINGS}  github:\n    zzz: 1\n`));
  });

  it('and the annotations a variant or set is read with: kdelta.dev/upstream-policy and kdelta.dev/upstream-prereleases', async () => {
    for (const [kind, text] of [
      ['PackageVariant', PV],
      ['PackageVariantSet', PVS],
    ] as const) {
      expect(at(kind, ['metadata', 'annotations'])).toEqual(['kdelta.dev/upstream-policy', 'kdelta.dev/upstream-prereleases']);
      const annotated = (value: string) =>
        parseAllDocuments(
          `${text.replace('  name: x\n', `  name: x\n  annotations:\n    kdelta.dev/upstream-prereleases: ${value}\n`)}`,
        )[0]!.toJS();
      expect(validate(annotated('"true"')), kind).toBe(true);
      expect(validate(annotated('"yes"')), kind).toBe(false);
    }
  });
});

describe('loading control resources', () => {
  it("reports a bad configuration as a KdeltaError: a stable code, the first problem's file, document and field", async () => {
    const text = 'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  git:\n    branch: main\n';
    const error = await loadControl({ dir: configDir({ 'repos.yaml': text }), display: '.kdelta' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KdeltaError);
    expect(error).toMatchObject({ code: 'invalid-control-config', file: '.kdelta/repos.yaml', document: 1, path: '.spec.git.repo' });
  });

  it('names file, document and field for each problem, all at once', async () => {
    const message = await issues({
      'a.yaml': `${REPO}---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: s\nspec:\n  git:\n    repo: 3\n    brunch: main\n`,
      'b.yaml': 'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariantSet\nmetadata:\n  name: old\n',
    });
    expect(message).toContain('invalid control configuration (3 problems)');
    expect(message).toContain('.kdelta/a.yaml: document 2 (Repository "s"): spec.git.brunch: unknown field');
    expect(message).toContain('.kdelta/a.yaml: document 2 (Repository "s"): spec.git.repo: expected a non-empty string, got 3');
    expect(message).toContain(
      '.kdelta/b.yaml: document 1 (PackageVariantSet "old"): kind: PackageVariantSet is read as config.porch.kpt.dev/v1alpha2, not config.porch.kpt.dev/v1alpha1',
    );
  });

  it('refuses the same object twice, and a variant naming a Repository that does not exist', async () => {
    expect(await issues({ 'a.yaml': REPO, 'b.yaml': REPO })).toContain(
      '.kdelta/b.yaml: document 1 (Repository "r"): the same object as .kdelta/a.yaml: document 1 (Repository "r")',
    );
    const config = await loadControl({
      dir: configDir({
        'a.yaml': `${REPO}---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: v\nspec:\n  upstream: {repo: r, package: p}\n  downstream: {repo: nowhere, package: p}\n`,
      }),
      display: '.kdelta',
    });
    expect(() => planRun(config, { cwd: root })).toThrow(
      '.kdelta/a.yaml: document 2 (PackageVariant "v"): spec.downstream.repo: Repository "nowhere" does not exist in namespace "default"',
    );
  });

  it('reads other objects as they are and skips the proposals folder', async () => {
    const config = await loadControl({
      dir: configDir({
        'a.yaml': `${REPO}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n`,
        'proposals/x/y.yaml': 'not: [valid\n',
      }),
    });
    expect(config.objects.map((o) => o.kind)).toEqual(['Repository', 'ConfigMap']);
  });
});
