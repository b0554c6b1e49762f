import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, git, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { run } from '../run.js';

// What a downstream Kptfile records as the control repository that wrote it: a URL every clone
// and runner shares, never the path of the work tree the run happened to be in.

const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-control-record-cache-'));
const fleets: Fleet[] = [];
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

/** A fleet whose control repository is a git repository with `origin` (or none). */
function fleetWithControl(origin: string | undefined): Fleet {
  const f = createFleet(['cluster-01']);
  fleets.push(f);
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
  });
  git(f.control, 'init', '--quiet', '--initial-branch=main');
  if (origin !== undefined) git(f.control, 'remote', 'add', 'origin', origin);
  git(f.control, 'add', '.');
  git(f.control, 'commit', '--quiet', '-m', 'control');
  return f;
}

const ANNOTATION = /kdelta\.dev\/control-repository: (.*)/;

describe('the control repository a downstream package records', () => {
  it.each([
    {
      origin: 'https://x-access-token:ghs_secret@git.invalid/acme/control.git',
      recorded: 'https://git.invalid/acme/control.git',
    },
    { origin: 'git@git.invalid:acme/control.git', recorded: 'git@git.invalid:acme/control.git' },
    { origin: undefined, recorded: undefined },
    { origin: '/srv/git/control.git', recorded: undefined },
  ])('origin $origin → $recorded, never a local path', async ({ origin, recorded }) => {
    const f = fleetWithControl(origin);
    const r = await run({ cwd: f.control, cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir }, mode: 'variants' });
    expect(r.results.map((x) => [x.variant, x.action])).toEqual([['web', 'proposed']]);
    const kptfile = f.files('cluster-01', 'kdelta/web', 'web').Kptfile!;
    expect(ANNOTATION.exec(kptfile)?.[1]).toBe(recorded);
    expect(kptfile).not.toContain(f.control);
    expect(kptfile).not.toContain('ghs_secret');
  });
});
