// The one positional rule (order.ts), as a user sees it: the order of a custom resource's keyed
// list (Cloud Build steps, keyed by `name` by kpt's fallback keys), of a map's keys, and of a
// Kptfile-like pipeline whose items have a derived key.
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import type { ListSchema, ObjectSchema } from '../schema/types.js';
import { merge3Text } from '../value.js';

const build = (steps: readonly string[] | undefined) =>
  `apiVersion: cloudbuild.example.com/v1\nkind: Build\nmetadata:\n  name: b\nspec:\n${
    steps === undefined ? '  timeout: 60s\n' : `  steps:\n${steps.map((s) => `  - name: ${s}\n    args: [run]\n`).join('')}`
  }`;

const stepsOf = (text: string): string[] => ((parse(text) as { spec: { steps?: { name: string }[] } }).spec.steps ?? []).map((s) => s.name);

interface OrderCase {
  readonly name: string;
  readonly origin: readonly string[] | undefined;
  readonly upstream: readonly string[];
  readonly local: readonly string[];
  readonly expected: readonly string[];
}

const cases: readonly OrderCase[] = [
  {
    name: 'an element upstream renamed takes its upstream place, not the end',
    origin: ['a', 'b', 'c'],
    upstream: ['a', 'b2', 'c'],
    local: ['a', 'b', 'c'],
    expected: ['a', 'b2', 'c'],
  },
  {
    name: 'an element upstream inserted takes its upstream place',
    origin: ['a', 'c'],
    upstream: ['a', 'b', 'c'],
    local: ['a', 'c'],
    expected: ['a', 'b', 'c'],
  },
  {
    name: 'upstream moved an element and local did not: upstream order',
    origin: ['a', 'b', 'c'],
    upstream: ['c', 'a', 'b'],
    local: ['a', 'b', 'c'],
    expected: ['c', 'a', 'b'],
  },
  {
    name: 'a local-only element stays right after the element it followed in local',
    origin: ['a', 'b'],
    upstream: ['x', 'a', 'y', 'b'],
    local: ['a', 'l', 'b'],
    expected: ['x', 'a', 'l', 'y', 'b'],
  },
  {
    name: 'a local-only element first in local stays first',
    origin: ['a', 'b'],
    upstream: ['b', 'a'],
    local: ['l', 'a', 'b'],
    expected: ['l', 'b', 'a'],
  },
  {
    name: "both inserted after the same element: local's comes first (seed 000)",
    origin: ['a', 'b'],
    upstream: ['a', 'u', 'b'],
    local: ['a', 'l', 'b'],
    expected: ['a', 'l', 'u', 'b'],
  },
  {
    name: "both appended: local's comes first (seed 000, newly added upstream function)",
    origin: ['a'],
    upstream: ['a', 'u'],
    local: ['a', 'l'],
    expected: ['a', 'l', 'u'],
  },
  {
    name: "local reordered: local's order stays, an upstream addition follows the elements before it upstream",
    origin: ['a', 'b', 'c'],
    upstream: ['a', 'b', 'n', 'c'],
    local: ['c', 'b', 'a'],
    expected: ['c', 'b', 'a', 'n'],
  },
  {
    name: "local reordered and inserted after an element, upstream appended after the same one: local's stays first (a tie)",
    origin: ['auth', 'cache'],
    upstream: ['auth', 'cache', 'metrics'],
    local: ['cache', 'auth', 'audit'],
    expected: ['cache', 'auth', 'audit', 'metrics'],
  },
  {
    name: 'local reordered: an upstream addition with nothing before it upstream goes before the elements after it',
    origin: ['a', 'b'],
    upstream: ['n', 'a', 'b'],
    local: ['b', 'l', 'a'],
    expected: ['n', 'b', 'l', 'a'],
  },
  {
    name: 'an element deleted upstream goes; the rest keep their places',
    origin: ['a', 'b', 'c'],
    upstream: ['a', 'c'],
    local: ['a', 'b', 'l', 'c'],
    expected: ['a', 'l', 'c'],
  },
  {
    name: "nothing new upstream: local's order, whatever it is",
    origin: ['a', 'b', 'c'],
    upstream: ['a', 'b', 'c'],
    local: ['c', 'l', 'a'],
    expected: ['c', 'l', 'a'],
  },
  {
    name: "added on both sides, all inserted at one place: local's first, in local's order, then upstream's",
    origin: undefined,
    upstream: ['u', 'a'],
    local: ['a', 'l'],
    expected: ['a', 'l', 'u'],
  },
];

describe('the positional rule: a keyed list of a custom resource', () => {
  for (const c of cases) {
    test(c.name, () => {
      const result = merge3Text({ origin: build(c.origin), upstream: build(c.upstream), local: build(c.local) });
      expect(stepsOf(result.text)).toEqual(c.expected);
    });
  }
});

// The same cases on a list whose key is computed from each item (as a Kptfile pipeline's is):
// the rule lives in one place, whatever gives the items their identity.
const derivedKeyList: ListSchema = {
  kind: 'list',
  listType: 'map',
  keys: ['key'],
  explicit: true,
  items: () => undefined,
  wholeItems: true,
  deriveKey: (item) => String(item.get('image')).replace(/:.*$/, ''),
};
const pipelineSchema: ObjectSchema = {
  kind: 'object',
  mapType: 'granular',
  field: (name) => (name === 'fns' ? derivedKeyList : undefined),
};
const pipeline = (fns: readonly string[] | undefined) =>
  fns === undefined ? 'other: 1\n' : `fns:\n${fns.map((f) => `  - image: ${f}:v1\n`).join('')}`;
const fnsOf = (text: string): string[] =>
  ((parse(text) as { fns?: { image: string }[] }).fns ?? []).map((f) => f.image.replace(/:.*$/, ''));

describe('the positional rule: a list with a derived key (a Kptfile pipeline)', () => {
  for (const c of cases) {
    test(c.name, () => {
      const result = merge3Text(
        { origin: pipeline(c.origin), upstream: pipeline(c.upstream), local: pipeline(c.local) },
        { schema: pipelineSchema },
      );
      expect(fnsOf(result.text)).toEqual(c.expected);
    });
  }
});

describe('the positional rule: map keys', () => {
  const map = (keys: readonly string[] | undefined) =>
    keys === undefined ? 'other: 1\n' : `data:\n${keys.map((k) => `  ${k}: v\n`).join('')}`;
  const keysOf = (text: string): string[] => Object.keys((parse(text) as { data?: object }).data ?? {});
  for (const c of cases) {
    test(c.name, () => {
      const result = merge3Text({ origin: map(c.origin), upstream: map(c.upstream), local: map(c.local) });
      expect(keysOf(result.text)).toEqual(c.expected);
    });
  }

  test('a key upstream added, local untouched: printed where upstream has it, the other lines as they were', () => {
    const result = merge3Text({
      origin: 'data:\n  b: 1 # bee\n  a: 2\n',
      upstream: 'data:\n  b: 1 # bee\n  n: 3\n  a: 2\n',
      local: 'data:\n  b: 1 # bee\n  a: 2\n',
    });
    expect(result.text).toBe('data:\n  b: 1 # bee\n  n: 3\n  a: 2\n');
  });
});
