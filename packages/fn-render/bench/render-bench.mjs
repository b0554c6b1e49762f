// `pnpm bench` in fn-render: render a package of 1,000 resources (Deployments, Services and
// ConfigMaps over 100 files) through the built-in set-namespace and set-labels, in memory
// (renderPackage) and on disk (renderDirectory: read, render, write).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PackageTree } from '@kdelta/kptfile-model';
import { renderDirectory, renderPackage } from '../dist/index.js';

const size = Number(process.env.KDELTA_BENCH_RESOURCES ?? 1000);
const perFile = 10;

function resource(i) {
  switch (i % 3) {
    case 0:
      return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-${i}\n  namespace: dev\n  labels:\n    tier: backend # owned by team ${i % 7}\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: app-${i}\n  template:\n    metadata:\n      labels:\n        app: app-${i}\n    spec:\n      containers:\n        - name: main\n          image: registry.example.com/app:${i}\n          ports:\n            - containerPort: 8080\n`;
    case 1:
      return `apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-${i}\n  namespace: dev\nspec:\n  selector:\n    app: app-${i - 1}\n  ports:\n    - port: 80\n      targetPort: 8080\n`;
    default:
      return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: dev\ndata:\n  key: value-${i}\n  other: "${i}"\n`;
  }
}

const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: bench
pipeline:
  mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      configMap:
        namespace: prod
    - image: gcr.io/kpt-fn/set-labels:v0.2.0
      configMap:
        env: prod
        team: platform
`;

const files = [['Kptfile', kptfile]];
for (let f = 0; f < size / perFile; f++) {
  const docs = [];
  for (let k = 0; k < perFile; k++) docs.push(resource(f * perFile + k));
  files.push([`resources/file-${String(f).padStart(3, '0')}.yaml`, docs.join('---\n')]);
}

async function time(fn, minMs = 3000) {
  await fn(); // warm up
  const runs = [];
  const start = performance.now();
  while (performance.now() - start < minMs || runs.length < 3) {
    const t = performance.now();
    await fn();
    runs.push(performance.now() - t);
  }
  runs.sort((a, b) => a - b);
  return { median: runs[Math.floor(runs.length / 2)], runs: runs.length };
}

const tree = PackageTree.fromFiles(files);
const memory = await time(async () => {
  const out = await renderPackage(tree, { runtime: 'builtin' });
  if (!out.ok) throw new Error(out.error.message);
  if (out.written.length !== files.length) throw new Error(`expected every file rewritten, got ${out.written.length}`);
});

const root = mkdtempSync(join(tmpdir(), 'kdelta-render-bench-'));
const disk = await time(async () => {
  rmSync(root, { recursive: true, force: true });
  for (const [p, text] of files) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  const out = await renderDirectory(root, { runtime: 'builtin' });
  if (!out.ok) throw new Error(out.error.message);
});
rmSync(root, { recursive: true, force: true });

console.log(`fn-render: ${size} resources in ${files.length - 1} files, built-in set-namespace + set-labels`);
console.log(`  in memory (renderPackage):           ${memory.median.toFixed(0)} ms median of ${memory.runs}`);
console.log(`  on disk (write package + renderDirectory): ${disk.median.toFixed(0)} ms median of ${disk.runs}`);
