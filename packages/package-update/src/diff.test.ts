import { PackageTree } from '@kdelta/kptfile-model';
import { describe, expect, it } from 'vitest';
import { diffTrees, fieldDiffs } from './diff.js';

const deploy = (replicas: number, args: string[]) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: app\n        args: ${JSON.stringify(args)}\n`;

describe('what changed between two versions of a package, as values', () => {
  it('gives each changed field its path and both values, beside the printed lines', () => {
    const before = PackageTree.fromFiles(new Map([['deploy.yaml', deploy(1, ['a'])]]));
    const after = PackageTree.fromFiles(
      new Map([
        ['deploy.yaml', deploy(2, ['a', 'b'])],
        ['cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n'],
      ]),
    );
    expect(diffTrees(before, after)).toEqual([
      { kind: 'added', subject: 'ConfigMap c', file: 'cm.yaml', fields: [], values: [] },
      {
        kind: 'changed',
        subject: 'apps/Deployment web',
        file: 'deploy.yaml',
        fields: ['.spec.replicas: 1 → 2', '.spec.template.spec.containers[name="app"].args: ["a"] → ["a","b"]'],
        values: [
          { path: '.spec.replicas', before: 1, after: 2 },
          { path: '.spec.template.spec.containers[name="app"].args', before: ['a'], after: ['a', 'b'] },
        ],
      },
    ]);
  });
});

describe('the field diff of a big or deep resource', () => {
  /** A map nested `depth` deep with `width` values at the bottom, every read of a field counted. */
  const counted = (depth: number, width: number, changed: number) => {
    let reads = 0;
    const field = (o: Record<string, unknown>, k: string, v: unknown) =>
      Object.defineProperty(o, k, {
        enumerable: true,
        get: () => {
          reads++;
          return v;
        },
      });
    let node: Record<string, unknown> = {};
    for (let i = 0; i < width; i++) field(node, `key-${i}`, i === changed ? 'new' : 'old');
    for (let d = 0; d < depth; d++) node = field({}, `level${d}`, node);
    return { value: node, reads: () => reads };
  };

  it.each([
    { shape: 'a wide map (a ConfigMap data)', depth: 2, width: 4_000 },
    { shape: 'a deep tree', depth: 200, width: 10 },
  ])('reads each field a bounded number of times in $shape, however deep it sits', ({ depth, width }) => {
    const a = counted(depth, width, -1);
    const b = counted(depth, width, width - 1);
    const diffs = fieldDiffs(a.value, b.value);
    expect(diffs).toHaveLength(1);
    expect(diffs[0]?.before).toBe('old');
    expect(diffs[0]?.after).toBe('new');
    // each side's fields: read once or twice in all, not once per level above them
    expect(a.reads()).toBeLessThanOrEqual(2 * (depth + width));
  });
});
