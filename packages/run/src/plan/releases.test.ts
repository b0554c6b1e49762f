import { createFleet, git, repository, tempDir, type Fleet } from '@kdelta/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { run } from '../run.js';

/**
 * Following releases as Nephio tags them: a catalog whose packages are released as Porch numbers
 * revisions (`free5gc-operator/v1` … `/v6`) beside an older repository-wide `v1.0.1`.
 */

const operator = (version: string): Record<string, string> => ({
  'free5gc-operator/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc-operator\n',
  'free5gc-operator/package-context.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: example\n',
  'free5gc-operator/operator.yaml': `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: free5gc-operator\n  labels:\n    release: ${version}\n`,
});

/** A PackageVariant of free5gc-operator into cluster-01, with no revision unless given. */
const variant = (revision?: string, annotations = ''): string =>
  `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: operator\n  namespace: default\n${annotations}spec:\n  upstream:\n    repo: catalog\n    package: free5gc-operator\n${revision === undefined ? '' : `    revision: ${revision}\n`}  downstream:\n    repo: cluster-01\n    package: free5gc-operator\n`;

function fleet(): { f: Fleet; go: () => ReturnType<typeof run> } {
  const f = createFleet(['cluster-01']);
  onTestFinished(() => f.cleanup());
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
  });
  const cacheDir = tempDir();
  return { f, go: () => run({ cwd: f.control, mode: 'variants', cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir } }) };
}

const released = (f: Fleet) => f.files('cluster-01', 'kdelta/operator', 'free5gc-operator')['operator.yaml'];

describe('a variant without a revision follows the latest release, as Porch and Nephio number them', () => {
  it('takes the highest <package>/v<N> over a repository-wide vX.Y.Z, and moves to v7 when it is tagged', async () => {
    const { f, go } = fleet();
    for (const n of [1, 2, 3, 4, 5, 6]) {
      f.publish(operator(`v${n}`), `free5gc-operator/v${n}`);
      // the repository-wide release Nephio's catalog also carries, older than the package's revisions
      if (n === 2) git(f.upstream, 'tag', 'v1.0.1');
    }
    f.writeControl({ 'operator.yaml': variant() });

    const first = await go();
    expect(first.results[0]).toMatchObject({
      action: 'proposed',
      upstream: { ref: 'free5gc-operator/v6', reason: 'latest release v6 of free5gc-operator' },
    });
    expect(released(f)).toContain('release: v6');

    // merged; nothing new upstream: up to date
    git(f.downstream('cluster-01'), 'update-ref', 'refs/heads/main', 'refs/heads/kdelta/operator');
    expect((await go()).results[0]).toMatchObject({ action: 'up-to-date' });

    f.publish(operator('v7'), 'free5gc-operator/v7');
    const next = await go();
    expect(next.results[0]).toMatchObject({
      action: 'proposed',
      upstream: { ref: 'free5gc-operator/v7', reason: 'latest release v7 of free5gc-operator' },
    });
    expect(released(f)).toContain('release: v7');
    git(f.downstream('cluster-01'), 'update-ref', 'refs/heads/main', 'refs/heads/kdelta/operator');
    // v10 sorts after v9 as a number, not as text
    for (const n of [8, 9, 10]) f.publish(operator(`v${n}`), `free5gc-operator/v${n}`);
    expect((await go()).results[0]).toMatchObject({ action: 'proposed', upstream: { ref: 'free5gc-operator/v10' } });
  });

  it.each([
    // the package's own semantic versions, when it has no revision of its own
    [
      ['free5gc-operator/v1.2.0', 'free5gc-operator/v1.10.0', 'v3.0.0'],
      'free5gc-operator/v1.10.0',
      'latest release v1.10.0 of free5gc-operator',
    ],
    // the repository's release, when the package has no tag of its own
    [
      ['other/v3', 'v1.0.1', 'v1.0.0'],
      'v1.0.1',
      'latest release v1.0.1 of the repository (free5gc-operator has no tag "free5gc-operator/v<N>" or "free5gc-operator/vX.Y.Z")',
    ],
  ])('with tags %j it follows %s', async (tags, ref, reason) => {
    const { f, go } = fleet();
    for (const tag of tags) f.publish(operator(tag), tag);
    f.writeControl({ 'operator.yaml': variant() });
    expect((await go()).results[0]).toMatchObject({ action: 'proposed', upstream: { ref, reason } });
  });

  it.each([
    ['no tag at all', [], ''],
    ['only tags of other packages and no release name', ['other/v3', 'free5gc-operator/latest', 'free5gc-operator/v1.0', 'release-2'], ''],
    [
      'a pre-release only',
      ['free5gc-operator/v2.0.0-rc.1'],
      '; pre-releases such as "free5gc-operator/v2.0.0-rc.1" count only with kdelta.dev/upstream-prereleases: "true"',
    ],
  ])('%s: the variant fails saying no release tag was found and which were looked for, and nothing is proposed', async (_, tags, pre) => {
    const { f, go } = fleet();
    f.publish(operator('main'));
    for (const tag of tags) f.publish(operator(tag), tag);
    f.writeControl({ 'operator.yaml': variant() });
    const refs = f.refs('cluster-01');
    const [result] = (await go()).results;
    expect(result).toMatchObject({ action: 'failed', code: 'no-release' });
    expect(result?.error).toBe(
      `.kdelta/operator.yaml: document 1 (PackageVariant "operator"): spec.upstream.revision: no release tag of free5gc-operator found in ${f.upstream} (looked for "free5gc-operator/v<N>", "free5gc-operator/vX.Y.Z", "vX.Y.Z"${pre}); without a revision the variant follows the package's latest release: tag one, or name a tag, branch or commit in spec.upstream.revision`,
    );
    expect(f.refs('cluster-01')).toEqual(refs);
  });

  it('highest-semver with a revision follows the latest release too, and says so when there is none', async () => {
    const { f, go } = fleet();
    f.publish(operator('v1'), 'free5gc-operator/v1');
    f.publish(operator('v2'), 'free5gc-operator/v2');
    f.writeControl({ 'operator.yaml': variant('v1', '  annotations:\n    kdelta.dev/upstream-policy: highest-semver\n') });
    expect((await go()).results[0]).toMatchObject({
      action: 'proposed',
      upstream: { ref: 'free5gc-operator/v2', reason: 'latest release v2 of free5gc-operator, kdelta.dev/upstream-policy: highest-semver' },
    });
    f.writeControl({
      'operator.yaml': variant('v1', '  annotations:\n    kdelta.dev/upstream-policy: highest-semver\n').replace(
        'package: free5gc-operator\n    revision',
        'package: upf\n    revision',
      ),
    });
    const [none] = (await go()).results;
    expect(none).toMatchObject({ action: 'failed', code: 'no-release' });
    expect(none?.error).toContain('metadata.annotations.kdelta.dev/upstream-policy: highest-semver, but no release tag of upf found in');
  });
});
