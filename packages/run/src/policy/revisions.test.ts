import { listReleases } from '@kdelta/git-source';
import { describe, expect, it } from 'vitest';
import type { UpdateType } from './policy.js';
import { chooseRevisions, releaseCandidates, type RevisionInput } from './revisions.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Tags of the upstream, each made `age` before NOW; commits named after the tag. */
function upstream(tags: Record<string, number>, prereleases = false) {
  const refs = Object.keys(tags).map((t) => ({ name: `refs/tags/${t}`, commit: commitOf(t) }));
  const dates = new Map(Object.entries(tags).map(([t, age]) => [t, new Date(NOW.getTime() - age)]));
  return { releases: listReleases(refs, { packagePath: 'basens', prereleases }), dates };
}

function commitOf(tag: string): string {
  return Buffer.from(tag).toString('hex').padEnd(40, '0').slice(0, 40);
}

const TAGS = {
  'v1.4.0': 30 * DAY,
  'v1.4.1': 10 * DAY,
  'v1.5.0': 2 * HOUR,
  'v2.0.0': 5 * DAY,
  'v2.1.0-rc.1': DAY,
};

function input(more: {
  types?: UpdateType[];
  ignore?: string[];
  age?: number;
  separateMajor?: boolean;
  current?: string | undefined;
  prereleases?: boolean;
  team?: RevisionInput['team'];
}): RevisionInput {
  const { releases, dates } = upstream(TAGS, more.prereleases);
  return {
    releases,
    dates,
    current: more.current === undefined ? undefined : { ref: more.current, commit: commitOf(more.current) },
    policy: {
      name: 'platform',
      updateTypes: new Set(more.types ?? ['patch', 'minor', 'major']),
      ignore: more.ignore ?? [],
      minimumReleaseAgeMs: more.age ?? 0,
      separateMajor: more.separateMajor ?? true,
    },
    team: more.team,
    package: 'blueprints/basens',
    now: NOW,
  };
}

const TEAM = 'cluster-01:.kdelta/downstream-policy.yaml';

describe('chooseRevisions: the release a policy lets a variant be proposed', () => {
  it.each([
    // case, input, target, major, why (a fragment)
    ['every step allowed, separate major: the minor, and the major on its own', {}, 'v1.5.0', 'v2.0.0', undefined],
    ['no separate major: the highest release', { separateMajor: false }, 'v2.0.1-none', undefined, undefined],
    ['patch only: the patch', { types: ['patch'] }, 'v1.4.1', undefined, undefined],
    [
      'patch and minor, majors not separate: the minor; the major is not allowed',
      { types: ['patch', 'minor'], separateMajor: false },
      'v1.5.0',
      undefined,
      undefined,
    ],
    [
      'minor only, from the latest minor: nothing, and why names the major and the policy',
      { types: ['patch', 'minor'], current: 'v1.5.0' },
      undefined,
      undefined,
      'v2.0.0 is a major update, and policy platform allows patch, minor',
    ],
    ['ignored by the fleet (a glob): the next lower', { ignore: ['v1.5.*'] }, 'v1.4.1', 'v2.0.0', undefined],
    ['ignored by version without v', { ignore: ['1.5.0', 'v2.*'] }, 'v1.4.1', undefined, undefined],
    ['minimum age 3d: v1.5.0 (2h old) waits, the patch goes', { age: 3 * DAY }, 'v1.4.1', 'v2.0.0', undefined],
    [
      'minimum age 3d from v1.4.1, patch and minor: nothing yet, and when',
      { age: 3 * DAY, current: 'v1.4.1', types: ['patch', 'minor'] },
      undefined,
      undefined,
      'v1.5.0 is 2h old, policy platform asks 3d: proposed from 2026-12-04T10:00Z',
    ],
    ['minimum age 7d: the major (5d old) waits too', { age: 7 * DAY }, 'v1.4.1', undefined, undefined],
    ['up to date: nothing newer', { current: 'v2.0.0' }, undefined, undefined, 'no release of blueprints/basens is newer than v2.0.0'],
    ['pre-releases counted: the rc is the major', { prereleases: true }, 'v1.5.0', 'v2.1.0-rc.1', undefined],
    [
      'a new package: the highest release, no step, no separate major',
      { current: undefined, types: ['patch'] },
      'v2.0.0',
      undefined,
      undefined,
    ],
    [
      "the team's ignore and update types narrow",
      { team: { file: TEAM, ignore: ['v1.4.1'], updateTypes: new Set<UpdateType>(['patch']) } },
      undefined,
      undefined,
      `v1.5.0 is a minor update, and ${TEAM} allows patch`,
    ],
    [
      "the team's longer age holds the fresh release",
      { team: { file: TEAM, ignore: [], minimumReleaseAgeMs: DAY }, separateMajor: false, types: ['patch', 'minor'] },
      'v1.4.1',
      undefined,
      undefined,
    ],
  ] as const)('%s', (_name, more, target, major, why) => {
    const current = 'current' in more ? more.current : 'v1.4.0';
    const choice = chooseRevisions(input({ ...more, current } as Parameters<typeof input>[0]));
    expect(choice.target?.ref).toBe(target === 'v2.0.1-none' ? 'v2.0.0' : target);
    expect(choice.major?.ref).toBe(major);
    if (why) expect(choice.why).toContain(why);
    else if (target) expect(choice.why).toBeUndefined();
  });

  it('says the step and the policy in the reason, and what newer waits', () => {
    const choice = chooseRevisions(input({ current: 'v1.4.0', age: 3 * DAY, separateMajor: false, types: ['patch', 'minor'] }));
    expect(choice.target).toEqual({
      ref: 'v1.4.1',
      commit: commitOf('v1.4.1'),
      updateType: 'patch',
      reason:
        'release v1.4.1 of blueprints/basens, a patch update, allowed by policy platform; newer ones wait: v2.0.0 is a major update, and policy platform allows patch, minor; v1.5.0 is 2h old, policy platform asks 3d: proposed from 2026-12-04T10:00Z',
    });
  });

  it('a tag whose date is not known is not proposed under a minimum age', () => {
    const choice = chooseRevisions({ ...input({ current: 'v1.5.0', age: DAY }), dates: new Map() });
    expect(choice.major).toBeUndefined();
    expect(choice.why).toContain('v2.0.0: its date is not known, and policy platform asks 1d');
  });

  it('the candidates whose dates are read: only those not excluded by step or ignore', () => {
    expect(releaseCandidates(input({ current: 'v1.4.1', types: ['patch', 'minor'], ignore: ['v1.5.0'] })).map((r) => r.tag)).toEqual([]);
    expect(releaseCandidates(input({ current: 'v1.4.0' })).map((r) => r.tag)).toEqual(['v2.0.0', 'v1.5.0', 'v1.4.1']);
  });

  it('Porch revisions (v<N>) carry no step: update types do not hold them', () => {
    const refs = ['basens/v1', 'basens/v2', 'basens/v3'].map((t) => ({ name: `refs/tags/${t}`, commit: commitOf(t) }));
    const choice = chooseRevisions({
      ...input({ types: ['patch'] }),
      releases: listReleases(refs, { packagePath: 'basens' }),
      current: { ref: 'basens/v1', commit: commitOf('basens/v1') },
    });
    expect(choice.target?.ref).toBe('basens/v3');
    expect(choice.target?.updateType).toBeUndefined();
  });
});
