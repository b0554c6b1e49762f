import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initRepo, tempDir } from './__fixtures__/repo.js';
import { GitError } from './errors.js';
import {
  compareSemanticVersions,
  defaultBranch,
  detectMovedRef,
  latestRelease,
  listReleases,
  listTags,
  parseSemanticVersion,
  releaseTagPatterns,
  resolveRef,
} from './refs.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const repo = initRepo(join(root, 'upstream'), 'trunk');
repo.write({ 'pkg/a.yaml': 'a: 1\n' });
const c1 = repo.commit('one');
repo.tag('v1');
repo.tag('pkg/v1');
repo.tag('release', 'HEAD', true);
repo.write({ 'pkg/a.yaml': 'a: 2\n' });
const c2 = repo.commit('two');
repo.tag('pkg/v2');

describe('resolveRef', () => {
  it('resolves a branch, a tag, an annotated tag and a package-scoped tag on a local path', async () => {
    expect(await resolveRef({ repo: repo.dir, ref: 'trunk' })).toMatchObject({ kind: 'branch', commit: c2 });
    expect(await resolveRef({ repo: repo.dir, ref: 'v1' })).toMatchObject({ kind: 'tag', commit: c1, fullName: 'refs/tags/v1' });
    expect(await resolveRef({ repo: repo.dir, ref: 'release' })).toMatchObject({ kind: 'tag', commit: c1 });
    expect(await resolveRef({ repo: repo.dir, ref: 'v2', packagePath: '/pkg' })).toMatchObject({
      commit: c2,
      fullName: 'refs/tags/pkg/v2',
    });
  });

  it('works with file:// URLs and full commit ids', async () => {
    expect(await resolveRef({ repo: `file://${repo.dir}`, ref: 'v1' })).toMatchObject({ commit: c1 });
    expect(await resolveRef({ repo: repo.dir, ref: c1 })).toEqual({ ref: c1, kind: 'commit', commit: c1 });
  });

  it('reports an unknown ref with git-like wording', async () => {
    await expect(resolveRef({ repo: repo.dir, ref: 'nope' })).rejects.toMatchObject({
      code: 'unknown-revision',
      message: expect.stringContaining('unknown revision or path not in the working tree'),
    });
  });

  it('refuses refs and URLs that start with "-"', async () => {
    await expect(resolveRef({ repo: repo.dir, ref: '--upload-pack=touch /tmp/x' })).rejects.toMatchObject({ code: 'refused-argument' });
    await expect(resolveRef({ repo: '--upload-pack=evil', ref: 'main' })).rejects.toBeInstanceOf(GitError);
  });

  it('says when a path is not a repository', async () => {
    await expect(resolveRef({ repo: join(root, 'missing'), ref: 'main' })).rejects.toMatchObject({ code: 'not-a-repository' });
  });
});

describe('tags, default branch, moved tags', () => {
  it('lists tags sorted with peeled commits', async () => {
    const tags = await listTags({ repo: repo.dir });
    expect(tags.map((t) => t.name)).toEqual(['pkg/v1', 'pkg/v2', 'release', 'v1']);
    expect(tags.find((t) => t.name === 'release')?.commit).toBe(c1);
  });

  it("reads the remote's default branch", async () => {
    expect(await defaultBranch({ repo: repo.dir })).toBe('trunk');
  });

  it('detects a tag that moved since it was locked', async () => {
    const r = initRepo(join(root, 'moving'));
    r.write({ 'x.yaml': 'x: 1\n' });
    const first = r.commit();
    r.tag('stable');
    expect((await detectMovedRef({ repo: r.dir, ref: 'stable', lockedCommit: first })).moved).toBe(false);
    r.write({ 'x.yaml': 'x: 2\n' });
    const second = r.commit();
    r.tag('stable');
    expect(await detectMovedRef({ repo: r.dir, ref: 'stable', lockedCommit: first })).toMatchObject({ moved: true, commit: second });
  });
});

