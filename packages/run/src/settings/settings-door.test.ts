import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, type Fleet, packageVariant, repository, tempDir } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { preview } from '../preview/preview.js';
import { listProposals } from '../report/proposals.js';
import { run } from '../run.js';
import { normaliseSettings } from './settings.js';
import { textSettings } from './settings-sources.js';

const env = () => ({
  ...process.env,
  KDELTA_CACHE_DIR: tempDir(),
  GIT_AUTHOR_NAME: 'kdelta',
  GIT_AUTHOR_EMAIL: 'kdelta@noreply.invalid',
  GIT_COMMITTER_NAME: 'kdelta',
  GIT_COMMITTER_EMAIL: 'kdelta@noreply.invalid',
});

/** One downstream, one variant, and a RunSettings that sets the branch prefix and the records' directory. */
function fleet(): Fleet {
  const f = createFleet(['cluster-01']);
  onTestFinished(() => f.cleanup());
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'settings.yaml':
      'apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: settings\nspec:\n  branchPrefix: file/\n  proposalsDir: records\n',
  });
  return f;
}

/** Settings as a door reads and checks them: `kdelta run`'s flags by name. */
const flags = (given: Record<string, string | boolean>) => normaliseSettings(textSettings('flag', (name) => given[name]));

describe("a door's checked settings reach run() as they are", () => {
  it('over RunSettings and over the loose options: the branch is the one the flag names', async () => {
    const f = fleet();
    const report = await run({
      cwd: f.control,
      env: env(),
      mode: 'variants',
      branchPrefix: 'loose/',
      settings: flags({ 'branch-prefix': 'door/' }),
    });
    expect(report.results.map((r) => r.action)).toEqual(['proposed']);
    expect(f.refs('cluster-01')).toContain('refs/heads/door/web');
    expect(f.refs('cluster-01')).not.toMatch(/refs\/heads\/(loose|file)\//);
    // RunSettings still decides what the door left unset: the records are where it says
    expect(existsSync(join(f.control, 'records', 'cluster-01', 'web.md'))).toBe(true);
  });

  it('a preview writes nothing even when the settings a door gives say dry-run false', async () => {
    const f = fleet();
    const before = f.refs('cluster-01');
    const dryRunOff = normaliseSettings(textSettings('input', (name) => (name === 'dry-run' ? 'false' : undefined)));
    const report = await preview({ cwd: f.control, env: env(), mode: 'variants', settings: dryRunOff });
    expect(report.summary.total).toBe(1);
    expect(f.refs('cluster-01')).toBe(before);
    expect(existsSync(join(f.control, 'records'))).toBe(false);
  });
});

describe('the proposals listed are those a run with the same settings made', () => {
  it("RunSettings' records directory and branch prefix, unless the door sets them", async () => {
    const f = fleet();
    await run({ cwd: f.control, env: env(), mode: 'variants' });
    const listed = await listProposals({ cwd: f.control, env: env() });
    expect(listed.forge).toBe('local');
    expect(listed.proposals.map((p) => [p.head, p.url])).toEqual([['file/web', join('records', 'cluster-01', 'web.md')]]);
    const elsewhere = await listProposals({ cwd: f.control, env: env(), settings: flags({ 'proposals-dir': '.kdelta/proposals' }) });
    expect(elsewhere.proposals).toEqual([]);
  });
});
