import { PackageTree } from '@kdelta/kptfile-model';
import { describe, expect, it } from 'vitest';
import { diffTrees } from './diff.js';

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
