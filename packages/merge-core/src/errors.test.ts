import * as errors from '@kdelta/errors';
import { describe, expect, it } from 'vitest';
import { KdeltaError, MergeInputError, parseStream, SchemaError, schemaRegistryFromText } from './index.js';

describe("merge-core's errors", () => {
  it('re-exports the one KdeltaError of @kdelta/errors, not a copy', () => {
    expect(KdeltaError).toBe(errors.KdeltaError);
  });

  it('subclasses keep the ordinary instanceof check', () => {
    const schema = new SchemaError({ path: 'definitions', reason: 'bad' });
    expect(schema instanceof KdeltaError).toBe(true);
    expect(schema instanceof SchemaError).toBe(true);
    expect(schema instanceof MergeInputError).toBe(false);
    expect(new KdeltaError({ code: 'x' }) instanceof SchemaError).toBe(false);
  });

  it('are KdeltaErrors with a code, a file and a document', () => {
    let thrown: unknown;
    try {
      parseStream('a: [1\n', 'apps/web.yaml', 'upstream');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MergeInputError);
    expect(thrown).toBeInstanceOf(KdeltaError);
    expect(thrown).toMatchObject({ code: 'invalid-yaml', file: 'apps/web.yaml', side: 'upstream' });
    expect((thrown as MergeInputError).message).toMatch(/^apps\/web\.yaml \(upstream\): /);

    let schemaError: unknown;
    try {
      schemaRegistryFromText('[1, 2]', 'schema.json');
    } catch (error) {
      schemaError = error;
    }
    expect(schemaError).toBeInstanceOf(KdeltaError);
    expect(schemaError).toMatchObject({ code: 'schema-invalid', file: 'schema.json' });
  });
});
