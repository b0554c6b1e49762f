import { describe, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { githubFleets } from '../../test/run/__fixtures__/github-fleet.js';

// `kdelta dashboard --forge github`: the issue a run keeps in the control repository, printed as it is.

const hub = githubFleets({ owner: 'board' });

describe('kdelta dashboard --forge github', () => {
  it('prints the issue a run keeps; before any run, says there is none (exit 1)', async () => {
    const f = await hub.fleet(['cluster-01'], { control: { 'bad.yaml': packageVariant('bad', 'cluster-01', '', 'v9') } });
    const control = `${f.owner}/control`;
    await hub.gh.createRepo(control, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });

    const none = await hub.kdelta(f, 'dashboard', '--forge', 'github', '--dashboard-repo', control);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no dashboard yet (an issue "kdelta dashboard" in ${control})`);

    expect((await hub.kdelta(f, 'run', '--forge', 'github', '--dashboard-repo', control)).code).toBe(1);
    const shown = await hub.kdelta(f, 'dashboard', '--forge', 'github', '--dashboard-repo', control);
    expect(shown.code).toBe(0);
    const issue = hub.gh.issues(control).find((i) => i.title === 'kdelta dashboard')!;
    expect(shown.stdout).toBe(issue.body!.endsWith('\n') ? issue.body : `${issue.body}\n`);
    expect(shown.stdout).toContain('- [ ] <!-- kdelta-retry:bad%20cluster-01%2Fbad --> retry `bad` → `cluster-01/bad`');
  });
});
