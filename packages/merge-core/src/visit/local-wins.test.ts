import { describe } from 'vitest';
import { visitorTable } from './__fixtures__/visitor-table.js';
import { localWins } from './local-wins.js';
import { kptRules } from './rules.js';

// Local wins where both changed a value; every other row decides as seed 001's rules do.
const visitor = localWins(kptRules());

describe('local-wins: scalars', () => {
  visitorTable('scalar', visitor, 'local-wins', [
    {
      name: 'changed in both: local, a conflict local won',
      origin: '1',
      upstream: '2',
      local: '3',
      decision: { take: 'local', rule: 'both-changed-local-wins', report: 'local-won' },
      expected: 3,
      reports: ['.f local-won'],
    },
    {
      name: 'deleted upstream, changed locally: local stays',
      origin: '1',
      local: '3',
      decision: { take: 'local', rule: 'both-changed-local-wins', report: 'local-won' },
      expected: 3,
      reports: ['.f local-won'],
    },
    {
      name: 'changed in both to the same value: no conflict',
      origin: '1',
      upstream: '2',
      local: '2',
      decision: { take: 'local', rule: 'both-changed-local-wins' },
      expected: 2,
    },
    {
      name: 'changed upstream only: upstream',
      origin: '1',
      upstream: '2',
      local: '1',
      decision: { take: 'upstream', rule: 'upstream-changed' },
      expected: 2,
    },
  ]);
});

describe('local-wins: maps', () => {
  visitorTable('map', visitor, 'local-wins', [
    {
      name: 'null upstream, changed locally: merged into local, local changes stay',
      origin: 'a: 1\nb: 1',
      upstream: 'null',
      local: 'a: 2\nb: 1',
      decision: { action: 'merge', base: 'local', rule: 'both-changed-local-wins' },
      expected: { a: 2 },
      reports: ['.f.a local-won'],
    },
    {
      name: 'in both: merged, local wins a field changed in both',
      origin: 'a: 1\nb: 1',
      upstream: 'a: 2\nb: 2',
      local: 'a: 3\nb: 1',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: { a: 3, b: 2 },
      reports: ['.f.a local-won'],
    },
    {
      name: 'null upstream, unchanged locally: removed',
      origin: 'a: 1',
      upstream: 'null',
      local: 'a: 1',
      decision: { action: 'clear', rule: 'explicit-null' },
      expected: undefined,
    },
  ]);
});

describe('local-wins: associative lists', () => {
  visitorTable('associative list', visitor, 'local-wins', [
    {
      name: 'deleted upstream, changed locally: the items local added stay',
      origin: '- name: a',
      local: '- name: a\n- name: b',
      decision: { action: 'merge', base: 'local', rule: 'both-changed-local-wins' },
      expected: [{ name: 'b' }],
    },
    {
      name: 'an item local deleted and upstream changed stays deleted, a conflict local won',
      origin: '- name: a\n- name: b\n  v: 1',
      upstream: '- name: a\n- name: b\n  v: 2',
      local: '- name: a',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [{ name: 'a' }],
      reports: ['.f[name="b"] local-won'],
    },
    {
      name: 'an item changed in both: local fields win',
      origin: '- name: a\n  v: 1',
      upstream: '- name: a\n  v: 2',
      local: '- name: a\n  v: 3',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [{ name: 'a', v: 3 }],
      reports: ['.f[name="a"].v local-won'],
    },
  ]);
});

describe('local-wins: sets', () => {
  visitorTable('set', visitor, 'local-wins', [
    {
      name: 'deleted upstream, changed locally: merged into local',
      origin: '[a]',
      local: '[a, c]',
      decision: { action: 'merge', base: 'local', rule: 'both-changed-local-wins' },
      expected: ['c'],
    },
  ]);
});

describe('local-wins: atomic lists', () => {
  visitorTable('atomic list', visitor, 'local-wins', [
    {
      name: 'changed in both: local whole, a conflict local won',
      origin: '[a]',
      upstream: '[b]',
      local: '[c]',
      decision: { take: 'local', rule: 'both-changed-local-wins', report: 'local-won' },
      expected: ['c'],
      reports: ['.f local-won'],
    },
  ]);
});
