import { readFileSync } from 'node:fs';
import { isMap, isScalar, parse, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';
import { describe, expect, it } from 'vitest';
import { builtinSchemas } from './builtin.js';
import { schemaFromComment } from './comment.js';
import { listAt, shape } from './__fixtures__/walk.js';
import type { Schema } from './types.js';

const builtin = builtinSchemas();
const fixture = parse(readFileSync(new URL('./__fixtures__/kyaml-element-schemas.yaml', import.meta.url), 'utf8')) as {
  cases: { id: string; local: string; updated: string }[];
};
const caseText = (id: string): string => {
  const c = fixture.cases.find((x) => x.id === id);
  if (!c) throw new Error(`fixture case ${id} missing`);
  return c.local;
};

/**
 * The comments the `yaml` library attaches around a field (the key's or value's comment, the
 * comment before them, and for the first field of a map the map's own comment before), and the
 * schema the first JSON-schema comment among them gives.
 */
function fieldCommentSchema(text: string, path: string[]): Schema | undefined {
  let map = parseDocument(text).contents as YAMLMap | null;
  let pair: Pair | undefined;
  let first = false;
  for (const name of path) {
    if (!isMap(map)) return undefined;
    const index = map.items.findIndex((p) => isScalar(p.key) && p.key.value === name);
    pair = map.items[index];
    first = index === 0;
    const parent = map;
    map = (pair?.value as YAMLMap | null) ?? null;
    if (name === path[path.length - 1]) {
      const key = pair?.key as Node | undefined;
      const value = pair?.value as Node | undefined;
      const texts = [key?.commentBefore, key?.comment, value?.commentBefore, value?.comment, first ? parent.commentBefore : undefined];
      for (const t of texts) {
        const s = t ? schemaFromComment(t, builtin) : undefined;
        if (s) return s;
      }
    }
  }
  return undefined;
}

describe("schemaFromComment: the forms kyaml's element cases use", () => {
  it.each([
    ['elementTestCases/18', 'line comment'],
    ['elementTestCases/19', 'head comment'],
  ])('%s: containers with a %s schema are keyed by name and their items are the built-in Container', (id) => {
    const s = fieldCommentSchema(caseText(id), ['spec', 'template', 'spec', 'containers']);
    expect(s?.kind).toBe('list');
    if (s?.kind !== 'list') return;
    expect(shape(s)).toEqual({ listType: 'map', keys: ['name'], explicit: true });
    expect(s.items()).toBe(builtin.definition('io.k8s.api.core.v1.Container'));
  });

  it.each([
    ['elementTestCases/20', 'line comment'],
    ['elementTestCases/21', 'head comment'],
  ])('%s: a $ref to PodSpec in a %s on spec gives containers the key name', (id) => {
    const s = fieldCommentSchema(caseText(id), ['spec']);
    expect(s).toBe(builtin.definition('io.k8s.api.core.v1.PodSpec'));
    expect(listAt(s, 'containers').keys).toEqual(['name']);
  });

  it('elementTestCases/20: updated has no comment, so no schema there', () => {
    const c = fixture.cases.find((x) => x.id === 'elementTestCases/20');
    expect(fieldCommentSchema(c?.updated ?? '', ['spec'])).toBeUndefined();
  });
});

describe('schemaFromComment: text handling', () => {
  it('accepts the text with or without the leading #, and several #', () => {
    for (const t of [
      ' {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}',
      '# {"x-kubernetes-patch-strategy":"merge","x-kubernetes-patch-merge-key":"name"}',
      '## {"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}',
    ]) {
      const s = schemaFromComment(t);
      expect(s?.kind === 'list' ? shape(s) : s).toEqual({ listType: 'map', keys: ['name'], explicit: true });
    }
  });

  it('accepts a JSON object spread over several comment lines', () => {
    const s = schemaFromComment(' {\n "type": "array",\n "x-kubernetes-list-type": "set"\n}');
    expect(s?.kind === 'list' && s.listType).toBe('set');
  });

  it('reads list-map-keys, map types and types from the comment', () => {
    const ports = schemaFromComment(
      '{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["containerPort","protocol"]}',
    );
    expect(ports?.kind === 'list' && ports.keys).toEqual(['containerPort', 'protocol']);
    const atomic = schemaFromComment('{"type":"object","x-kubernetes-map-type":"atomic"}');
    expect(atomic?.kind === 'object' && atomic.mapType).toBe('atomic');
    expect(schemaFromComment('{"type":"string"}')?.kind).toBe('scalar');
  });

  it('is undefined for comments that are not JSON schemas', () => {
    for (const t of [
      ' hello',
      ' kpt-merge: default/app',
      ' {"$openapi":"replicas"}', // a kpt setter, not a schema
      ' {"foo": 1}',
      ' {not json}',
      ' ["type"]',
      ' note: {"type":"array"}',
      '',
    ]) {
      expect(schemaFromComment(t, builtin)).toBeUndefined();
    }
  });

  it('is undefined for a $ref it cannot resolve, or without definitions', () => {
    expect(schemaFromComment('{"$ref":"#/definitions/io.k8s.api.core.v1.Nope"}', builtin)).toBeUndefined();
    expect(schemaFromComment('{"$ref":"#/definitions/io.k8s.api.core.v1.PodSpec"}')).toBeUndefined();
    expect(schemaFromComment('{"$ref":"https://example.com/schema.json"}', builtin)).toBeUndefined();
  });
});
