import { describe, expect, it } from 'vitest';
import type { PlannedJob } from '../plan/jobs-plan.js';
import { describeCollision, findCollisions, type PlannedProposal } from '../plan/names.js';
import type { VariantPlan } from '../plan/plan.js';
import { groupOf, groupTarget, shardKeyOf, type PolicyOf } from './group-names.js';
import { groupJobs } from './groups.js';
import type { UpdatePolicy } from './policy.js';

// Which variants a policy's `group: repository` puts in one proposal, decided on planned jobs.

function policy(name: string, group: UpdatePolicy['group']): UpdatePolicy {
  return {
    name,
    source: { file: 'policy.yaml', document: 0 } as unknown as UpdatePolicy['source'],
    selector: {},
    updateTypes: new Set(['patch', 'minor', 'major']),
    ignore: [],
    minimumReleaseAgeMs: 0,
    separateMajor: true,
    freezes: [],
    limits: {},
    group,
  };
}

function variant(name: string, repository: string, options: { url?: string; branch?: string } = {}): VariantPlan {
  return {
    name,
    downstream: {
      repository: { name: repository },
      url: options.url ?? `https://github.com/org/${repository}.git`,
      branch: options.branch ?? 'main',
      package: name,
      directory: name,
    },
  } as unknown as VariantPlan;
}

const job = (v: VariantPlan): PlannedJob => ({
  kind: 'variant',
  variant: v.name,
  downstream: `${v.downstream.repository.name}/${v.name}`,
  plan: v,
});

const PLATFORM = policy('platform', 'repository');
const SINGLE = policy('single', 'none');
/** web*, api* and db* are the platform policy's (grouped), solo* the single one's; the rest no policy's. */
const policyOf: PolicyOf = (v) => (/^(web|api|db)/.test(v.name) ? PLATFORM : v.name.startsWith('solo') ? SINGLE : undefined);

/** The jobs as `kind name[members]`. */
function shape(jobs: readonly PlannedJob[]): string[] {
  return jobs.map((j) =>
    j.kind === 'group'
      ? `group ${j.variant}@${j.downstream}[${j.group.members.map((m) => m.variant).join(',')}]`
      : `${j.kind} ${j.variant}`,
  );
}

describe('groupJobs', () => {
  const cases: { name: string; jobs: VariantPlan[]; want: string[] }[] = [
    {
      name: 'two packages of one repository: one group job, where the first member was',
      jobs: [variant('other', 'cluster-01'), variant('web', 'cluster-01'), variant('api', 'cluster-01')],
      want: ['variant other', 'group group-platform@cluster-01[api,web]'],
    },
    {
      name: 'a second repository gets its own group',
      jobs: [variant('web', 'cluster-01'), variant('api', 'cluster-01'), variant('web-2', 'cluster-02')],
      want: ['group group-platform@cluster-01[api,web]', 'group group-platform@cluster-02[web-2]'],
    },
    {
      name: 'another base branch of one repository is another group',
      jobs: [variant('web', 'cluster-01'), variant('api', 'cluster-01', { branch: 'staging' })],
      want: ['group group-platform@cluster-01[web]', 'group group-platform@cluster-01[api]'],
    },
    {
      name: 'two spellings of one repository URL are one repository',
      jobs: [variant('web', 'cluster-01'), variant('api', 'cluster-01', { url: 'https://GitHub.com/org/cluster-01' })],
      want: ['group group-platform@cluster-01[api,web]'],
    },
    {
      name: 'a group of one is still a group',
      jobs: [variant('db', 'cluster-03')],
      want: ['group group-platform@cluster-03[db]'],
    },
    {
      name: 'variants of a policy without grouping, and of no policy, stay as they are',
      jobs: [variant('solo-a', 'cluster-01'), variant('solo-b', 'cluster-01'), variant('free', 'cluster-01')],
      want: ['variant solo-a', 'variant solo-b', 'variant free'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(shape(groupJobs(c.jobs.map(job), policyOf))).toEqual(c.want);
    });
  }

  it('leaves jobs of other kinds as they are', () => {
    const removal = { kind: 'removal', variant: 'gone', downstream: 'cluster-01/gone' } as unknown as PlannedJob;
    expect(groupJobs([removal, job(variant('web', 'cluster-01'))], policyOf)[0]).toBe(removal);
  });
});

describe('shardKeyOf', () => {
  it("puts every member of a group in the group's shard, and any other variant by its name", () => {
    expect(shardKeyOf(variant('web', 'cluster-01'), policyOf)).toBe(shardKeyOf(variant('api', 'cluster-01'), policyOf));
    expect(shardKeyOf(variant('web', 'cluster-01'), policyOf)).not.toBe(shardKeyOf(variant('api', 'cluster-02'), policyOf));
    expect(shardKeyOf(variant('free', 'cluster-01'), policyOf)).toBe('free');
  });
});

describe('group names', () => {
  it('a group proposes on branch <prefix>group-<policy>, which a variant of that name would share: a collision', () => {
    const g = groupOf(variant('web', 'cluster-01'), policyOf)!;
    expect(g.name).toBe('group-platform');
    const target = groupTarget(
      { name: g.name, repository: 'cluster-01', url: 'https://github.com/org/cluster-01.git', base: 'main' },
      'kdelta/',
    );
    expect(target).toMatchObject({ head: 'kdelta/group-platform', base: 'main', downstream: 'cluster-01' });
    const member = (name: string): PlannedProposal => ({ label: `variant "${name}"`, target, directory: name, group: g.key });
    // the members share the branch: no collision between them
    expect(findCollisions([member('web'), member('api')])).toEqual([]);
    // a variant named like the group, in the same repository, would overwrite its proposal
    const namesake: PlannedProposal = { label: 'variant "group-platform"', target, directory: 'group-platform' };
    expect(findCollisions([member('web'), namesake]).map(describeCollision)).toEqual([
      'variant "web" and variant "group-platform" would share the branch "kdelta/group-platform" of https://github.com/org/cluster-01: each would overwrite the other\'s proposal',
    ]);
    // two members writing one directory still collide
    expect(findCollisions([member('web'), { ...member('web'), label: 'variant "web-too"' }])).toHaveLength(1);
  });
});
