import { join } from 'node:path';
import { BAD_SETTINGS, createFleet, type Fleet, packageVariant, repository, tempDir } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { settingRow } from '@kdelta/run';
import { main } from '../main.js';

const env = {
  ...process.env,
  KDELTA_CACHE_DIR: tempDir(),
  GIT_AUTHOR_NAME: 'kdelta',
  GIT_AUTHOR_EMAIL: 'kdelta@noreply.invalid',
  GIT_COMMITTER_NAME: 'kdelta',
  GIT_COMMITTER_EMAIL: 'kdelta@noreply.invalid',
};

async function kdelta(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const code = await main(args, { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd, env });
  return { code, ...out };
}

/** A fleet whose RunSettings moves the records and the branches away from the defaults. */
function fleet(): Fleet {
  const f = createFleet(['cluster-01']);
  onTestFinished(() => f.cleanup());
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'settings.yaml':
      'apiVersion: kdelta.dev/v1alpha1\nkind: RunSettings\nmetadata:\n  name: settings\nspec:\n  branchPrefix: fleet/\n  proposalsDir: records\n',
  });
  return f;
}

const FLAGS = ['forge', 'proposals-dir', 'branch-prefix'];

describe('kdelta proposals reads its settings as kdelta run does', () => {
  it.each(BAD_SETTINGS.filter((c) => c.flag !== undefined && FLAGS.includes(c.flag)))(
    '--$flag "$text" is refused with the rule kdelta run, the Action and RunSettings refuse it with',
    async (c) => {
      const r = await kdelta(tempDir(), 'proposals', `--${c.flag}=${c.text}`);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`--${c.flag}: ${c.problem}`);
    },
  );

  it('lists what kdelta run made where RunSettings put it (records, branch prefix); a flag overrides RunSettings', async () => {
    const f = fleet();
    expect((await kdelta(f.control, 'run', '--mode', 'variants')).code).toBe(0);
    const listed = await kdelta(f.control, 'proposals');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/open\s+cluster-01\s+fleet\/web\s+0\s+kdelta: add web/);
    const json = JSON.parse((await kdelta(f.control, 'proposals', '--json')).stdout) as { proposals: { file: string }[] };
    expect(json.proposals.map((p) => p.file)).toEqual([join('records', 'cluster-01', 'web.md')]);
    expect((await kdelta(f.control, 'proposals', '--proposals-dir', '.kdelta/proposals')).stdout).toBe('no proposals\n');
  });

  it("explains each of its setting flags with the run's own help line", async () => {
    const help = (await kdelta(tempDir(), 'proposals', '--help')).stdout.replace(/\s+/g, ' ');
    for (const key of ['forge', 'proposalsDir', 'branchPrefix'] as const) {
      const row = settingRow(key);
      expect(help).toContain(`--${row.flag} ${row.arg} ${row.help}`);
    }
  });
});
