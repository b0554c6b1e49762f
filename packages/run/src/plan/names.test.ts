import { describe, expect, it } from 'vitest';
import { createLocalForge } from '../forges/local.js';
import { describeCollision, findCollisions, objectNameProblem, type PlannedProposal } from './names.js';

const planned = (label: string, repo: string, head: string, directory: string, downstream = 'cluster-01'): PlannedProposal => ({
  label,
  target: { downstream, repo, head, base: 'main' },
  directory,
});

describe('objectNameProblem', () => {
  it('accepts Kubernetes object names and refuses the rest, naming the rule', () => {
    for (const n of ['web', 'web-1', 'a.b', '0x']) expect(objectNameProblem(n)).toBeUndefined();
    for (const n of ['a/b', 'a_b', 'Web', '-a', 'a-', '', 'a..b', 'x'.repeat(254)]) {
      expect(objectNameProblem(n), n).toMatch(/is not a valid Kubernetes object name \(RFC 1123 subdomain/);
    }
  });
});

describe('findCollisions', () => {
  it('finds two proposals on one branch of one repository, however its URL is spelled', () => {
    const found = findCollisions([
      planned('variant "a"', 'https://github.com/o/r', 'kdelta/x', 'a'),
      planned('variant "b"', 'https://tok@GitHub.com/o/r.git/', 'kdelta/x', 'b'),
    ]);
    expect(found.map(describeCollision)).toEqual([
      'variant "a" and variant "b" would share the branch "kdelta/x" of https://github.com/o/r: each would overwrite the other\'s proposal',
    ]);
  });

  it('finds two proposals writing one package directory of one repository', () => {
    const found = findCollisions([
      planned('variant "a"', '/srv/r.git', 'kdelta/a', 'web'),
      planned('variant "b"', '/srv/r', 'kdelta/b', 'web'),
    ]);
    expect(found).toHaveLength(1);
    expect(describeCollision(found[0]!)).toContain('package directory "web" of /srv/r');
  });

  it("finds two proposals sharing one of the local forge's record files (a/b and a_b)", () => {
    const forge = createLocalForge({ dir: '/records', displayRoot: '/', branchPrefix: 'kdelta/' });
    const found = findCollisions(
      [planned('update "a/b"', '/srv/r', 'kdelta/update-a/b', 'a/b'), planned('update "a_b"', '/srv/r', 'kdelta/update-a_b', 'a_b')],
      (t) => forge.recordOf?.(t),
    );
    expect(found.map(describeCollision)).toEqual([
      'update "a/b" and update "a_b" would share the proposal record records/cluster-01/update-a_b.md: each would overwrite the other\'s proposal',
    ]);
  });

  it('finds nothing among proposals that share no branch, record or directory', () => {
    expect(
      findCollisions([
        planned('a', '/srv/r', 'kdelta/a', 'a'),
        planned('b', '/srv/r', 'kdelta/b', 'b'),
        planned('c', '/srv/s', 'kdelta/a', 'a'),
      ]),
    ).toEqual([]);
  });
});
