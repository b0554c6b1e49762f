import { describe, expect, it } from 'vitest';
import { composeMessage, isKdeltaError, KdeltaError } from './kdelta-error.js';

describe('KdeltaError', () => {
  it('composes what failed, where, what was expected and what was received', () => {
    const e = new KdeltaError({
      code: 'wrong-type',
      file: 'apps/web.yaml',
      document: 2,
      path: '.spec.replicas',
      expected: 'an integer',
      received: 'a string',
    });
    expect(e.message).toBe('apps/web.yaml: document 2: .spec.replicas: expected an integer, got a string');
    expect(e).toMatchObject({
      code: 'wrong-type',
      file: 'apps/web.yaml',
      document: 2,
      path: '.spec.replicas',
      expected: 'an integer',
      received: 'a string',
    });
  });

  it('says the reason, or the code in words when nothing else is said', () => {
    expect(
      composeMessage({ code: 'not-a-mapping', file: 'a.yaml', document: 'apps/Deployment web', reason: 'a resource must be a YAML map' }),
    ).toBe('a.yaml: apps/Deployment web: a resource must be a YAML map');
    expect(composeMessage({ code: 'lock-timeout' })).toBe('lock timeout');
  });

  it('keeps a given message and the cause', () => {
    const cause = new Error('EACCES');
    const e = new KdeltaError({ code: 'unreadable', message: 'x.yaml: cannot read', file: 'x.yaml', cause });
    expect(e.message).toBe('x.yaml: cannot read');
    expect(e.cause).toBe(cause);
    expect(e).toBeInstanceOf(Error);
  });

  it('is recognised by its brand, from any copy of the class', () => {
    // A second copy of the class (another install of this package) is another constructor
    // whose instances carry the same brand.
    class OtherCopy extends Error {
      readonly code = 'failed';
      constructor() {
        super('from elsewhere');
        Object.defineProperty(this, Symbol.for('kdelta.error'), { value: true });
      }
    }
    const foreign = new OtherCopy();
    expect(foreign instanceof KdeltaError).toBe(true);
    expect(isKdeltaError(foreign)).toBe(true);
    expect(new Error('plain') instanceof KdeltaError).toBe(false);
    expect(isKdeltaError({ code: 'x', message: 'duck' })).toBe(false);
    expect(isKdeltaError(undefined)).toBe(false);
  });

  it('subclasses keep the ordinary instanceof check', () => {
    class FirstError extends KdeltaError {}
    class SecondError extends KdeltaError {}
    const first = new FirstError({ code: 'first' });
    expect(first instanceof KdeltaError).toBe(true);
    expect(first instanceof FirstError).toBe(true);
    expect(first instanceof SecondError).toBe(false);
    expect(new KdeltaError({ code: 'x' }) instanceof FirstError).toBe(false);
  });
});