describe('latestRelease', () => {
  const refs = (...names: string[]) => names.map((name, i) => ({ name: `refs/tags/${name}`, commit: String(i).padStart(40, '0') }));
  it('orders by semantic version, prefers the package-scoped tags, and skips pre-releases unless asked', () => {
    const all = refs(
      'pkg/v1.2.0',
      'pkg/v1.10.0',
      'pkg/v1.11.0-rc.1',
      'pkg/v1.11.0-rc.10',
      'pkg/v1.11.0-beta',
      'v9.0.0',
      'other/v20.0.0',
      'pkg/sub/v30.0.0',
      'pkg/release',
    );
    expect(latestRelease(all, { packagePath: 'pkg' })).toMatchObject({ tag: 'pkg/v1.10.0', version: 'v1.10.0', scope: 'package' });
    expect(latestRelease(all, { packagePath: '/pkg/', prereleases: true })).toMatchObject({ tag: 'pkg/v1.11.0-rc.10' });
    expect(latestRelease(all, { packagePath: 'nope' })).toMatchObject({ tag: 'v9.0.0', scope: 'repository' });
    expect(latestRelease(refs('v1.0.0-rc.1', 'main'), {})).toBeUndefined();
  });
  // Nephio's catalogs: Porch revisions of each package beside an older repository-wide release
  const nephio = refs(
    'free5gc-operator/v1',
    'free5gc-operator/v2',
    'free5gc-operator/v9',
    'free5gc-operator/v10',
    'free5gc-operator/v06',
    'free5gc-operator/main',
    'free5gc-operator/sub/v40',
    'free5gc-cp/v3',
    'free5gc-cp/v1.2.0',
    'pkg-semver/v1.2.0',
    'pkg-semver/v1.10.0',
    'v1.0.1',
    'v1.0.0',
  );
  it.each([
    // package path, expected tag (undefined: no release), convention
    ['free5gc-operator', 'free5gc-operator/v10', 'revision'],
    ['/free5gc-operator/', 'free5gc-operator/v10', 'revision'],
    // a package's Porch revisions come before its semantic versions
    ['free5gc-cp', 'free5gc-cp/v3', 'revision'],
    ['pkg-semver', 'pkg-semver/v1.10.0', 'package-semver'],
    // `<package>/sub/v40` is the release of another package, `free5gc-operator/sub`
    ['free5gc-operator/sub', 'free5gc-operator/sub/v40', 'revision'],
    ['upf', 'v1.0.1', 'repository-semver'],
    ['', 'v1.0.1', 'repository-semver'],
  ] as const)('package %j: the latest release is %s (%s)', (packagePath, tag, convention) => {
    expect(latestRelease(nephio, { packagePath })).toMatchObject({
      tag,
      convention,
      scope: convention === 'repository-semver' ? 'repository' : 'package',
    });
  });
  it.each([
    // package path, every release oldest first
    ['free5gc-operator', ['free5gc-operator/v1', 'free5gc-operator/v2', 'free5gc-operator/v9', 'free5gc-operator/v10']],
    ['pkg-semver', ['pkg-semver/v1.2.0', 'pkg-semver/v1.10.0']],
    ['upf', ['v1.0.0', 'v1.0.1']],
    ['nope/', ['v1.0.0', 'v1.0.1']],
  ] as const)('package %j: its releases, oldest first, are those of the convention the latest comes from', (packagePath, tags) => {
    expect(listReleases(nephio, { packagePath }).map((r) => r.tag)).toEqual(tags);
    expect(listReleases(nephio, { packagePath }).at(-1)).toEqual(latestRelease(nephio, { packagePath }));
  });
  it('no release when no tag follows a convention, and says which tags were looked for', () => {
    const none = refs('other/v3', 'free5gc-operator/latest', 'free5gc-operator/v1.0', 'release-1', 'v2');
    expect(latestRelease(none, { packagePath: 'free5gc-operator' })).toBeUndefined();
    expect(releaseTagPatterns('/free5gc-operator/')).toEqual(['free5gc-operator/v<N>', 'free5gc-operator/vX.Y.Z', 'vX.Y.Z']);
    expect(releaseTagPatterns('')).toEqual(['vX.Y.Z']);
  });
  it('a release sorts above its pre-releases, numeric identifiers below alphanumeric ones', () => {
    const order = [
      'v1.0.0-alpha',
      'v1.0.0-alpha.1',
      'v1.0.0-alpha.beta',
      'v1.0.0-beta',
      'v1.0.0-beta.2',
      'v1.0.0-beta.11',
      'v1.0.0-rc.1',
      'v1.0.0',
    ];
    const parsed = order.map((v) => parseSemanticVersion(v)!);
    for (let i = 1; i < parsed.length; i++) expect(compareSemanticVersions(parsed[i - 1]!, parsed[i]!)).toBe(-1);
    expect(parseSemanticVersion('v01.0.0')).toBeUndefined();
  });
});
