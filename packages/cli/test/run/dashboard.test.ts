import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliFleets } from './__fixtures__/cli-fleet.js';

/** The dashboard's flags (what the dashboard does: packages/run/test/scenarios/dashboard.test.ts). */

const { fleet, kdelta } = cliFleets();

describe('kdelta run: the dashboard flags', () => {
  it('--dashboard-repo must be owner/name', async () => {
    const f = fleet(['cluster-01']);
    const bad = await kdelta(f, 'run', '--dashboard-repo', 'not a repo');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--dashboard-repo: the dashboard\'s repository must be owner/name, as GitHub names it (got "not a repo")');
    expect(existsSync(join(f.control, '.kdelta', 'proposals', 'dashboard.md'))).toBe(false);
  });
});
