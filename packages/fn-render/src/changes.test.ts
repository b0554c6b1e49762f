import { describe, expect, it } from 'vitest';
import { PackageTree } from '@kdelta/kptfile-model';
import { fieldChanges, renderPackage } from './index.js';

describe('what each function changed', () => {
  it('field paths: the deepest differing key, list items by name when each has a distinct one, else by position', () => {
    expect(fieldChanges({ a: { b: 1, c: 2 } }, { a: { b: 1, c: 3 } })).toEqual([['a', 'c']]);
    expect(fieldChanges({ a: {} }, { a: { x: 'y' } })).toEqual([['a', 'x']]);
    const before = {
      containers: [
        { name: 'web', image: 'a' },
        { name: 'side', image: 'b' },
      ],
    };
    const after = {
      containers: [
        { name: 'side', image: 'b' },
        { name: 'web', image: 'c' },
      ],
    };
    expect(fieldChanges(before, after)).toEqual([['containers', { name: 'web' }, 'image']]);
    expect(fieldChanges({ args: ['a', 'b'] }, { args: ['a', 'c'] })).toEqual([['args', 1]]);
    expect(fieldChanges({ args: ['a'] }, { args: ['a', 'b'] })).toEqual([['args']]);
    expect(fieldChanges({ a: 1 }, { a: 1 })).toEqual([]);
  });

  it('renderPackage with changes: each mutator says which resources and fields it changed; without, nothing is recorded', async () => {
    const tree = PackageTree.fromFiles(
      new Map([
        [
          'Kptfile',
          'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n    configMap:\n      namespace: prod\n  - image: gcr.io/kpt-fn/set-labels:v0.2.0\n    configMap:\n      team: blue\n',
        ],
        [
          'cm.yaml',
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: prod\n  labels:\n    team: red\ndata:\n  a: b\n',
        ],
      ]),
    );
    const out = await renderPackage(tree, { runtime: 'builtin', changes: true });
    expect(out.ok).toBe(true);
    const cm = (i: number) => out.results[i]?.changes?.find((c) => c.kind === 'ConfigMap');
    // set-namespace finds it in prod already; set-labels sets the edited label back
    expect(cm(0)).toBeUndefined();
    expect(cm(1)).toEqual({ file: 'cm.yaml', kind: 'ConfigMap', name: 'cfg', namespace: 'prod', fields: [['metadata', 'labels', 'team']] });
    const plain = await renderPackage(tree, { runtime: 'builtin' });
    expect(plain.results.map((r) => r.changes)).toEqual([undefined, undefined]);
  });
});
