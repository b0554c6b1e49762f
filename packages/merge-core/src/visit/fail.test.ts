import { describe } from 'vitest';
import { visitorTable } from './__fixtures__/visitor-table.js';
import { failOnConflict } from './fail.js';
import { kptRules } from './rules.js';

// `fail` decides as upstream-wins does, so that every conflict is reported; the caller fails.
const visitor = failOnConflict(kptRules());
const bothChanged = { report: 'upstream-won' } as const;

describe('fail: every kind of node reports its conflicts', () => {
  visitorTable('scalar', visitor, 'fail', [
    {
      name: 'changed in both',
      origin: '1',
      upstream: '2',
      local: '3',
      decision: { take: 'upstream', rule: 'upstream-changed', ...bothChanged },
      expected: 2,
      reports: ['.f upstream-won'],
    },
    {
      name: 'changed upstream only: no conflict',
      origin: '1',
      upstream: '2',
      local: '1',
      decision: { take: 'upstream', rule: 'upstream-changed' },
      expected: 2,
    },
  ]);
  visitorTable('map', visitor, 'fail', [
    {
      name: 'a field changed in both',
      origin: 'a: 1',
      upstream: 'a: 2',
      local: 'a: 3',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: { a: 2 },
      reports: ['.f.a upstream-won'],
    },
  ]);
  visitorTable('associative list', visitor, 'fail', [
    {
      name: 'deleted upstream, changed locally',
      origin: '- name: a',
      local: '- name: a\n- name: b',
      decision: { action: 'clear', rule: 'upstream-removed', ...bothChanged },
      expected: undefined,
      reports: ['.f upstream-won'],
    },
  ]);
  visitorTable('set', visitor, 'fail', [
    {
      name: 'null upstream, changed locally',
      origin: '[a]',
      upstream: 'null',
      local: '[a, b]',
      decision: { action: 'clear', rule: 'explicit-null', ...bothChanged },
      expected: undefined,
      reports: ['.f upstream-won'],
    },
  ]);
  visitorTable('atomic list', visitor, 'fail', [
    {
      name: 'changed in both',
      origin: '[a]',
      upstream: '[b]',
      local: '[c]',
      decision: { take: 'upstream', rule: 'upstream-changed', ...bothChanged },
      expected: ['b'],
      reports: ['.f upstream-won'],
    },
  ]);
});
