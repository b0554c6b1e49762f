import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

describe('proposals say what happened', () => {
  it('a proposal caused only by the render says so in its title and body, not "update … to" the same commit', async () => {
    const f = createFleet(['cluster-01']);
    fleets.push(f);
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
    });
    // the catalog's package sets a label with its pipeline (kdelta's built-in set-labels)
    f.publish(
      {
        'base-ns/Kptfile':
          'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.2.0\n    configMap:\n      team: blue\n',
      },
      'base-ns/v2',
    );
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    await run({ cwd: f.control, cacheDir, env });
    const bare = f.downstream('cluster-01');
    execFileSync('git', ['update-ref', 'refs/heads/main', 'refs/heads/kdelta/web'], { cwd: bare });
    // someone edits the field the pipeline sets
    const ns = f.files('cluster-01', 'main', 'web')['namespace.yaml']!;
    expect(ns).toContain('team: blue');
    f.commitAs('cluster-01', 'main', { 'web/namespace.yaml': ns.replace('team: blue', 'team: red') });

    const report = await run({ cwd: f.control, cacheDir, env });
    const web = report.results.find((r) => r.variant === 'web')!;
    expect(web.action, JSON.stringify(web)).toBe('proposed');
    const record = readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8');
    expect(record).toContain('title: "kdelta: re-render web (web)"');
    expect(record).toContain('Re-renders package `web`: its upstream (`base-ns/v2`');
    expect(record).toContain('changes `namespace.yaml`');
    // and which function changed which fields of which resource
    expect(record).toContain(
      'What each function of the pipeline changed:\n\n- `gcr.io/kpt-fn/set-labels:v0.2.0` (`web/Kptfile` `pipeline.mutators[0]`):\n  - Namespace `example` in `web/namespace.yaml`: `.metadata.labels.team`\n',
    );
    expect(record).not.toContain('kdelta: update web');
    expect(f.files('cluster-01', 'kdelta/web', 'web')['namespace.yaml']).toContain('team: blue');
  });
});
