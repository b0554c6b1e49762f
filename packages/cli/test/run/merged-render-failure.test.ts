import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { cliFleets, mergeBranch, proposalRecord } from './__fixtures__/cli-fleet.js';

const { fleet, kdelta } = cliFleets();

// an exec function in the variant's pipeline: refused without --allow-exec, so the render fails
const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-run-fn-'));
afterAll(() => rmSync(fnDir, { recursive: true, force: true }));
const fn = join(fnDir, 'pass.sh');
writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });

describe('a merged proposal whose render failed', () => {
  it('is merged: the run, its record and `kdelta proposals` no longer say "render failed"', async () => {
    const f = fleet(['cluster-01']);
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`) });
    const first = await kdelta(f, 'run');
    expect(first.stdout).toMatch(/web\s+cluster-01\/web\s+proposed, render failed/);
    expect(proposalRecord(f, 'cluster-01', 'web')).toContain('\nrenderFailed: true\n');

    // a reviewer merges it as it is (unrendered)
    mergeBranch(f, 'cluster-01', 'kdelta/web');
    const next = await kdelta(f, 'run');
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/web\s+cluster-01\/web\s+up-to-date/);
    expect(next.stdout).not.toContain('render failed');
    const record = proposalRecord(f, 'cluster-01', 'web');
    expect(record).toMatch(/\nstate: merged\n/);
    expect(record).not.toContain('\nrenderFailed: true\n');

    // and the run after it says the same
    const again = await kdelta(f, 'run');
    expect(again.stdout).toMatch(/web\s+cluster-01\/web\s+up-to-date/);
    expect(again.stdout).not.toContain('render failed');
    const listed = await kdelta(f, 'proposals', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ state: 'merged' })]);
    expect(listed.stdout).not.toContain('render');
  });
});
