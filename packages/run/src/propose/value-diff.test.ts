import { describe, expect, it } from 'vitest';
import { changeViews, conflictViews, listEdits, renderPieces } from './value-diff.js';

const args = ['--secure-listen-address=0.0.0.0:8443', '--upstream=http://127.0.0.1:8080/', '--logtostderr=true', '--v=0'];
const script = `${'#'.repeat(50)} --upstream=http://127.0.0.1:8080/ ${'-'.repeat(60)}`;

describe('a list read against another: the items added, removed or changed', () => {
  it.each([
    { name: 'one item added at the end', a: ['a', 'b'], b: ['a', 'b', 'c'], reads: '+ `"c"`' },
    { name: 'one item removed', a: ['a', 'b', 'c'], b: ['a', 'c'], reads: '− `"b"`' },
    { name: 'one item changed in place', a: ['a', 'b', 'c'], b: ['a', 'x', 'c'], reads: '[1] `"b"` → `"x"`' },
    { name: 'an item moved', a: ['a', 'b', 'c'], b: ['b', 'c', 'a'], reads: '− `"a"`, + `"a"`' },
    { name: 'items that are maps', a: [{ port: 80 }], b: [{ port: 80 }, { port: 443 }], reads: '+ `{"port":443}`' },
    { name: 'the same list', a: ['a'], b: ['a'], reads: '' },
    {
      name: 'more edits than are shown',
      a: [],
      b: ['1', '2', '3', '4', '5', '6', '7'],
      reads: '+ `"1"`, + `"2"`, + `"3"`, + `"4"`, + `"5"`, …and 2 more',
    },
  ])('$name', ({ a, b, reads }) => {
    const view = conflictViews({ origin: [...a, 'x'.repeat(90)], upstream: [...b, 'x'.repeat(90)] });
    expect(renderPieces(view!.upstream, 'code')).toBe(reads || '(unchanged)');
    if (reads === '') expect(listEdits(a, b)).toEqual([]);
  });
});

describe('the three sides of a conflict on a long value read apart', () => {
  it.each([
    {
      name: "a list (a container's args): each side's own edits",
      values: { origin: args, upstream: [...args.slice(0, 3), '--v=10'], local: [...args, '--tls-min-version=VersionTLS12'] },
      origin: 'a list of 4',
      upstream: '[3] `"--v=0"` → `"--v=10"`',
      local: '+ `"--tls-min-version=VersionTLS12"`',
    },
    {
      name: 'a long string: the part that differs, with context, the same window in every column',
      values: { origin: script, upstream: script.replace('8080', '9090'), local: script.replace('127.0.0.1', 'localhost') },
      origin: '…`upstream=http://127.0.0.1:8080/ -------------`…',
      upstream: '…`upstream=http://127.0.0.1:9090/ -------------`…',
      local: '…`upstream=http://localhost:8080/ -------------`…',
    },
    {
      name: 'a long map: the keys each side changed',
      values: {
        origin: { a: 'x'.repeat(80), b: '2' },
        upstream: { a: 'x'.repeat(80), b: '3' },
        local: { a: 'x'.repeat(80), b: '2', c: '4' },
      },
      origin: 'a map of 2 key(s)',
      upstream: '`b`: `"2"` → `"3"`',
      local: '+ `c`: `"4"`',
    },
    {
      name: 'no origin (both added the field): each side against the other',
      values: { upstream: [...args, '--a'], local: [...args, '--b'] },
      origin: '(absent)',
      upstream: '[4] `"--b"` → `"--a"`',
      local: '[4] `"--a"` → `"--b"`',
    },
  ])('$name', ({ values, origin, upstream, local }) => {
    const view = conflictViews(values)!;
    expect([renderPieces(view.origin, 'cell'), renderPieces(view.upstream, 'cell'), renderPieces(view.local, 'cell')]).toEqual([
      origin,
      upstream,
      local,
    ]);
  });

  it.each([
    { name: 'short values', values: { origin: 3, upstream: 4, local: 6 } },
    { name: 'sides of different kinds', values: { origin: 'x'.repeat(90), upstream: ['x'.repeat(90)], local: 'y' } },
  ])('$name are shown whole: no view', ({ values }) => {
    expect(conflictViews(values)).toBeUndefined();
  });

  it("a stranger's text in an item stays text", () => {
    const view = conflictViews({ origin: ['x'.repeat(90)], upstream: ['x'.repeat(90), '`| <!-- @admin'] })!;
    expect(renderPieces(view.upstream, 'cell')).toBe('+ ``"`\\| <!-\u200b- @admin"``');
  });
});

describe('what a field changed from, to', () => {
  it.each([
    { name: 'short', from: 3, to: 4, reads: ['`3`', '`4`'] },
    { name: 'added', from: undefined, to: 'a', reads: ['(absent)', '`a`'] },
    { name: 'a long list', from: args, to: [...args, '--v=2'], reads: ['a list of 4', '+ `"--v=2"`'] },
  ])('$name', ({ from, to, reads }) => {
    const v = changeViews(from, to);
    expect([renderPieces(v.from, 'code'), renderPieces(v.to, 'code')]).toEqual(reads);
  });
});
