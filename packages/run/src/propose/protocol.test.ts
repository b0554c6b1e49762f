import { describe, expect, it } from 'vitest';
import { PROPOSE_AGAIN_LABEL, type ClosedFacts } from '../forges/forge.js';
import { closedState, FINGERPRINT_TRAILER, reachedBase, type BaseHistory } from './protocol.js';

describe('reached the base (one rule for every forge and every caller)', () => {
  /** A base whose history holds `commits` and commit messages with `lines` (each under a directory). */
  const base = (commits: string[], lines: Array<[string, string]>): BaseHistory & { looked: string[] } => {
    const looked: string[] = [];
    return {
      looked,
      contains: async (c) => commits.includes(c),
      hasLine: async (line, directory) => {
        looked.push(line);
        return lines.some(([l, d]) => l === line && (directory === '' || d === directory));
      },
    };
  };
  const squash = (fp: string, dir = 'web'): [string, string] => [`${FINGERPRINT_TRAILER}: ${fp}`, dir];
  it.each([
    ['its commit is in the base', base(['c1'], []), 'c1', false, 'web', true],
    ['its commit is in the base, the branch gone', base(['c1'], []), 'c1', true, 'web', true],
    ['squashed, the branch gone', base([], [squash('f1')]), 'c1', true, 'web', true],
    ['squashed, the branch gone, the commit unknown (no metadata)', base([], [squash('f1')]), undefined, true, 'web', true],
    ['squashed, the branch gone, any directory (a removal)', base([], [squash('f1', 'gone')]), 'c1', true, '', true],
    ['squashed, but the branch is still there: still the proposal', base([], [squash('f1')]), 'c1', false, 'web', false],
    ['another fingerprint squashed', base([], [squash('f2')]), 'c1', true, 'web', false],
    ['its fingerprint squashed in another package', base([], [squash('f1', 'api')]), 'c1', true, 'web', false],
    ['nothing of it in the base, the branch gone (declined)', base(['c0'], []), 'c1', true, 'web', false],
  ] as const)('%s → %s', async (_name, history, commit, branchGone, directory, expected) => {
    expect(await reachedBase(history, { commit, fingerprint: 'f1', branchGone, directory })).toBe(expected);
  });

  it('does not walk the base for a squash while the branch is there, nor for a proposal without a fingerprint', async () => {
    const history = base([], []);
    await reachedBase(history, { commit: 'c1', fingerprint: 'f1', branchGone: false, directory: 'web' });
    await reachedBase(history, { commit: 'c1', fingerprint: '', branchGone: true, directory: 'web' });
    expect(history.looked).toEqual([]);
  });
});

describe('how a closed proposal ended', () => {
  const facts = (over: Partial<ClosedFacts>): ClosedFacts => ({ merged: false, closedBy: undefined, labels: [], ...over });
  it.each([
    ['merged by the forge', facts({ merged: true, closedBy: { by: 'person' } }), 'merged'],
    ['kdelta closed it', facts({ closedBy: { by: 'kdelta', state: 'closed' } }), 'closed'],
    ['kdelta recorded it merged (its content reached the base)', facts({ closedBy: { by: 'kdelta', state: 'merged' } }), 'merged'],
    ['a person closed it unmerged', facts({ closedBy: { by: 'person' } }), 'declined'],
    [
      'a person closed it, then labelled it to propose again',
      facts({ closedBy: { by: 'person' }, labels: [PROPOSE_AGAIN_LABEL] }),
      'closed',
    ],
    ['not a body of kdelta’s', facts({ labels: ['x'] }), 'closed'],
  ] as const)('%s → %s', (_name, given, expected) => {
    expect(closedState(given)).toBe(expected);
  });
});
