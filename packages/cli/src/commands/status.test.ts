import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliFleets } from '../../test/run/__fixtures__/cli-fleet.js';

// `kdelta status` on the local forge: a person says a downstream commit is healthy (or not), as
// Flux posts a commit status on GitHub; a rollout reads it from statuses.json.

const { fleet, kdelta } = cliFleets({ downstreams: ['repo-a', 'repo-b'] });

const head = (dir: string) => execFileSync('git', ['rev-parse', 'refs/heads/main'], { cwd: dir, encoding: 'utf8' }).trim();

describe('kdelta status (local forge)', () => {
  it('sets a status on the head of a Repository branch, by name or path; another on a given commit; lists them', async () => {
    const f = fleet();
    const a = head(f.downstream('repo-a'));
    const set = await kdelta(f, 'status', 'set', 'repo-a', 'flux-system', 'failure', '--description', 'kustomization apps failed');
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toBe(`flux-system failure on repo-a ${a.slice(0, 12)} (.kdelta/proposals/statuses.json)\n`);
    // the same slot, by the repository's path: replaced
    expect((await kdelta(f, 'status', 'set', f.downstream('repo-a'), 'flux-system', 'success')).code).toBe(0);
    const b = head(f.downstream('repo-b'));
    expect((await kdelta(f, 'status', 'set', 'repo-b', 'flux-system', 'pending', '--commit', b)).code).toBe(0);
    const kept = JSON.parse(readFileSync(join(f.control, '.kdelta', 'proposals', 'statuses.json'), 'utf8')) as { statuses: unknown[] };
    expect(kept.statuses).toEqual([
      expect.objectContaining({ downstream: 'repo-a', commit: a, name: 'flux-system', state: 'success' }),
      expect.objectContaining({ downstream: 'repo-b', commit: b, name: 'flux-system', state: 'pending' }),
    ]);
    const listed = await kdelta(f, 'status', 'list');
    expect(listed.stdout).toMatch(
      new RegExp(
        `^repo-a  ${a.slice(0, 12)}  flux-system  success  \\(.+\\)\\nrepo-b  ${b.slice(0, 12)}  flux-system  pending  \\(.+\\)\\n$`,
      ),
    );
  });

  it.each([
    [
      ['set', 'repo-z', 'flux-system', 'success'],
      /no Repository of \.kdelta is "repo-z" \(by name, path or URL\); its Repositories:\n {2}catalog .*\n {2}repo-a /,
    ],
    [['set', 'repo-a', 'flux-system', 'green'], /the state must be one of success, failure, pending \(got "green"\)/],
    [['set', 'repo-a', 'flux-system'], /set needs <downstream> <name> <success\|failure\|pending>/],
    [
      ['set', 'repo-a', 'flux-system', 'success', '--commit', 'abc123'],
      /--commit: a full commit id, as `git rev-parse` prints it \(got "abc123"\)/,
    ],
    [['sett'], /unknown action "sett": set or list/],
  ])('refuses %j, saying what is wrong, and writes nothing', async (args, message) => {
    const f = fleet();
    const r = await kdelta(f, 'status', ...args);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(() => readFileSync(join(f.control, '.kdelta', 'proposals', 'statuses.json'))).toThrow();
  });

  it('--help says what it is for', async () => {
    const f = fleet();
    const r = await kdelta(f, 'status', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('kdelta status set <downstream> <name> <success|failure|pending>');
  });
});
