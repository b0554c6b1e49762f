import { describe, expect, it } from 'vitest';
import { withAutoMergeOff } from './proposal-metadata.js';
import type { Proposal } from '../forges/forge.js';
import { autoMergeToTurnOff, draftOf, type ReviewFacts, reviewGate } from './review-gate.js';

const human = 'a'.repeat(40);
const other = 'b'.repeat(40);
const failure = { kptfile: 'web/Kptfile', field: 'pipeline.mutators[0]', function: 'set-labels', message: 'boom', results: [] };

describe('reviewGate: nothing merges that nobody reviewed', () => {
  const cases: { facts: ReviewFacts; state: string; ready: boolean | undefined; autoMerge: boolean; description: string }[] = [
    { facts: { kind: 'built', conflicts: 0 }, state: 'success', ready: true, autoMerge: true, description: 'no conflicts' },
    {
      facts: { kind: 'built', conflicts: 2 },
      state: 'failure',
      ready: false,
      autoMerge: false,
      description: "2 conflict(s) to review: see the proposal's conflict report",
    },
    {
      facts: { kind: 'built', conflicts: 1, renderFailure: failure },
      state: 'failure',
      ready: false,
      autoMerge: false,
      description: 'render failed: function set-labels (web/Kptfile pipeline.mutators[0]); 1 conflict(s): see the proposal',
    },
    {
      facts: { kind: 'built', conflicts: 0, notReady: ['config.injection.ConfigMap.endpoints'] },
      state: 'failure',
      ready: false,
      autoMerge: false,
      description: 'readiness gate(s) not met (config.injection.ConfigMap.endpoints): see the proposal',
    },
    {
      facts: { kind: 'built', conflicts: 0, carried: [human] },
      state: 'success',
      ready: true,
      autoMerge: false,
      description: '1 commit(s) kdelta did not make (aaaaaaaaaaaa); no conflicts; review them (no auto-merge)',
    },
    {
      facts: { kind: 'built', conflicts: 3, carried: [human, other] },
      state: 'failure',
      ready: false,
      autoMerge: false,
      description:
        "2 commit(s) kdelta did not make (aaaaaaaaaaaa, bbbbbbbbbbbb); 3 conflict(s) to review: see the proposal's conflict report",
    },
    {
      facts: { kind: 'left-alone', foreign: [human, other, human, other] },
      state: 'pending',
      ready: undefined,
      autoMerge: false,
      description:
        '4 commit(s) kdelta did not make (aaaaaaaaaaaa, bbbbbbbbbbbb, aaaaaaaaaaaa and 1 more): not checked by kdelta; review them',
    },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.facts).slice(0, 90)} → ${c.state}, ${c.autoMerge ? 'auto-merge allowed' : 'held'}`, () => {
      const gate = reviewGate(c.facts);
      expect(gate).toMatchObject({ status: { state: c.state, description: c.description }, ready: c.ready, autoMerge: c.autoMerge });
      // a reason whenever auto-merge is held, and none when it is not
      expect(gate.held === undefined).toBe(c.autoMerge);
      expect(gate.status.description.length).toBeLessThanOrEqual(140);
    });
  }
});

describe('withAutoMergeOff', () => {
  it('puts the line under the title, and replaces an earlier one (CRLF line ends too)', () => {
    const body = '## kdelta: update web\n\nUpdates web.\n';
    const once = withAutoMergeOff(body, '1 conflict(s) to review');
    expect(once).toBe(
      '## kdelta: update web\n\n> **kdelta turned auto-merge off**: 1 conflict(s) to review. A person merges it, once reviewed.\n\nUpdates web.\n',
    );
    expect(withAutoMergeOff(once, 'render failed')).toBe(
      '## kdelta: update web\n\n> **kdelta turned auto-merge off**: render failed. A person merges it, once reviewed.\n\nUpdates web.\n',
    );
    expect(withAutoMergeOff(once.replace(/\n/g, '\r\n'), 'again').match(/turned auto-merge off/g)).toHaveLength(1);
    expect(withAutoMergeOff('edited by a person\n', 'x')).toMatch(
      /^> \*\*kdelta turned auto-merge off\*\*: x\. .*\n\nedited by a person\n$/,
    );
  });
});

describe('autoMergeToTurnOff: one rule for the fast no-op, the rebuild and a branch left alone', () => {
  const open = (autoMerge: boolean | undefined) => ({ autoMerge }) as Proposal;
  const held = reviewGate({ kind: 'built', conflicts: 1 });
  const free = reviewGate({ kind: 'built', conflicts: 0 });
  it.each([
    ['auto-merge on, the gate holds it back', open(true), held, true],
    ['auto-merge on, nothing holds it back', open(true), free, false],
    ['auto-merge off, the gate holds it back', open(false), held, false],
    ['auto-merge unknown (a forge without it)', open(undefined), held, false],
    ['no open proposal', undefined, held, false],
  ] as const)('%s → %s', (_name, given, gate, expected) => {
    expect(autoMergeToTurnOff(given, gate)).toBe(expected);
  });
});

describe('draftOf: readiness under the forge’s draft policy, decided once for every forge', () => {
  it.each([
    // policy, ready, opening → draft
    ['conflicts', false, true, true],
    ['conflicts', false, false, true],
    ['conflicts', true, false, false],
    [undefined, false, true, true],
    [undefined, true, true, false],
    ['never', false, true, false],
    ['never', true, false, false],
    // opened as a draft, then left as it is: a person may mark it ready
    ['always', true, true, true],
    ['always', false, false, undefined],
    ['always', true, false, undefined],
    // readiness not known (a branch left alone): left as it is
    ['conflicts', undefined, false, undefined],
  ] as const)('%s, ready %s, opening %s → %s', (policy, ready, opening, expected) => {
    expect(draftOf(policy, ready, opening)).toBe(expected);
  });
});
