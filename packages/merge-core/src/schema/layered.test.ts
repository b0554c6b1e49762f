import { describe, expect, it } from 'vitest';
import { builtinSchemas } from './builtin.js';
import { schemaRegistryFromCrds } from './crd.js';
import { layerSchemas } from './layered.js';
import { schemaRegistryFromOpenApi } from './openapi.js';
import { listAt } from './__fixtures__/walk.js';

const ownDeployment = schemaRegistryFromOpenApi({
  definitions: {
    'my.Deployment': {
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'apps', version: 'v1', kind: 'Deployment' }],
      properties: { spec: { type: 'object', properties: { items: { type: 'array', 'x-kubernetes-list-type': 'set' } } } },
    },
  },
});
const crds = schemaRegistryFromCrds([
  {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    spec: { group: 'g.io', names: { kind: 'Thing' }, versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object' } } }] },
  },
]);

describe('layerSchemas', () => {
  const layered = layerSchemas(ownDeployment, crds, undefined, builtinSchemas());

  it('asks the registries in order: the first that knows the kind wins', () => {
    const d = layered.lookup({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(listAt(d, 'spec.items').listType).toBe('set');
    expect(d?.field('metadata')).toBeUndefined(); // nothing is mixed in from the built-in layer
    expect(layered.lookup({ group: 'g.io', version: 'v1', kind: 'Thing' })).toBe(
      crds.lookup({ group: 'g.io', version: 'v1', kind: 'Thing' }),
    );
    expect(listAt(layered.lookup({ group: '', version: 'v1', kind: 'Pod' }), 'spec.containers').keys).toEqual(['name']);
    expect(layered.lookup({ group: 'x.io', version: 'v1', kind: 'Nope' })).toBeUndefined();
  });

  it('resolves definitions through the layers too', () => {
    expect(layered.definition('my.Deployment')).toBe(ownDeployment.definition('my.Deployment'));
    expect(layered.definition('io.k8s.api.core.v1.PodSpec')).toBe(builtinSchemas().definition('io.k8s.api.core.v1.PodSpec'));
    expect(layered.definition('nope')).toBeUndefined();
  });

  it('accepts plain registries without definitions, and none at all', () => {
    const plain = layerSchemas({ lookup: () => undefined });
    expect(plain.definition('io.k8s.api.core.v1.PodSpec')).toBeUndefined();
    expect(layerSchemas().lookup({ group: '', version: 'v1', kind: 'Pod' })).toBeUndefined();
  });
});
