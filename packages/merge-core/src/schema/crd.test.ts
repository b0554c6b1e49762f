import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { schemaRegistryFromCrds } from './crd.js';
import { SchemaError } from './errors.js';
import { at, listAt, objectAt, shape } from './__fixtures__/walk.js';

const fruitstore = parse(readFileSync(new URL('./__fixtures__/fruitstore.crd.yaml', import.meta.url), 'utf8')) as unknown;

function crd(apiVersion: string, spec: Record<string, unknown>, name = 'things.g.io'): Record<string, unknown> {
  return { apiVersion, kind: 'CustomResourceDefinition', metadata: { name }, spec };
}

describe('schemaRegistryFromCrds', () => {
  it('kpt one-key-crd: FruitStore spec.fruits is a map keyed by name (list-map-keys)', () => {
    const reg = schemaRegistryFromCrds([fruitstore]);
    const root = reg.lookup({ group: 'test.group', version: 'v1', kind: 'FruitStore' });
    expect(shape(listAt(root, 'spec.fruits'))).toEqual({ listType: 'map', keys: ['name'], explicit: true });
    expect(at(root, 'spec.fruits[].amount')?.kind).toBe('scalar');
    expect(at(root, 'spec.preferredTemperature')?.kind).toBe('scalar');
    expect(objectAt(root, 'metadata').field('finalizers')).toBeUndefined(); // the CRD says nothing about metadata
    expect(reg.lookup({ group: 'test.group', version: 'v2', kind: 'FruitStore' })).toBe(root);
    expect(reg.lookup({ group: 'other.group', version: 'v1', kind: 'FruitStore' })).toBeUndefined();
    expect(reg.definition('test.group.v1.FruitStore')).toBe(root);
  });

  it('reads several list-map-keys, sets, atomic maps, additionalProperties and preserve-unknown-fields', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            routes: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['host', 'port'],
              items: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' } } },
            },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            legacy: {
              type: 'array',
              'x-kubernetes-patch-strategy': 'merge',
              'x-kubernetes-patch-merge-key': 'id',
              items: { type: 'object' },
            },
            selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
            groups: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
            raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            anything: { 'x-kubernetes-preserve-unknown-fields': true },
            port: { 'x-kubernetes-int-or-string': true },
          },
        },
      },
    };
    const reg = schemaRegistryFromCrds([
      crd('apiextensions.k8s.io/v1', {
        group: 'g.io',
        names: { kind: 'Thing' },
        versions: [{ name: 'v1', schema: { openAPIV3Schema: schema } }],
      }),
    ]);
    const root = reg.lookup({ group: 'g.io', version: 'v1', kind: 'Thing' });
    expect(shape(listAt(root, 'spec.routes'))).toEqual({ listType: 'map', keys: ['host', 'port'], explicit: true });
    expect(shape(listAt(root, 'spec.tags'))).toEqual({ listType: 'set', keys: [], explicit: true });
    expect(listAt(root, 'spec.legacy').keys).toEqual(['id']);
    expect(objectAt(root, 'spec.selector').mapType).toBe('atomic');
    expect(listAt(root, 'spec.groups.admins').listType).toBe('atomic');
    expect(objectAt(root, 'spec.raw').field('whatever')).toBeUndefined();
    expect(at(root, 'spec.anything')).toBeUndefined();
    expect(at(root, 'spec.port')?.kind).toBe('scalar');
  });

  it('v1beta1: spec.validation applies to every version without its own schema; versions differ when they say so', () => {
    const shared = { type: 'object', properties: { xs: { type: 'array', 'x-kubernetes-list-type': 'set' } } };
    const own = { type: 'object', properties: { xs: { type: 'array', 'x-kubernetes-list-type': 'atomic' } } };
    const reg = schemaRegistryFromCrds([
      crd('apiextensions.k8s.io/v1beta1', {
        group: 'g.io',
        names: { kind: 'Old' },
        validation: { openAPIV3Schema: shared },
        versions: [{ name: 'v1beta1' }, { name: 'v1', schema: { openAPIV3Schema: own } }],
      }),
      crd('apiextensions.k8s.io/v1beta1', {
        group: 'g.io',
        names: { kind: 'Older' },
        version: 'v1alpha1',
        validation: { openAPIV3Schema: shared },
      }),
    ]);
    expect(listAt(reg.lookup({ group: 'g.io', version: 'v1beta1', kind: 'Old' }), 'xs').listType).toBe('set');
    expect(listAt(reg.lookup({ group: 'g.io', version: 'v1', kind: 'Old' }), 'xs').listType).toBe('atomic');
    expect(listAt(reg.lookup({ group: 'g.io', version: 'v2', kind: 'Old' }), 'xs').listType).toBe('atomic'); // newest: v1
    expect(listAt(reg.lookup({ group: 'g.io', version: 'v1alpha1', kind: 'Older' }), 'xs').listType).toBe('set');
  });

  it('ignores objects that are not CRDs, and CRD versions without a schema', () => {
    const docs = parseAllDocuments(
      'apiVersion: v1\nkind: ConfigMap\n---\nkind: CustomResourceDefinition\napiVersion: example.com/v1\n---\n- a\n---\n',
    ).map((d) => d.toJS() as unknown);
    const noSchema = crd('apiextensions.k8s.io/v1', { group: 'g.io', names: { kind: 'Bare' }, versions: [{ name: 'v1' }] });
    const reg = schemaRegistryFromCrds([...docs, null, 'text', noSchema]);
    expect(reg.lookup({ group: 'g.io', version: 'v1', kind: 'Bare' })).toBeUndefined();
    expect(reg.lookup({ group: '', version: 'v1', kind: 'ConfigMap' })).toBeUndefined();
  });

  it('rejects a CRD without group, kind or with a malformed schema, naming the object and field', () => {
    const noGroup = crd('apiextensions.k8s.io/v1', { names: { kind: 'X' } }, 'xs.g.io');
    expect(() => schemaRegistryFromCrds([{}, noGroup], { file: 'crds.yaml' })).toThrow(
      'crds.yaml: objects[1].spec.group: CustomResourceDefinition (xs.g.io): expected a non-empty string',
    );
    expect(() => schemaRegistryFromCrds([crd('apiextensions.k8s.io/v1', { group: 'g.io', names: {} })])).toThrow(
      'objects[0].spec.names.kind: CustomResourceDefinition (things.g.io): expected a non-empty string',
    );
    const badSchema = crd('apiextensions.k8s.io/v1', {
      group: 'g.io',
      names: { kind: 'X' },
      versions: [{ name: 'v1', schema: { openAPIV3Schema: 'nope' } }],
    });
    expect(() => schemaRegistryFromCrds([badSchema])).toThrow(SchemaError);
    expect(() => schemaRegistryFromCrds([badSchema])).toThrow(
      'objects[0].spec.versions[0].schema.openAPIV3Schema: CustomResourceDefinition (things.g.io): expected a schema object',
    );
  });

  it('with skipUnreadable, leaves out a CRD it cannot read and keeps the others (a package’s own CRDs)', () => {
    const partial = crd('apiextensions.k8s.io/v1', { conversion: { strategy: 'Webhook' } }, 'the-crd');
    const badSchema = crd('apiextensions.k8s.io/v1', {
      group: 'g.io',
      names: { kind: 'X' },
      versions: [{ name: 'v1', schema: { openAPIV3Schema: 'nope' } }],
    });
    const reg = schemaRegistryFromCrds([partial, badSchema, fruitstore], { skipUnreadable: true });
    expect(reg.lookup({ group: 'g.io', version: 'v1', kind: 'X' })).toBeUndefined();
    expect(shape(listAt(reg.lookup({ group: 'test.group', version: 'v1', kind: 'FruitStore' }), 'spec.fruits'))).toEqual({
      listType: 'map',
      keys: ['name'],
      explicit: true,
    });
  });
});
