import { describe } from 'vitest';
import { visitorTable } from './__fixtures__/visitor-table.js';
import { pinned } from './pinned.js';
import { kptRules } from './rules.js';
import { upstreamWins } from './upstream-wins.js';

// The pin's visitor decides the fields at or above a `# kdelta:local` pin.
const visitor = pinned(upstreamWins(kptRules()));

describe('pinned: scalars', () => {
  visitorTable('scalar', visitor, 'upstream-wins', [
    {
      name: 'changed upstream: local kept, a decision',
      origin: '1',
      upstream: '2',
      local: '3 # kdelta:local',
      decision: { take: 'local', rule: 'pinned-local', report: 'pinned' },
      expected: 3,
      reports: ['.f pinned'],
    },
    {
      name: 'unchanged upstream: local kept, nothing to report',
      origin: '1',
      upstream: '1',
      local: '3 # kdelta:local',
      decision: { take: 'local', rule: 'pinned-local' },
      expected: 3,
    },
    {
      name: 'deleted upstream: local kept',
      origin: '1',
      local: '1 # kdelta:local',
      decision: { take: 'local', rule: 'pinned-local', report: 'pinned' },
      expected: 1,
      reports: ['.f pinned'],
    },
  ]);
});

describe('pinned: maps', () => {
  visitorTable('map', visitor, 'upstream-wins', [
    {
      name: 'pinned: kept whole',
      origin: 'a: 1',
      upstream: 'a: 2\nb: 1',
      local: '# kdelta:local\na: 1',
      decision: { action: 'keep', rule: 'pinned-local', report: 'pinned' },
      expected: { a: 1 },
      reports: ['.f pinned'],
    },
    {
      name: 'holding a pinned field, null upstream: merged into local, never cleared',
      origin: 'a: 1\nb: 1',
      upstream: 'null',
      local: 'a: 1 # kdelta:local\nb: 1',
      decision: { action: 'merge', base: 'local', rule: 'pinned-local' },
      expected: { a: 1 },
      reports: ['.f.a pinned'],
    },
    {
      name: 'holding a pinned field: the other fields follow the strategy',
      origin: 'a: 1\nb: 1',
      upstream: 'a: 2\nb: 2',
      local: 'a: 1 # kdelta:local\nb: 1',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: { a: 1, b: 2 },
      reports: ['.f.a pinned'],
    },
  ]);
});

describe('pinned: associative lists', () => {
  visitorTable('associative list', visitor, 'upstream-wins', [
    {
      name: 'pinned: kept whole',
      origin: '- name: a',
      upstream: '- name: a\n- name: b',
      local: '# kdelta:local\n- name: a',
      decision: { action: 'keep', rule: 'pinned-local', report: 'pinned' },
      expected: [{ name: 'a' }],
      reports: ['.f pinned'],
    },
    {
      name: 'an item holding a pin, list deleted upstream: the item stays',
      origin: '- name: a\n  v: 1\n- name: b',
      local: '- name: a\n  v: 1 # kdelta:local\n- name: b',
      decision: { action: 'merge', base: 'local', rule: 'pinned-local' },
      expected: [{ name: 'a', v: 1 }],
      reports: ['.f[name="a"].v pinned'],
    },
  ]);
});

describe('pinned: sets', () => {
  visitorTable('set', visitor, 'upstream-wins', [
    {
      name: 'pinned: kept whole',
      origin: '[a]',
      upstream: '[a, b]',
      local: '[a] # kdelta:local',
      decision: { action: 'keep', rule: 'pinned-local', report: 'pinned' },
      expected: ['a'],
      reports: ['.f pinned'],
    },
  ]);
});

describe('pinned: atomic lists', () => {
  visitorTable('atomic list', visitor, 'upstream-wins', [
    {
      name: 'pinned: local kept',
      origin: '[a]',
      upstream: '[b]',
      local: '[a] # kdelta:local',
      decision: { take: 'local', rule: 'pinned-local', report: 'pinned' },
      expected: ['a'],
      reports: ['.f pinned'],
    },
  ]);
});
