import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import type { ObjectSchema } from '../schema/types.js';
import { merge3Text } from '../value.js';
import { visitorTable } from './__fixtures__/visitor-table.js';
import { kptRules } from './rules.js';

// Seed 001's rules, one table per kind of node. The merge is the upstream-wins strategy, which is
// these rules as they are.
const rules = kptRules();

describe('seed 001 rules: scalars', () => {
  visitorTable('scalar', rules, 'upstream-wins', [
    {
      name: 'changed upstream only: upstream',
      origin: '1',
      upstream: '2',
      local: '1',
      decision: { take: 'upstream', rule: 'upstream-changed' },
      expected: 2,
    },
    {
      name: 'changed in both: upstream, a conflict',
      origin: '1',
      upstream: '2',
      local: '3',
      decision: { take: 'upstream', rule: 'upstream-changed', report: 'upstream-won' },
      expected: 2,
      reports: ['.f upstream-won'],
    },
    {
      name: 'changed in both to the same value: no conflict',
      origin: '1',
      upstream: '2',
      local: '2',
      decision: { take: 'upstream', rule: 'upstream-changed' },
      expected: 2,
    },
    {
      name: 'unchanged upstream: local',
      origin: '1',
      upstream: '1',
      local: '3',
      decision: { take: 'local', rule: 'unchanged-upstream' },
      expected: 3,
    },
    {
      name: 'null upstream: removed',
      origin: '1',
      upstream: 'null',
      local: '1',
      decision: { take: 'clear', rule: 'explicit-null' },
      expected: undefined,
    },
    {
      name: 'null local: removed',
      origin: '1',
      upstream: '2',
      local: 'null',
      decision: { take: 'clear', rule: 'explicit-null' },
      expected: undefined,
    },
    {
      name: 'null in origin, left null locally, deleted upstream: deleted (merge(o, u, o) = u)',
      origin: 'null',
      local: 'null',
      decision: { take: 'upstream', rule: 'upstream-removed' },
      expected: undefined,
    },
    {
      name: 'null in origin, set locally, deleted upstream: local kept',
      origin: 'null',
      local: '3',
      decision: { take: 'local', rule: 'local-only' },
      expected: 3,
    },
    {
      name: "null in origin, upstream and local: upstream's null kept as written",
      origin: 'null',
      upstream: 'null',
      local: 'null',
      decision: { take: 'local', rule: 'local-only' },
      expected: null,
    },
    { name: 'only in local: kept', local: '3', decision: { take: 'local', rule: 'local-only' }, expected: 3 },
    { name: 'added upstream', upstream: '2', decision: { take: 'upstream', rule: 'upstream-added' }, expected: 2 },
    {
      name: 'deleted upstream, changed locally: deleted, a conflict',
      origin: '1',
      local: '3',
      decision: { take: 'upstream', rule: 'upstream-removed', report: 'upstream-won' },
      expected: undefined,
      reports: ['.f upstream-won'],
    },
  ]);
});

describe('seed 001 rules: maps', () => {
  visitorTable('map', rules, 'upstream-wins', [
    {
      name: 'in both: merged field by field, local-only fields kept',
      origin: 'a: 1',
      upstream: 'a: 2',
      local: 'a: 1\nb: 1',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: { a: 2, b: 1 },
    },
    {
      name: 'not in local: the delta between origin and upstream',
      upstream: 'a: 1',
      decision: { action: 'merge', base: 'new', rule: 'upstream-added' },
      expected: { a: 1 },
    },
    {
      name: 'deleted locally, unchanged upstream: no empty map comes back',
      origin: 'a: 1',
      upstream: 'a: 1',
      decision: { action: 'merge', base: 'new', rule: 'upstream-added' },
      expected: undefined,
    },
    {
      name: 'null upstream: removed',
      origin: 'a: 1',
      upstream: 'null',
      local: 'a: 1',
      decision: { action: 'clear', rule: 'explicit-null' },
      expected: undefined,
    },
    {
      name: 'null upstream, changed locally: removed, a conflict',
      origin: 'a: 1',
      upstream: 'null',
      local: 'a: 2',
      decision: { action: 'clear', rule: 'explicit-null', report: 'upstream-won' },
      expected: undefined,
      reports: ['.f upstream-won'],
    },
    { name: 'deleted on both sides: gone', origin: 'a: 1', decision: { action: 'clear', rule: 'upstream-removed' }, expected: undefined },
    {
      name: 'deleted upstream: only the fields local added stay',
      origin: 'a: 1',
      local: 'a: 1\nb: 2',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: { b: 2 },
    },
  ]);
});

