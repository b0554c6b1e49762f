import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { SchemaError } from './errors.js';
import { schemaRegistryFromOpenApi, schemaRegistryFromText } from './openapi.js';
import { at, listAt, objectAt, shape } from './__fixtures__/walk.js';

const FILE = 'widgets-openapi.json';
const text = readFileSync(new URL(`./__fixtures__/${FILE}`, import.meta.url), 'utf8');
const doc = JSON.parse(text) as Record<string, unknown>;
const withoutResources = { definitions: doc.definitions };

describe('schemaRegistryFromOpenApi (--schema file)', () => {
  const reg = schemaRegistryFromOpenApi(withoutResources, { file: FILE });
  const widget = reg.lookup({ group: 'example.com', version: 'v1', kind: 'Widget' });

  it('finds kinds by x-kubernetes-group-version-kind (list or single object)', () => {
    expect(widget?.kind).toBe('object');
    expect(reg.lookup({ group: '', version: 'v1', kind: 'Gadget' })?.kind).toBe('object');
    expect(reg.lookup({ group: 'example.com', version: 'v1', kind: 'Gadget' })).toBeUndefined();
    expect(reg.lookup({ group: 'example.com', version: 'v1', kind: 'Unused' })).toBeUndefined();
  });

  it('applies the list rules: list-map-keys, patch merge key, set, atomic', () => {
    expect(shape(listAt(widget, 'spec.parts'))).toEqual({ listType: 'map', keys: ['name', 'slot'], explicit: true });
    expect(shape(listAt(widget, 'spec.owners'))).toEqual({ listType: 'map', keys: ['id'], explicit: true });
    expect(shape(listAt(widget, 'spec.tags'))).toEqual({ listType: 'set', keys: [], explicit: true });
    expect(shape(listAt(widget, 'metadata.finalizers'))).toEqual({ listType: 'set', keys: [], explicit: true });
    expect(shape(listAt(widget, 'spec.steps'))).toEqual({ listType: 'atomic', keys: [], explicit: false });
    expect(shape(listAt(widget, 'spec.replaced'))).toEqual({ listType: 'atomic', keys: [], explicit: true });
  });

  it('follows $ref, allOf wrappers, recursion and additionalProperties', () => {
    expect(listAt(widget, 'spec.parts[].children[].children').keys).toEqual(['name']);
    expect(objectAt(widget, 'spec.selector').mapType).toBe('atomic');
    expect(objectAt(widget, 'spec.wrapped').mapType).toBe('atomic');
    expect(listAt(widget, 'spec.matrix.anything').listType).toBe('atomic');
    expect(at(widget, 'metadata.labels.app')?.kind).toBe('scalar');
    expect(at(widget, 'spec.replicas')?.kind).toBe('scalar');
    expect(at(widget, 'spec.nothing')).toBeUndefined();
  });

  it('picks the exact version, else the newest', () => {
    const v2 = reg.lookup({ group: 'example.com', version: 'v2', kind: 'Widget' });
    expect(listAt(v2, 'spec.parts').listType).toBe('atomic');
    expect(reg.lookup({ group: 'example.com', version: 'v1beta1', kind: 'Widget' })).toBe(v2);
  });

  it('resolves definitions by name', () => {
    expect(listAt(reg.definition('com.example.v1.Part'), 'children').keys).toEqual(['name']);
    expect(reg.definition('nope')).toBeUndefined();
    expect(reg.definition('constructor')).toBeUndefined();
  });

  it('reads the kyaml bundle format (resources[])', () => {
    const bundle = schemaRegistryFromOpenApi({
      definitions: {
        'x.Thing': {
          type: 'object',
          properties: { xs: { type: 'array', 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'k' } },
        },
      },
      resources: [{ apiVersion: 'things.io/v1', kind: 'Thing', definition: 'x.Thing' }],
    });
    expect(listAt(bundle.lookup({ group: 'things.io', version: 'v1', kind: 'Thing' }), 'xs').keys).toEqual(['k']);
  });

  it('rejects documents that are not OpenAPI, naming the file and the field', () => {
    expect(() => schemaRegistryFromOpenApi([], { file: 'a.json' })).toThrow(/^a\.json: expected an OpenAPI document/);
    expect(() => schemaRegistryFromOpenApi({ swagger: '2.0' }, { file: 'a.json' })).toThrow(
      'a.json: definitions: expected an object of named schemas, got nothing',
    );
    const bad = () =>
      schemaRegistryFromOpenApi({ definitions: { X: { 'x-kubernetes-group-version-kind': [{ kind: 'X' }] } } }, { file: 'a.json' });
    expect(bad).toThrow(SchemaError);
    expect(bad).toThrow('a.json: definitions.X.x-kubernetes-group-version-kind[0]: expected {group, version, kind} with string values');
    expect(() =>
      schemaRegistryFromOpenApi({ definitions: {}, resources: [{ apiVersion: 'v1', kind: 'A', definition: 'missing' }] }),
    ).toThrow('resources[0].definition: no definition named "missing"');
  });
});

describe('schemaRegistryFromText', () => {
  it('reads the same OpenAPI document as JSON or as YAML', () => {
    for (const [file, body] of [
      [FILE, text],
      ['widgets-openapi.yaml', stringify(withoutResources)],
    ] as const) {
      const reg = schemaRegistryFromText(body, file);
      expect(listAt(reg.lookup({ group: 'example.com', version: 'v1', kind: 'Widget' }), 'spec.parts').keys).toEqual(['name', 'slot']);
    }
  });

  it('reads a stream of CRDs (or a List of them)', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      spec: {
        group: 'g.io',
        names: { kind: 'K' },
        versions: [
          {
            name: 'v1',
            schema: { openAPIV3Schema: { type: 'object', properties: { xs: { type: 'array', 'x-kubernetes-list-type': 'set' } } } },
          },
        ],
      },
    };
    const stream = `${stringify({ apiVersion: 'v1', kind: 'ConfigMap' })}---\n${stringify(crd)}`;
    expect(listAt(schemaRegistryFromText(stream, 'crds.yaml').lookup({ group: 'g.io', version: 'v1', kind: 'K' }), 'xs').listType).toBe(
      'set',
    );
    const list = stringify({ apiVersion: 'v1', kind: 'List', items: [crd] });
    expect(schemaRegistryFromText(list, 'list.yaml').lookup({ group: 'g.io', version: 'v1', kind: 'K' })).toBeDefined();
  });

  it('names the file and the reason for unreadable or unsuitable input', () => {
    expect(() => schemaRegistryFromText('{"definitions": ', 'broken.json')).toThrow(/^broken\.json: cannot parse: /);
    expect(() => schemaRegistryFromText('a: b\n', 'other.yaml')).toThrow(
      'other.yaml: expected an OpenAPI v2 document with "definitions" or CustomResourceDefinition objects',
    );
    expect(() => schemaRegistryFromText('', 'empty.yaml')).toThrow(/^empty\.yaml: expected an OpenAPI v2 document/);
  });
});
