import { describe, expect, it } from 'vitest';
import { changesLockOnly } from './lock-only.js';

const kptfile = (ref: string, commit: string, extra = '') =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\nupstream:\n  type: git\n  git:\n    repo: https://example.com/catalog\n    directory: web\n    ref: ${ref}\nupstreamLock:\n  type: git\n  git:\n    repo: https://example.com/catalog\n    directory: web\n    ref: ${ref}\n    commit: ${commit}\n${extra}`;

const files = (k: string, ns = 'name: web\n') =>
  new Map([
    ['Kptfile', k],
    ['namespace.yaml', ns],
  ]);

describe('a change of the upstream lock alone', () => {
  it.each([
    { case: 'only the lock moved', base: files(kptfile('v1', 'a'.repeat(40))), next: files(kptfile('v2', 'b'.repeat(40))), lockOnly: true },
    { case: 'nothing changed', base: files(kptfile('v1', 'a'.repeat(40))), next: files(kptfile('v1', 'a'.repeat(40))), lockOnly: false },
    {
      case: 'a resource changed too',
      base: files(kptfile('v1', 'a'.repeat(40))),
      next: files(kptfile('v2', 'b'.repeat(40)), 'name: web2\n'),
      lockOnly: false,
    },
    {
      case: 'the Kptfile changed beyond its lock (a pipeline)',
      base: files(kptfile('v1', 'a'.repeat(40))),
      next: files(kptfile('v2', 'b'.repeat(40), 'pipeline:\n  mutators:\n  - image: set-labels\n')),
      lockOnly: false,
    },
    { case: 'a new package', base: new Map<string, string>(), next: files(kptfile('v2', 'b'.repeat(40))), lockOnly: false },
  ])('$case → $lockOnly', ({ base, next, lockOnly }) => {
    expect(changesLockOnly(base, next)).toBe(lockOnly);
  });
});
