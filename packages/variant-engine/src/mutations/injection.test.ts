import { describe, expect, it } from 'vitest';
import type { KubeObject, PackageVariant } from '../api/types.js';
import { injectionInputs } from './injection.js';

const object = (apiVersion: string, kind: string, name: string, namespace = 'default', labels?: Record<string, string>): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace, ...(labels ? { labels } : {}) },
});
const variant = (injectors: NonNullable<PackageVariant['spec']>['injectors']): PackageVariant => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'PackageVariant',
  metadata: { name: 'web', namespace: 'default' },
  spec: { ...(injectors ? { injectors } : {}) },
});

const settings = object('v1', 'ConfigMap', 'settings');
const other = object('v1', 'ConfigMap', 'other');
const repository = object('config.porch.kpt.dev/v1alpha1', 'Repository', 'cluster-01');
const elsewhere = object('v1', 'ConfigMap', 'settings', 'team-b');
const quota = object('example.com/v1', 'Quota', 'settings');

describe('what a variant’s config injection reads', () => {
  it.each<{
    name: string;
    injectors: NonNullable<PackageVariant['spec']>['injectors'];
    objects: KubeObject[];
    read: KubeObject[];
    kinds: string[];
  }>([
    { name: 'no injectors: nothing', injectors: undefined, objects: [settings, repository], read: [], kinds: [] },
    {
      name: 'the objects an injector names, of its namespace, and the kinds present there',
      injectors: [{ name: 'settings' }],
      objects: [settings, other, repository, elsewhere, quota],
      read: [settings, quota],
      kinds: ['config.porch.kpt.dev/v1alpha1 Repository', 'example.com/v1 Quota', 'v1 ConfigMap'],
    },
    {
      name: 'an injector of one kind reads only objects of that kind',
      injectors: [{ kind: 'ConfigMap', name: 'settings' }],
      objects: [settings, quota],
      read: [settings],
      kinds: ['example.com/v1 Quota', 'v1 ConfigMap'],
    },
    {
      name: 'an injector of one group reads only objects of that group',
      injectors: [{ group: 'example.com', name: 'settings' }],
      objects: [settings, quota],
      read: [quota],
      kinds: ['example.com/v1 Quota', 'v1 ConfigMap'],
    },
  ])('$name', ({ injectors, objects, read, kinds }) => {
    expect(injectionInputs(variant(injectors), objects)).toEqual({ objects: read, kinds });
  });

  it('a label on an object changes nothing it reads but the object injected', () => {
    const labelled = object('config.porch.kpt.dev/v1alpha1', 'Repository', 'cluster-01', 'default', { region: 'eu' });
    const pv = variant([{ name: 'settings' }]);
    expect(injectionInputs(pv, [settings, labelled])).toEqual(injectionInputs(pv, [settings, repository]));
  });
});
