import { createFleet, git, repository, tempDir } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { run } from '../run.js';
import { deploymentPackageContexts } from './deployment-context.js';

const context = (data: string, head = '') =>
  `${head}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n${data}`;
const kptfile = (name: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n`;

describe('the package context of a package new in a deployment repository', () => {
  it.each([
    [
      "upstream's placeholder name is replaced; its other keys and comments stay",
      {
        Kptfile: kptfile('free5gc-operator'),
        'package-context.yaml': context('  name: example # set per cluster\n  namespace: free5gc\n', '# the context\n'),
      },
      { 'package-context.yaml': context('  name: edge01-operator # set per cluster\n  namespace: free5gc\n', '# the context\n') },
    ],
    [
      'none upstream: the one kpt writes',
      { Kptfile: kptfile('free5gc-operator') },
      { 'package-context.yaml': context('  name: edge01-operator\n') },
    ],
    [
      'each subpackage gets its own, named by its Kptfile as kpt names it',
      {
        Kptfile: kptfile('free5gc-operator'),
        'crds/Kptfile': kptfile('operator-crds'),
        'crds/package-context.yaml': context('  name: example\n'),
      },
      { 'package-context.yaml': context('  name: edge01-operator\n'), 'crds/package-context.yaml': context('  name: operator-crds\n') },
    ],
    [
      'already named after the package: nothing to write',
      { Kptfile: kptfile('x'), 'package-context.yaml': context('  name: edge01-operator\n') },
      {},
    ],
    [
      'a package-context.yaml that is not the ConfigMap is left alone',
      {
        Kptfile: kptfile('x'),
        'package-context.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  name: example\n',
      },
      {},
    ],
  ])('%s', (_, files, written) => {
    expect(Object.fromEntries(deploymentPackageContexts(new Map(Object.entries(files)), 'edge01-operator'))).toEqual(written);
  });

  it("a variant into a deployment repository names the package context after the downstream package, as kpt pkg get --for-deployment does; elsewhere upstream's stays", async () => {
    const f = createFleet(['edge01', 'catalog-copy']);
    onTestFinished(() => f.cleanup());
    f.publish(
      {
        'free5gc-operator/Kptfile': kptfile('free5gc-operator'),
        'free5gc-operator/package-context.yaml': context('  name: example\n'),
        'free5gc-operator/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n',
      },
      'free5gc-operator/v1',
    );
    const pv = (name: string, downstream: string) =>
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: free5gc-operator\n    revision: v1\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n`;
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('edge01', f.downstream('edge01')).replace('spec:\n', 'spec:\n  deployment: true\n'),
        repository('catalog-copy', f.downstream('catalog-copy')),
      ].join('---\n'),
      'edge.yaml': pv('edge01-operator', 'edge01'),
      'copy.yaml': pv('operator-blueprint', 'catalog-copy'),
    });
    const cacheDir = tempDir();
    const report = await run({ cwd: f.control, mode: 'variants', cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir } });
    expect(report.results.map((r) => [r.variant, r.action])).toEqual([
      ['edge01-operator', 'proposed'],
      ['operator-blueprint', 'proposed'],
    ]);
    expect(f.files('edge01', 'kdelta/edge01-operator', 'edge01-operator')['package-context.yaml']).toMatch(
      /\ndata:\n {2}name: edge01-operator\n$/,
    );
    expect(f.files('catalog-copy', 'kdelta/operator-blueprint', 'operator-blueprint')['package-context.yaml']).toMatch(
      /\ndata:\n {2}name: example\n$/,
    );

    // merged, then upstream changes its context: the downstream's name stays (a 3-way merge keeps it)
    git(f.downstream('edge01'), 'update-ref', 'refs/heads/main', 'refs/heads/kdelta/edge01-operator');
    f.publish({ 'free5gc-operator/package-context.yaml': context('  name: example\n  tier: gold\n') }, 'free5gc-operator/v2');
    f.writeControl({ 'edge.yaml': pv('edge01-operator', 'edge01').replace('revision: v1', 'revision: v2') });
    await run({ cwd: f.control, mode: 'variants', cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir } });
    expect(f.files('edge01', 'kdelta/edge01-operator', 'edge01-operator')['package-context.yaml']).toMatch(
      /\ndata:\n {2}name: edge01-operator\n {2}tier: gold\n$/,
    );
  });
});
