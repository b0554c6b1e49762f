import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { cliFleets } from '../../test/run/__fixtures__/cli-fleet.js';

const { fleet, kdelta } = cliFleets();

// an exec function in the variants' pipeline: refused without --allow-exec, so every render fails alike
const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-proposals-fn-'));
afterAll(() => rmSync(fnDir, { recursive: true, force: true }));
const fn = join(fnDir, 'pass.sh');
writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });

describe('kdelta proposals', () => {
  it('shows which proposals hold their package unrendered, each distinct render failure once with the proposals it affects', async () => {
    const f = fleet(['cluster-01', 'cluster-02', 'cluster-03']);
    const pipeline = `  pipeline:\n    mutators:\n    - exec: ${fn}\n`;
    // the same package (web) in each downstream: the same failure, word for word
    const web = (name: string, downstream: string, extra = '') =>
      packageVariant(name, downstream, extra).replace(`    package: ${name}\n`, '    package: web\n');
    f.writeControl({
      'a.yaml': web('a', 'cluster-01', pipeline),
      'b.yaml': web('b', 'cluster-02', pipeline),
      'c.yaml': web('c', 'cluster-03'),
    });
    expect((await kdelta(f, 'run')).code).toBe(0);
    const listed = await kdelta(f, 'proposals');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^STATE +DOWNSTREAM +BRANCH +CONFLICTS +RENDER +TITLE +UPSTREAM$/);
    expect(lines.find((l) => l.includes('kdelta/a'))).toMatch(/ 0 +failed \[1\] +kdelta: /);
    expect(lines.find((l) => l.includes('kdelta/b'))).toMatch(/ 0 +failed \[1\] +kdelta: /);
    expect(lines.find((l) => l.includes('kdelta/c'))).toMatch(/ 0 +- +kdelta: /);
    expect(listed.stdout).toContain('\n2 proposal(s) hold their package unrendered (render failed; the next run renders again):\n');
    const shared = lines.filter((l) => l.startsWith('  [1] '));
    expect(shared).toHaveLength(1);
    expect(shared[0]).toContain(`function ${fn}: `);
    expect(shared[0]).toMatch(/ — 2 proposal\(s\): cluster-01 kdelta\/a, cluster-02 kdelta\/b$/);

    const json = (
      JSON.parse((await kdelta(f, 'proposals', '--json')).stdout) as {
        proposals: { head: string; renderFailure?: { function?: string; error: string } }[];
      }
    ).proposals;
    expect(json.find((r) => r.head === 'kdelta/a')?.renderFailure).toEqual({ function: fn, error: expect.stringContaining(fn) });
    expect(json.find((r) => r.head === 'kdelta/c')?.renderFailure).toBeUndefined();
  });
});
