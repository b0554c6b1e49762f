import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { cliFleets, mergeBranch } from '../../test/run/__fixtures__/cli-fleet.js';
import { githubFleets } from '../../test/run/__fixtures__/github-fleet.js';

/**
 * What `kdelta proposals` prints: a declined proposal and how to undo the decline on its forge, a
 * merged one (declining and settling are run behaviours: packages/run/test/scenarios/).
 */

const local = cliFleets();
const hub = githubFleets({ owner: 'listed' });

describe('kdelta proposals', () => {
  it('a declined proposal, local forge: listed as declined, with the record to delete to undo it', async () => {
    const f = local.fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await local.kdelta(f, 'run')).code).toBe(0);
    // a reviewer says no on the local forge: the proposal's branch is deleted, unmerged
    execFileSync('git', ['update-ref', '-d', 'refs/heads/kdelta/web'], { cwd: f.downstream('cluster-01') });
    const declined = await local.kdelta(f, 'run');
    expect(declined.code).toBe(0);
    expect(declined.stdout).toMatch(/web\s+cluster-01\/web\s+declined/);

    const listed = await local.kdelta(f, 'proposals');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/declined\s+cluster-01\s+kdelta\/web/);
    expect(listed.stdout).toContain('To undo a decline, delete its record and run again:\n  rm .kdelta/proposals/cluster-01/web.md');
  });

  it('a declined proposal, GitHub: listed as declined with its pull request, and how to undo it there', async () => {
    const f = await hub.fleet(['cluster-01'], { control: { 'web.yaml': packageVariant('web', 'cluster-01') } });
    const slug = f.slug('cluster-01');
    expect((await hub.kdelta(f, 'run', '--forge', 'github')).code).toBe(0);
    const [pull] = hub.gh.pulls(slug);
    await hub.patchPull(slug, pull!.number, { state: 'closed' });
    const declined = await hub.kdelta(f, 'run', '--forge', 'github');
    expect(declined.code).toBe(0);
    expect(declined.stdout).toMatch(/web\s+cluster-01\/web\s+declined/);

    const listed = await hub.kdelta(f, 'proposals', '--forge', 'github');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/declined\s+cluster-01\s+kdelta\/web/);
    expect(listed.stdout).toContain(
      'To undo a decline, reopen the pull request, or (when it cannot be reopened) add the label kdelta:propose-again',
    );
    expect(listed.stdout).toContain(`/${slug}/pull/${pull!.number}`);
  });

  it('a merged proposal whose render failed is listed as merged, with no word of the render', async () => {
    const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-proposals-fn-'));
    try {
      // an exec function in the variant's pipeline: refused without --allow-exec, so the render fails
      const fn = join(fnDir, 'pass.sh');
      writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });
      const f = local.fleet(['cluster-01']);
      f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`) });
      expect((await local.kdelta(f, 'run')).stdout).toMatch(/web\s+cluster-01\/web\s+proposed, render failed/);
      mergeBranch(f, 'cluster-01', 'kdelta/web');
      const next = await local.kdelta(f, 'run');
      expect(next.code).toBe(0);
      expect(next.stdout).toMatch(/web\s+cluster-01\/web\s+up-to-date/);
      expect(next.stdout).not.toContain('render failed');
      const listed = await local.kdelta(f, 'proposals', '--json');
      expect(JSON.parse(listed.stdout)).toEqual({ proposals: [expect.objectContaining({ state: 'merged' })], rollouts: [] });
      expect(listed.stdout).not.toContain('render');
    } finally {
      rmSync(fnDir, { recursive: true, force: true });
    }
  });
});
