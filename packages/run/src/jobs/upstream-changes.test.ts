import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, git, packageVariant, repository, tempDir, writeTree } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { fakeGitHubs } from '../forges/__fixtures__/fake-github.js';
import { run } from '../run.js';

const fake = fakeGitHubs();

const deployment = (replicas: number, args: readonly string[]) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: proxy\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: proxy\n        image: kube-rbac-proxy:v0.15\n        args: ${JSON.stringify(args)}\n`;
const args = ['--secure-listen-address=0.0.0.0:8443', '--upstream=http://127.0.0.1:8080/', '--logtostderr=true', '--v=0'];

/** Two commits on the upstream with these subjects, the second tagged; their ids. */
function release(upstream: string, commits: readonly [Record<string, string>, string][], tag: string): string[] {
  const ids = commits.map(([files, subject]) => {
    writeTree(upstream, files);
    git(upstream, 'add', '--all');
    git(upstream, 'commit', '--quiet', '-m', subject);
    return git(upstream, 'rev-parse', 'HEAD');
  });
  git(upstream, 'tag', '-f', tag);
  return ids;
}

describe('an update says what upstream changed, field by field, and by which commits (local forge, a real run)', () => {
  it('lists the fields each resource changed upstream and the commits between the two revisions that touch the package', async () => {
    const f = createFleet(['cluster-01']);
    onTestFinished(() => f.cleanup());
    f.publish({ 'base-ns/proxy.yaml': deployment(1, args) }, 'base-ns/v1');
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01'),
    });
    const cacheDir = tempDir();
    const options = { cwd: f.control, mode: 'variants' as const, cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir } };
    expect((await run(options)).results[0]?.action).toBe('proposed');
    // the first proposal is merged; upstream then moves in three commits, one of them outside the package
    git(f.root, 'clone', '--quiet', f.downstream('cluster-01'), join(f.root, 'merge'));
    git(join(f.root, 'merge'), 'merge', '--quiet', 'origin/kdelta/web');
    git(join(f.root, 'merge'), 'push', '--quiet', 'origin', 'main');
    const [scale, , verbose] = release(
      f.upstream,
      [
        [{ 'base-ns/proxy.yaml': deployment(2, args) }, 'Scale the proxy to 2'],
        [{ 'README.md': 'the catalog\n' }, 'Describe the catalog'],
        [{ 'base-ns/proxy.yaml': deployment(2, [...args.slice(0, 3), '--v=2']) }, 'Log more'],
      ],
      'base-ns/v2',
    );
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    const second = await run(options);
    expect(second.results[0]?.action).toBe('proposed');
    const record = readFileSync(join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md'), 'utf8');
    const section = record.slice(record.indexOf('### What upstream changed'), record.indexOf('### Provenance'));
    expect(section).toMatch(
      /^### What upstream changed\n\nFrom `[0-9a-f]{12}` to `[0-9a-f]{12}`: 1 resource\(s\) or file\(s\) changed upstream\.\n/,
    );
    expect(section).toContain(
      [
        '- changed `apps/Deployment proxy` in `proxy.yaml`',
        '  - `.spec.replicas`: `1` → `2`',
        '  - `.spec.template.spec.containers[name="proxy"].args`: [3] `"--v=0"` → `"--v=2"`',
      ].join('\n'),
    );
    expect(section).toContain(
      [
        'Commits that touch the package (2):',
        '',
        `- \`${verbose!.slice(0, 12)}\` by Test: \`Log more\``,
        `- \`${scale!.slice(0, 12)}\` by Test: \`Scale the proxy to 2\``,
      ].join('\n'),
    );
    expect(section).not.toContain('Describe the catalog');
  });
});

describe('on GitHub, an upstream on the same server: each commit links to its page', () => {
  it("names the upstream's commits with links to them", async () => {
    const gh = await fake();
    const f = createFleet([]);
    onTestFinished(() => f.cleanup());
    release(f.upstream, [[{ 'base-ns/proxy.yaml': deployment(1, args) }, 'Add the proxy']], 'base-ns/v1');
    await gh.createRepo('org/catalog', { defaultBranch: 'main' });
    const publish = () => git(f.upstream, 'push', '--quiet', '--force', '--tags', gh.gitDir('org/catalog'), 'main');
    publish();
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', `${gh.serverUrl}/org/catalog.git`),
        repository('cluster-01', `${gh.serverUrl}/org/cluster-01.git`),
      ].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01'),
    });
    const cacheDir = tempDir();
    const env: Record<string, string | undefined> = { ...process.env, KDELTA_CACHE_DIR: cacheDir };
    for (const k of [
      'GITHUB_TOKEN',
      'GH_TOKEN',
      'KDELTA_GIT_TOKEN',
      'GITHUB_API_URL',
      'GITHUB_SERVER_URL',
      'GITHUB_GRAPHQL_URL',
      'GITHUB_REPOSITORY',
    ])
      delete env[k];
    const options = {
      cwd: f.control,
      mode: 'variants' as const,
      cacheDir,
      env,
      forge: 'github' as const,
      dashboard: false as const,
      github: { token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, pacing: { writeSpacing: false, retryAfterUnitMs: 20 } },
    };
    expect((await run(options)).results[0]?.action).toBe('proposed');
    // merged: the base branch moves to the proposal's commit
    git(f.root, '--git-dir', gh.gitDir('org/cluster-01'), 'update-ref', 'refs/heads/main', 'refs/heads/kdelta/web');
    const [scale, verbose] = release(
      f.upstream,
      [
        [{ 'base-ns/proxy.yaml': deployment(2, args) }, 'Scale the proxy to 2'],
        [{ 'base-ns/proxy.yaml': deployment(2, [...args, '--v=2']) }, 'Log more'],
      ],
      'base-ns/v2',
    );
    publish();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    expect((await run(options)).results[0]?.action).toBe('proposed');
    const body = gh.pulls('org/cluster-01').at(-1)!.body ?? '';
    const page = (sha: string) => `${gh.serverUrl}/org/catalog/commit/${sha}`;
    expect(body).toContain(
      [
        'Commits that touch the package (2):',
        '',
        `- [\`${verbose!.slice(0, 12)}\`](${page(verbose!)}) by Test: \`Log more\``,
        `- [\`${scale!.slice(0, 12)}\`](${page(scale!)}) by Test: \`Scale the proxy to 2\``,
      ].join('\n'),
    );
    expect(body).toContain('  - `.spec.template.spec.containers[name="proxy"].args`: + `"--v=2"`');
  });
});
