import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, git, packageVariant, repository, tempDir, writeTree } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { run } from '../run.js';

const deployment = (replicas: number, args: readonly string[]) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: proxy\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: proxy\n        image: kube-rbac-proxy:v0.15\n        args: ${JSON.stringify(args)}\n`;
const args = ['--secure-listen-address=0.0.0.0:8443', '--upstream=http://127.0.0.1:8080/', '--logtostderr=true', '--v=0'];

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
    const commit = (files: Record<string, string>, subject: string) => {
      writeTree(f.upstream, files);
      git(f.upstream, 'add', '--all');
      git(f.upstream, 'commit', '--quiet', '-m', subject);
      return git(f.upstream, 'rev-parse', 'HEAD');
    };
    const scale = commit({ 'base-ns/proxy.yaml': deployment(2, args) }, 'Scale the proxy to 2');
    commit({ 'README.md': 'the catalog\n' }, 'Describe the catalog');
    const verbose = commit({ 'base-ns/proxy.yaml': deployment(2, [...args.slice(0, 3), '--v=2']) }, 'Log more');
    git(f.upstream, 'tag', 'base-ns/v2');
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
        `- \`${verbose.slice(0, 12)}\` by Test: \`Log more\``,
        `- \`${scale.slice(0, 12)}\` by Test: \`Scale the proxy to 2\``,
      ].join('\n'),
    );
    expect(section).not.toContain('Describe the catalog');
  });
});
