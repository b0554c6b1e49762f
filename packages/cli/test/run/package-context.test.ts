import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { main } from '../../src/main.js';

const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-run-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

async function kdeltaRun(f: Fleet): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await main(['run'], {
    stdout: () => undefined,
    stderr: (t) => void (stderr += t),
    cwd: f.control,
    env: { ...process.env, KDELTA_CACHE_DIR: cacheDir },
  });
  return { code, stderr };
}

it('outside a deployment repository, a package without the kptfile.kpt.dev ConfigMap fails saying both remedies; marking the Repository deployment: true is one', async () => {
  const f = createFleet(['c1']);
  fleets.push(f);
  f.publish({ 'base-ns/package-context.yaml': null }, 'base-ns/v2');
  const repositories = (deployment: boolean) =>
    [
      repository('catalog', f.upstream),
      repository('c1', f.downstream('c1')).replace('spec:\n', deployment ? 'spec:\n  deployment: true\n' : 'spec:\n'),
    ].join('---\n');
  f.writeControl({
    'repositories.yaml': repositories(false),
    'web.yaml': packageVariant('web', 'c1', '  packageContext:\n    data:\n      team: blue\n', 'v2'),
  });
  const refused = await kdeltaRun(f);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(
    `web → c1/web: failed: package-context.yaml: not found in package 'web'; spec.packageContext needs its "kptfile.kpt.dev" ConfigMap. Porch creates it only for a package new in a deployment repository: mark Repository "c1" (.kdelta/repositories.yaml: document 2 (Repository "c1")) with spec.deployment: true, or add the "kptfile.kpt.dev" ConfigMap to the upstream package (package-context.yaml of ${f.upstream} base-ns)`,
  );

  f.writeControl({ 'repositories.yaml': repositories(true) });
  const done = await kdeltaRun(f);
  expect(done.stderr).toMatch(/web → c1\/web: proposed/);
  expect(f.files('c1', 'kdelta/web', 'web')['package-context.yaml']).toMatch(/data:\n {2}name: web\n {2}team: blue\n/);
});
