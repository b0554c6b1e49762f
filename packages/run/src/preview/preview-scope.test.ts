import { describe, expect, it } from 'vitest';
import type { VariantPlan } from '../plan/plan.js';
import { scopeToUpstreamRef } from './preview-scope.js';

const SHA = 'b'.repeat(40);

function variant(name: string, repository: string, url: string): VariantPlan {
  return {
    name,
    upstream: {
      repository: { name: repository, namespace: 'default' },
      url,
      package: 'p',
      directory: 'p',
      revision: 'v1',
      policy: 'highest-semver',
    },
  } as unknown as VariantPlan;
}

const variants = [
  variant('a', 'catalog', 'https://github.com/org/catalog.git'),
  variant('b', 'catalog', 'https://github.com/org/catalog.git'),
  variant('c', 'other', 'https://github.com/org/other'),
];
const refs = async () => [
  { name: 'refs/heads/main', commit: 'a'.repeat(40) },
  { name: 'refs/pull/7/head', commit: SHA },
];

describe('scopeToUpstreamRef', () => {
  it("pins the Repository's variants to the commit of a pull request's ref, found by name or by the repository's URL", async () => {
    for (const repository of ['catalog', 'default/catalog', 'https://x-access-token:t@github.com/org/catalog/']) {
      const scope = await scopeToUpstreamRef(variants, { repository, ref: 'refs/pull/7/head' }, refs);
      expect(scope).toMatchObject({ repository: 'catalog', ref: 'refs/pull/7/head', commit: SHA });
      expect(scope.variants.map((v) => [v.name, v.upstream.revision, v.upstream.policy])).toEqual([
        ['a', SHA, 'pinned'],
        ['b', SHA, 'pinned'],
      ]);
    }
  });

  it('a branch by its short name; a full commit as it is', async () => {
    expect((await scopeToUpstreamRef(variants, { repository: 'catalog', ref: 'main' }, refs)).commit).toBe('a'.repeat(40));
    expect((await scopeToUpstreamRef(variants, { repository: 'other', ref: 'C'.repeat(40) }, refs)).commit).toBe('c'.repeat(40));
  });

  it('names the choices when the Repository or the ref is not found, or the Repository is not said among several', async () => {
    await expect(scopeToUpstreamRef(variants, { ref: 'main' }, refs)).rejects.toThrow(
      'the variants have 2 upstream Repositories ("catalog", "other"): name the one the ref is of',
    );
    await expect(scopeToUpstreamRef(variants, { repository: 'nope', ref: 'main' }, refs)).rejects.toThrow(
      'upstream Repository "nope" is the upstream of no variant (upstreams: "catalog", "other")',
    );
    await expect(scopeToUpstreamRef(variants, { repository: 'catalog', ref: 'refs/pull/8/head' }, refs)).rejects.toMatchObject({
      code: 'invalid-option',
      message: expect.stringContaining(
        'upstream ref "refs/pull/8/head" is not a ref, a branch, a tag or a full commit of https://github.com/org/catalog.git',
      ),
    });
  });
});