describe('seed 001 rules: associative lists', () => {
  visitorTable('associative list', rules, 'upstream-wins', [
    {
      name: 'in both: items merged by key, local-only items kept',
      origin: '- name: a\n  v: 1',
      upstream: '- name: a\n  v: 2',
      local: '- name: a\n  v: 1\n- name: b\n  v: 1',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [
        { name: 'a', v: 2 },
        { name: 'b', v: 1 },
      ],
    },
    {
      name: 'not in local: the delta between origin and upstream',
      upstream: '- name: a',
      decision: { action: 'merge', base: 'new', rule: 'upstream-added' },
      expected: [{ name: 'a' }],
    },
    {
      name: 'an item deleted upstream is deleted',
      origin: '- name: a\n- name: b',
      upstream: '- name: a',
      local: '- name: a\n- name: b',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [{ name: 'a' }],
    },
    {
      name: 'an item upstream deleted stays for the field local added, with its key as local has it',
      origin: '- name: a\n- name: b\n  v: 1',
      upstream: '- name: a',
      local: '- name: a\n- w: 2\n  name: b\n  v: 1',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [{ name: 'a' }, { w: 2, name: 'b' }],
    },
    {
      name: 'an item local deleted and upstream changed stays deleted (a resource local deleted), a conflict with its path',
      origin: '- name: a\n- name: b\n  v: 1',
      upstream: '- name: a\n- name: b\n  v: 2\n  w: 1',
      local: '- name: a',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [{ name: 'a' }],
      reports: ['.f[name="b"] local-won'],
    },
    {
      name: 'an item local deleted and upstream left alone stays deleted, silently',
      origin: '- name: a\n- name: b\n  v: 1',
      upstream: '- name: a\n  v: 2\n- name: b\n  v: 1',
      local: '- name: a',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [{ name: 'a', v: 2 }],
    },
    {
      name: 'deleted upstream, changed locally: deleted whole, a conflict',
      origin: '- name: a',
      local: '- name: a\n- name: b',
      decision: { action: 'clear', rule: 'upstream-removed', report: 'upstream-won' },
      expected: undefined,
      reports: ['.f upstream-won'],
    },
    {
      name: 'null local: removed',
      origin: '- name: a',
      upstream: '- name: a',
      local: 'null',
      decision: { action: 'clear', rule: 'explicit-null' },
      expected: undefined,
    },
  ]);
});

describe('seed 001 rules: sets', () => {
  visitorTable('set', rules, 'upstream-wins', [
    {
      name: 'in both: merged by value, upstream additions after local items',
      origin: '[a]',
      upstream: '[a, b]',
      local: '[a, c]',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: ['a', 'c', 'b'],
    },
    {
      name: 'an item deleted upstream is deleted',
      origin: '[a, b]',
      upstream: '[a]',
      local: '[a, b]',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: ['a'],
    },
    {
      name: 'deleted upstream: gone',
      origin: '[a]',
      local: '[a]',
      decision: { action: 'clear', rule: 'upstream-removed' },
      expected: undefined,
    },
    {
      name: 'emptied upstream: upstream has it empty',
      origin: '[a]',
      upstream: '[]',
      local: '[a]',
      decision: { action: 'merge', base: 'local', rule: 'upstream-changed' },
      expected: [],
    },
  ]);
});

describe('seed 001 rules: atomic lists', () => {
  visitorTable('atomic list', rules, 'upstream-wins', [
    {
      name: 'changed upstream: replaced whole',
      origin: '[a]',
      upstream: '[b, c]',
      local: '[a]',
      decision: { take: 'upstream', rule: 'upstream-changed' },
      expected: ['b', 'c'],
    },
    {
      name: 'changed in both: upstream, a conflict',
      origin: '[a]',
      upstream: '[b]',
      local: '[c]',
      decision: { take: 'upstream', rule: 'upstream-changed', report: 'upstream-won' },
      expected: ['b'],
      reports: ['.f upstream-won'],
    },
    {
      name: 'unchanged upstream: local',
      origin: '[a]',
      upstream: '[a]',
      local: '[c, a]',
      decision: { take: 'local', rule: 'unchanged-upstream' },
      expected: ['c', 'a'],
    },
  ]);
});

// An item the schema makes an atomic map is merged whole, as a leaf: local's deletion of it holds
// all the same, as for an item merged field by field.
describe('seed 001 rules: an item of a keyed list merged whole', () => {
  const atomicItems: ObjectSchema = {
    kind: 'object',
    mapType: 'granular',
    field: (name) =>
      name === 'f'
        ? {
            kind: 'list',
            listType: 'map',
            keys: ['name'],
            explicit: true,
            items: () => ({ kind: 'object', mapType: 'atomic', field: () => undefined }),
          }
        : undefined,
  };
  test.each([
    [
      'upstream changed it: it stays deleted, a conflict',
      'f:\n- name: a\n- name: b\n  v: 2\n',
      ['.f[name="b"] modified-upstream-deleted-locally'],
    ],
    ['upstream left it alone: it stays deleted', 'f:\n- name: a\n- name: b\n  v: 1\n', []],
  ])('an item local deleted, %s', (_, upstream, conflicts) => {
    const result = merge3Text(
      { origin: 'f:\n- name: a\n- name: b\n  v: 1\n', upstream, local: 'f:\n- name: a\n' },
      { schema: atomicItems },
    );
    expect(parse(result.text)).toEqual({ f: [{ name: 'a' }] });
    expect(result.conflicts.map((c) => `${c.path} ${c.rule}`)).toEqual(conflicts);
  });
});
