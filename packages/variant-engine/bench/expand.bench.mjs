// Benchmark: expand a PackageVariantSet whose repositorySelector selects 1,000 Repositories, with
// three CEL templates per target (a label, an annotation and an injector name).
// Run: npx turbo run bench --filter=@kdelta/variant-engine   (or `node bench/expand.bench.mjs` after a build)
import { Bench } from 'tinybench';
import { expandPackageVariantSet } from '../dist/index.js';

const REPOS = 1000;
const regions = ['us-east1', 'us-west1', 'eu-west1', 'asia-east1'];
const objects = [];
for (let i = 0; i < REPOS; i++) {
  objects.push({
    apiVersion: 'config.porch.kpt.dev/v1alpha1',
    kind: 'Repository',
    metadata: {
      name: `cluster-${String(i).padStart(4, '0')}`,
      namespace: 'default',
      labels: { env: 'prod', region: regions[i % regions.length], team: `team-${i % 17}` },
    },
  });
}
// Noise the selector must skip.
for (let i = 0; i < 200; i++) {
  objects.push({
    apiVersion: 'config.porch.kpt.dev/v1alpha1',
    kind: 'Repository',
    metadata: { name: `staging-${i}`, namespace: 'default', labels: { env: 'staging' } },
  });
}

const pvs = {
  apiVersion: 'config.porch.kpt.dev/v1alpha2',
  kind: 'PackageVariantSet',
  metadata: { name: 'fleet', namespace: 'default' },
  spec: {
    upstream: { repo: 'catalog', package: 'app', revision: 'v3' },
    targets: [
      {
        repositorySelector: { matchLabels: { env: 'prod' } },
        template: {
          labelExprs: [{ key: 'region', valueExpr: "repository.labels['region']" }],
          annotationExprs: [{ key: 'owner', valueExpr: "repository.labels['team'] + '@example.com'" }],
          injectors: [{ nameExpr: "repository.labels['region'] + '-endpoints'" }],
        },
      },
    ],
  },
};

const check = expandPackageVariantSet(pvs, { objects });
if (!check.ok || check.variants.length !== REPOS) {
  throw new Error(`unexpected expansion: ${JSON.stringify(check.ok ? check.variants.length : check.errors)}`);
}

const bench = new Bench({ time: 3000, warmupTime: 500 });
bench.add(`expand 1 set → ${REPOS} variants, 3 CEL templates each`, () => {
  expandPackageVariantSet(pvs, { objects });
});
await bench.run();
console.table(bench.table());
for (const task of bench.tasks) {
  const r = task.result;
  const mean = r?.latency?.mean ?? r?.mean;
  const p99 = r?.latency?.p99 ?? r?.p99;
  console.log(`${task.name}: mean ${mean?.toFixed(1)} ms, p99 ${p99?.toFixed(1)} ms, ${((mean / REPOS) * 1000).toFixed(1)} µs per variant`);
}
