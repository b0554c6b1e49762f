import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { run } from '@kdelta/run';

const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-run-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

const env = { ...process.env, KDELTA_CACHE_DIR: cacheDir };
const context = (team: string) => `  packageContext:\n    data:\n      team: ${team}\n`;

describe('proposals say what happened', () => {
  it('the "What changed" list and the resource table agree: every changed file has its rows, no row says unchanged for a changed file', async () => {
    const f = createFleet(['cluster-01']);
    fleets.push(f);
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01', context('blue')),
    });
    await run({ cwd: f.control, cacheDir, env });
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/web'], { cwd: f.downstream('cluster-01') });
    // a new release changes the namespace; the variant changes its package context
    f.publish(
      {
        'base-ns/namespace.yaml':
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: gold\n',
      },
      'base-ns/v2',
    );
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', context('red'), 'v2') });
    const report = await run({ cwd: f.control, cacheDir, env });
    const body = report.results.find((r) => r.variant === 'web')!.body!;
    const listed = [...body.matchAll(/^- (?:added|modified|deleted) `web\/([^`]+)`$/gm)].map((m) => m[1]!);
    expect(listed.sort()).toEqual(['Kptfile', 'namespace.yaml', 'package-context.yaml']);
    const rows = [...body.matchAll(/^\| (.+?) \| (.+?) \| (.+?) \|$/gm)]
      .map((m) => ({ file: m[2]!, what: m[3]! }))
      .filter((r) => r.file !== 'file' && r.file !== '---');
    expect(new Set(rows.map((r) => r.file))).toEqual(new Set(listed));
    expect(rows.filter((r) => r.what.includes('(unchanged)'))).toEqual([]);
    expect(rows.find((r) => r.file === 'package-context.yaml')!.what).toMatch(/by the variant or the render/);
  });
});
