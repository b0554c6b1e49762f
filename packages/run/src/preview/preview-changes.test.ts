import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, git, packageVariant, repository, UPSTREAM_PACKAGE, type Fleet } from '@kdelta/test-support';
import { run, type RunOptions } from '../run.js';
import { preview } from './preview.js';

// A preview reports what the change under review changes: not the variants a run would only
// re-lock to another commit of the same package, nor the proposals already open for the same content.

const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-preview-changes-cache-'));
const fleets: Fleet[] = [];
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

const OTHER: Record<string, string> = Object.fromEntries(
  Object.entries(UPSTREAM_PACKAGE).map(([path, text]) => [path.replace(/^base-ns\//, 'other/'), text.replace(/base-ns/g, 'other')]),
);

/** Variants a (package base-ns) and o (package other) in cluster-01, both at the upstream's main branch. */
function twoPackages(): { f: Fleet; opts: (extra?: Partial<RunOptions>) => Omit<RunOptions, 'upstreamRef'> } {
  const f = createFleet(['cluster-01']);
  fleets.push(f);
  f.publish(OTHER, 'other/v1');
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
    'a.yaml': packageVariant('a', 'cluster-01', '', 'main'),
    'o.yaml': packageVariant('o', 'cluster-01', '', 'main').replace('package: base-ns', 'package: other'),
  });
  const opts = (extra: Partial<RunOptions> = {}): Omit<RunOptions, 'upstreamRef'> => ({
    cwd: f.control,
    cacheDir,
    env: { ...process.env, KDELTA_CACHE_DIR: cacheDir },
    mode: 'variants',
    ...extra,
  });
  return { f, opts };
}

const impacts = (r: Awaited<ReturnType<typeof preview>>) => r.variants.map((v) => [v.variant, v.impact]);

describe('what a preview says changes', () => {
  it('at an upstream ref: only the packages the ref changes; a variant of another package is unchanged (its lock alone would move)', async () => {
    const { f, opts } = twoPackages();
    expect((await run(opts())).results.map((r) => [r.variant, r.action])).toEqual([
      ['a', 'proposed'],
      ['o', 'proposed'],
    ]);
    for (const v of ['a', 'o']) git(f.downstream('cluster-01'), 'update-ref', 'refs/heads/main', `refs/heads/kdelta/${v}`);
    // merge both: main holds a then o (o's branch was cut from the same base: merge it on top)
    const work = join(f.root, 'merge');
    git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), work);
    git(work, 'merge', '--quiet', '--no-edit', 'origin/kdelta/a');
    git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    expect((await run(opts())).results.map((r) => [r.variant, r.action])).toEqual([
      ['a', 'up-to-date'],
      ['o', 'up-to-date'],
    ]);
    // the change under review: a branch of the upstream that changes base-ns only
    git(f.upstream, 'checkout', '--quiet', '-b', 'next');
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # next\n' });
    git(f.upstream, 'checkout', '--quiet', 'main');
    const seen = await preview({ ...opts(), upstreamRef: 'next' });
    expect(impacts(seen)).toEqual([
      ['a', 'changed'],
      ['o', 'unchanged'],
    ]);
    expect(seen.summary).toMatchObject({ changed: 1, unchanged: 1 });
  });

  it('of the control work tree: open proposals whose content the change does not touch are unchanged', async () => {
    const { f, opts } = twoPackages();
    await run(opts());
    // the change under review: a label on the downstream Repository, which no variant reads
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'), { region: 'eu' })].join(
        '---\n',
      ),
    });
    const seen = await preview(opts());
    expect(impacts(seen)).toEqual([
      ['a', 'unchanged'],
      ['o', 'unchanged'],
    ]);
  });
});
