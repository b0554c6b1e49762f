import { describe, expect, it } from 'vitest';
import { DEFAULT_ALLOWED_IMAGES, allowanceFor, imageAllowed, imagePatternProblem } from './images.js';

describe('imageAllowed', () => {
  const cases: readonly [image: string, patterns: readonly string[], allowed: boolean][] = [
    // the default: kpt's function catalogues, at any tag or digest
    ['gcr.io/kpt-fn/set-labels:v0.2', DEFAULT_ALLOWED_IMAGES, true],
    ['ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1', DEFAULT_ALLOWED_IMAGES, true],
    [`gcr.io/kpt-fn/starlark@sha256:${'a'.repeat(64)}`, DEFAULT_ALLOWED_IMAGES, true],
    ['evil.example.com/tracker:latest', DEFAULT_ALLOWED_IMAGES, false],
    // look-alikes of the catalogues
    ['gcr.io/kpt-fn-extra/set-labels:v0.2', DEFAULT_ALLOWED_IMAGES, false],
    ['gcr.io.evil.example.com/kpt-fn/set-labels:v0.2', DEFAULT_ALLOWED_IMAGES, false],
    ['ghcr.io/kptdev/krm-functions-catalog-fork/x:v1', DEFAULT_ALLOWED_IMAGES, false],
    ['GCR.IO/kpt-fn/set-labels:v0.2', DEFAULT_ALLOWED_IMAGES, false],
    // not a reference the grammar allows: never, whatever the pattern
    ['gcr.io/kpt-fn/../../evil.example.com/x', DEFAULT_ALLOWED_IMAGES, false],
    ['gcr.io/kpt-fn/ x', ['*'], false],
    // none allowed
    ['gcr.io/kpt-fn/set-labels:v0.2', [], false],
    ['evil.example.com/tracker:latest', ['*'], true],
    // a name: that repository at any tag or digest, and below it; not a longer name, another port or host
    ['evil.example.com/tracker:latest', ['evil.example.com/tracker'], true],
    ['evil.example.com/tracker', ['evil.example.com/tracker'], true],
    ['evil.example.com/tracker-two:latest', ['evil.example.com/tracker'], false],
    ['registry.example/team/fn:v1', ['registry.example'], true],
    ['registry.example:8443/team/fn:v1', ['registry.example'], false],
    ['registry.example.attacker.example/fn:v1', ['registry.example'], false],
    ['localhost:5000/fn:v1', ['localhost:5000/'], true],
    ['localhost:5001/fn:v1', ['localhost:5000/'], false],
    // a tagged name: that tag only (with its digest)
    ['ghcr.io/acme/fn:v1', ['ghcr.io/acme/fn:v1'], true],
    [`ghcr.io/acme/fn:v1@sha256:${'b'.repeat(64)}`, ['ghcr.io/acme/fn:v1'], true],
    ['ghcr.io/acme/fn:v2', ['ghcr.io/acme/fn:v1'], false],
    ['ghcr.io/acme/fn:v10', ['ghcr.io/acme/fn:v1'], false],
  ];
  it.each(cases)('%s with %j: %s', (image, patterns, allowed) => {
    expect(imageAllowed(image, patterns)).toBe(allowed);
  });
});

describe('imagePatternProblem', () => {
  const good = [
    '*',
    'gcr.io/kpt-fn/',
    'gcr.io',
    'localhost:5000/',
    'ghcr.io/acme/fn',
    'ghcr.io/acme/fn:v1',
    `x.io/a@sha256:${'c'.repeat(64)}`,
  ];
  it.each(good)('%s is a pattern', (pattern) => {
    expect(imagePatternProblem(pattern)).toBeUndefined();
  });
  const bad: readonly [string, RegExp][] = [
    ['', /an image pattern is empty/],
    ['  ', /an image pattern is empty/],
    ['gcr.io/kpt-fn:v1/', /"gcr.io\/kpt-fn:v1\/" is not a registry or repository prefix/],
    ['*.example.com/', /is not a registry or repository prefix/],
    ['Evil/Upper', /"Evil\/Upper" is not an image name/],
    ['gcr.io/kpt-fn/*', /is not an image name/],
  ];
  it.each(bad)('%j is refused, saying why', (pattern, why) => {
    expect(imagePatternProblem(pattern)).toMatch(why);
  });
});

it('allowanceFor suggests the image’s repository, at any tag', () => {
  expect(allowanceFor('evil.example.com/tracker:latest')).toBe('evil.example.com/tracker');
  expect(allowanceFor('localhost:5000/fn@sha256:abc')).toBe('localhost:5000/fn');
});
