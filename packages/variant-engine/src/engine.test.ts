import fc from 'fast-check';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { parse, Parser } from 'yaml';
import { PackageTree } from '@kdelta/kptfile-model';
import {
  applyPackageVariant,
  checkPackageVariantSet,
  decodePackageVariantSet,
  expandPackageVariantSet,
  matchesLabelSelector,
  variantName,
  type KubeObject,
  type PackageVariant,
  type PackageVariantSet,
} from './index.js';

describe('variantName', () => {
  it('is deterministic, at most 63 characters, and the identifier itself when it fits', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 120 }), (id) => {
        const name = variantName(id);
        expect(variantName(id)).toBe(name);
        expect(name.length).toBeLessThanOrEqual(63);
        if (id.length <= 63) expect(name).toBe(id);
        else expect(name.slice(0, 54)).toBe(id.slice(0, 54));
      }),
      { numRuns: 200 },
    );
  });

  it('tells long identifiers with the same first 54 characters apart', () => {
    const base = 'x'.repeat(60);
    expect(variantName(`${base}-a`)).not.toBe(variantName(`${base}-b`));
  });
});

describe('matchesLabelSelector', () => {
  const labels = { env: 'prod', region: 'us' };
  it.each([
    [{ matchLabels: { env: 'prod' } }, true],
    [{ matchLabels: { env: 'dev' } }, false],
    [{ matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] }, true],
    [{ matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, true],
    [{ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, false],
    [{}, true],
  ])('%j → %s', (selector, want) => {
    expect(matchesLabelSelector(selector, labels)).toEqual({ ok: true, value: want });
  });
  it('rejects an unknown operator, naming it', () => {
    const r = matchesLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Like' }] }, labels);
    expect(r).toEqual({ ok: false, error: 'matchExpressions[0].operator: "Like" is not one of In, NotIn, Exists, DoesNotExist' });
  });
});

const set = (spec: string): PackageVariantSet => {
  const d = decodePackageVariantSet(
    parse(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: s, namespace: team}
spec:
  upstream: {repo: catalog, package: base, revision: 3}
${spec}`),
  );
  expect(d.errors).toEqual([]);
  return d.value;
};

const obj = (
  kind: string,
  name: string,
  namespace: string,
  labels: Record<string, string>,
  apiVersion = 'config.porch.kpt.dev/v1alpha1',
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace, labels },
});

describe('expandPackageVariantSet', () => {
  it('binds `target` to the object an objectSelector selects, in the set namespace only', () => {
    const pvs = set(`  targets:
  - objectSelector: {apiVersion: hr.example.com/v1, kind: Team, matchLabels: {role: dev}}
    template:
      downstream:
        repoExpr: "target.labels['cluster']"
        packageExpr: "packageDefault + '-' + target.name"
`);
    const objects = [
      obj('Team', 'blue', 'team', { role: 'dev', cluster: 'c1' }, 'hr.example.com/v1'),
      obj('Team', 'red', 'other', { role: 'dev', cluster: 'c2' }, 'hr.example.com/v1'),
      obj('Team', 'green', 'team', { role: 'ops', cluster: 'c1' }, 'hr.example.com/v1'),
      obj('Repository', 'c1', 'team', {}),
    ];
    const r = expandPackageVariantSet(pvs, { objects });
    expect(r.ok && r.variants.map((v) => [v.metadata?.name, v.spec?.downstream])).toEqual([
      ['s-c1-base-blue', { repo: 'c1', package: 'base-blue' }],
    ]);
  });

  it('takes CEL `upstream` from a matching PackageRevision among the objects', () => {
    const pvs = set(`  targets:
  - repositories: [{name: c1}]
    template:
      labelExprs: [{key: version, valueExpr: "upstream.labels['version']"}]
`);
    const pr: KubeObject = {
      apiVersion: 'porch.kpt.dev/v1alpha1',
      kind: 'PackageRevision',
      metadata: { name: 'catalog.base.v3', namespace: 'team', labels: { version: '3.1.4' } },
      spec: { repository: 'catalog', packageName: 'base', revision: 3 },
    };
    const r = expandPackageVariantSet(pvs, { objects: [pr, obj('Repository', 'c1', 'team', {})] });
    expect(r.ok && r.variants[0]?.spec?.labels).toEqual({ version: '3.1.4' });
  });

  it('reports a missing downstream Repository and a duplicate generated name', () => {
    const missing = expandPackageVariantSet(set(`  targets:\n  - repositories: [{name: nowhere}]\n    template: {labels: {a: b}}\n`), {
      objects: [],
    });
    expect(!missing.ok && missing.errors).toEqual([
      'spec.targets[0].repositories[0]: Repository "nowhere" does not exist in namespace "team" (none among the objects given)',
    ]);
    const dup = expandPackageVariantSet(set(`  targets:\n  - repositories: [{name: c1}]\n  - repositories: [{name: c1}]\n`), {
      objects: [obj('Repository', 'c1', 'team', {})],
    });
    expect(!dup.ok && dup.errors[0]).toContain('generates PackageVariant "s-c1-base", which spec.targets[0] already generates');
  });

  it('a set without a revision is Porch-invalid, and with followsReleases generates variants without one', () => {
    const pvs = set('  targets:\n  - repositories: [{name: c1}]\n');
    const unpinned: PackageVariantSet = { ...pvs, spec: { ...pvs.spec, upstream: { repo: 'catalog', package: 'base' } } };
    const objects = [obj('Repository', 'c1', 'team', {})];
    const porch = expandPackageVariantSet(unpinned, { objects });
    expect(!porch.ok && porch.errors).toEqual(['either spec.upstream.revision or spec.upstream.workspaceName must be specified']);
    expect(checkPackageVariantSet(unpinned).problems).toEqual([
      'either spec.upstream.revision or spec.upstream.workspaceName must be specified',
    ]);
    const follows = expandPackageVariantSet(unpinned, { objects, followsReleases: true });
    expect(follows.ok && follows.variants.map((v) => v.spec?.upstream)).toEqual([{ repo: 'catalog', package: 'base' }]);
    expect(checkPackageVariantSet(unpinned, { followsReleases: true }).problems).toEqual([]);
  });
});

const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
  - name: PackageVariant.other.fmt.0
    image: fmt:v1
  - image: set-labels:v1 # upstream's own
`;
const pvWith = (fns: string, injectors = ''): PackageVariant =>
  parse(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: pv, namespace: default}
spec:
  upstream: {repo: u, package: p}
  downstream: {repo: d, package: p}
  pipeline:
    mutators:
${fns}${injectors}`) as PackageVariant;

describe('applyPackageVariant', () => {
  it("replaces this variant's functions on re-apply and keeps everyone else's", () => {
    const first = applyPackageVariant(
      new Map([['Kptfile', kptfile]]),
      pvWith('    - {name: a, image: a:v1}\n    - {name: b, image: b:v1}\n'),
    );
    expect(first.ok).toBe(true);
    const after = first.ok ? first.changed.get('Kptfile')! : '';
    const second = applyPackageVariant(new Map([['Kptfile', after]]), pvWith('    - {name: c, image: c:v2}\n'));
    const text = second.ok ? second.changed.get('Kptfile')! : '';
    expect(parse(text).pipeline.mutators.map((m: { name?: string; image: string }) => m.name ?? m.image)).toEqual([
      'PackageVariant.pv.c.0',
      'PackageVariant.other.fmt.0',
      'set-labels:v1',
    ]);
    expect(text).toContain("# upstream's own");
  });

  // Seed 004: "the function name as specified in the pipeline of the PackageVariant resource (if
  // present)": an unnamed function leaves that part empty. Kptfiles written when kdelta named it
  // after its image (`PackageVariant.pv.set-ns.0`) are still recognised as the variant's own.
  it.each([
    ['a Kptfile without the variant', ''],
    ['a Kptfile the variant wrote as seed 004 names it', '  - name: PackageVariant.pv..0\n    image: set-ns:v1\n'],
    ['a Kptfile that named an unnamed function after its image', '  - name: PackageVariant.pv.set-ns.0\n    image: set-ns:v1\n'],
  ])('an unnamed function is PackageVariant.<variant>..<index>, once, from %s', (_, earlier) => {
    const start = kptfile.replace('  mutators:\n', `  mutators:\n${earlier}`);
    const r = applyPackageVariant(
      new Map([['Kptfile', start]]),
      pvWith('    - {image: gcr.io/kpt-fn/set-ns:v2}\n    - {name: b, image: b:v1}\n'),
    );
    const text = r.ok ? (r.changed.get('Kptfile') ?? start) : '';
    expect(parse(text).pipeline.mutators.map((m: { name?: string; image: string }) => m.name ?? m.image)).toEqual([
      'PackageVariant.pv..0',
      'PackageVariant.pv.b.1',
      'PackageVariant.other.fmt.0',
      'set-labels:v1',
    ]);
  });

  it('records why an injection point was not filled', () => {
    const files = new Map([
      ['Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app}\n'],
      [
        'team.yaml',
        'apiVersion: hr.example.com/v1\nkind: Team\nmetadata:\n  name: team\n  annotations: {kpt.dev/config-injection: optional}\nspec: {code: x}\n',
      ],
    ]);
    const pv = pvWith('    - {name: a, image: a:v1}\n', '  injectors:\n  - {name: t1, kind: Team}\n');
    const none = applyPackageVariant(files, pv, { objects: [] });
    expect(none.ok && none.packageConditions).toEqual([
      {
        type: 'config.injection.Team.team',
        status: 'False',
        reason: 'NoResourceSelected',
        message: 'no in-cluster resources of type hr.example.com/v1.Team',
      },
    ]);
    const noSpec = applyPackageVariant(files, pv, { objects: [obj('Team', 't1', 'default', {}, 'hr.example.com/v1')] });
    expect(noSpec.ok && noSpec.packageConditions[0]?.message).toBe('field "spec" not found in resource "t1"');
    const wrongKind = applyPackageVariant(
      files,
      { ...pv, spec: { ...pv.spec, injectors: [{ name: 't1', kind: 'Other' }] } },
      {
        objects: [{ ...obj('Team', 't1', 'default', {}, 'hr.example.com/v1'), spec: { code: 'y' } }],
      },
    );
    expect(wrongKind.ok && wrongKind.packageConditions[0]?.message).toBe(
      'no resource matched any injection selector for this injection point',
    );
  });

  it('edits a kpt package in memory: its Kptfile and KRM files only, and only when every mutation succeeds', () => {
    const team = (name: string) =>
      `apiVersion: hr.example.com/v1\nkind: Team\nmetadata:\n  name: ${name}\n  annotations: {kpt.dev/config-injection: optional}\nspec: {code: x}\n`;
    const tree = PackageTree.fromFiles([
      ['Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app}\n'],
      ['team.yaml', team('team')],
      // not the variant's: a kustomize patch (not KRM), a .krmignore'd file and a nested package
      ['patch.yaml', '- op: replace\n  path: /spec\n'],
      ['.krmignore', 'ignored.yaml\n'],
      ['ignored.yaml', team('ignored')],
      ['sub/Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: sub}\n'],
      ['sub/team.yaml', team('sub')],
    ]);
    const pkg = tree.package();
    const pv = pvWith('    - {name: a, image: a:v1}\n', '  injectors:\n  - {name: t1, kind: Team}\n');
    const objects = [{ ...obj('Team', 't1', 'default', {}, 'hr.example.com/v1'), spec: { code: 'y' } }];
    const before = tree.clone();
    const r = applyPackageVariant(pkg, pv, { objects });
    expect(r.ok && [...r.changed.keys()].sort()).toEqual(['Kptfile', 'team.yaml']);
    expect(r.ok && r.packageConditions.map((c) => c.type)).toEqual(['config.injection.Team.team']);
    // `y` is a boolean in YAML 1.1, as Kubernetes reads it: the string is quoted
    expect(pkg.text('team.yaml')).toContain('code: "y"');
    expect(pkg.text('Kptfile')).toContain('PackageVariant.pv.a.0');
    for (const p of ['patch.yaml', 'ignored.yaml', 'sub/team.yaml', 'sub/Kptfile']) expect(tree.text(p)).toBe(before.text(p));
    const again = applyPackageVariant(pkg, pv, { objects });
    expect(again.ok && again.changed.size).toBe(0);

    // two equal sources: an error, and the package is left as it was
    const failing = before.clone();
    const failed = applyPackageVariant(failing.package(), pv, { objects: [...objects, ...objects] });
    expect(failed.ok).toBe(false);
    expect(failing.changesFrom(before)).toEqual({ written: [], links: [], deleted: [], created: [] });
  });

  it('changes only the lines an injection changed: the merge comment stays on the metadata line, the other lines as they were', () => {
    const setters = (zone: string) =>
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: # kpt-merge: app/setters',
        '  name: setters',
        '  namespace: app',
        '  annotations:',
        "    kpt.dev/config-injection: 'required'",
        '    internal.kpt.dev/upstream-identifier: "|ConfigMap|app|setters"',
        'data:',
        '  # where the cluster runs',
        `  zone: ${zone} # kpt-set: \${zone}`,
        "  tier: 'gold'",
        '',
      ].join('\n');
    const files = new Map([
      ['Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app}\n'],
      ['setters.yaml', setters('us-east1')],
    ]);
    const pv = pvWith('', '  injectors:\n  - {name: zone-config, kind: ConfigMap}\n');
    const source = { ...obj('ConfigMap', 'zone-config', 'default', {}, 'v1'), data: { zone: 'eu-west1', tier: 'gold' } };
    const r = applyPackageVariant(files, pv, { objects: [source] });
    // Porch replaces `data` whole with the source's (its comments go with it) and names the source
    const injected = setters('eu-west1')
      .replace(/data:\n {2}# where the cluster runs\n {2}zone: eu-west1 # kpt-set: .*\n/, 'data:\n  zone: eu-west1\n')
      .replace("tier: 'gold'", 'tier: gold')
      .replace('\ndata:', '\n    kpt.dev/injected-resource: zone-config\n    kpt.dev/injected-resource-name: zone-config\ndata:');
    expect(r.ok && r.changed.get('setters.yaml')).toBe(injected);
  });

  it('parses no resource of the package that no mutation reads (a big ConfigMap beside an injection point)', () => {
    const settings = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n${Array.from({ length: 200 }, (_, i) => `  key-${i}: "value ${i}"\n`).join('')}`;
    const team =
      'apiVersion: hr.example.com/v1\nkind: Team\nmetadata:\n  name: team\n  annotations: {kpt.dev/config-injection: optional}\nspec: {code: x}\n';
    const pkg = PackageTree.fromFiles([
      ['Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app}\n'],
      ['settings.yaml', settings],
      ['team.yaml', team],
    ]).package();
    const parses = vi.spyOn(Parser.prototype, 'parse');
    onTestFinished(() => parses.mockRestore());
    const pv = pvWith('    - {name: a, image: a:v1}\n', '  injectors:\n  - {name: t1, kind: Team}\n');
    const r = applyPackageVariant(pkg, pv, {
      objects: [{ ...obj('Team', 't1', 'default', {}, 'hr.example.com/v1'), spec: { code: 'y' } }],
    });
    expect(r.ok && [...r.changed.keys()].sort()).toEqual(['Kptfile', 'team.yaml']);
    const parsed = parses.mock.calls.map(([text]) => text);
    expect(parsed.filter((text) => text.includes('name: settings'))).toEqual([]);
    // a value read later is the file's all the same
    expect(pkg.resources().find((x) => x.file === 'settings.yaml')?.object['data']).toMatchObject({ 'key-199': 'value 199' });
  });

  it('names the file of a package whose YAML does not parse', () => {
    const pkg = PackageTree.fromFiles([
      ['Kptfile', 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app}\n'],
      ['bad.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: [\n'],
    ]).package();
    const r = applyPackageVariant(pkg, pvWith('    - {name: a, image: a:v1}\n'));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.file).toBe('bad.yaml');
    expect(!r.ok && r.errors[0]).toMatch(/^bad\.yaml: document 0: invalid YAML/);
  });
});
