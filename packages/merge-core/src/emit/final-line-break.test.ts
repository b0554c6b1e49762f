// A line break after a file's last line is layout, except after a block scalar (`|`, `>`) on the
// last line: Kubernetes' reader (go-yaml) reads `s: |\n  x` at the end of a file as "x", and
// `s: |\n  x\n` as "x\n". Written files end with a line break, their values unchanged.
import { describe, expect, test } from 'vitest';
import { mergeFiles } from '../resource/merge-files.js';
import { merge3Text } from '../value.js';
import { withFinalLineBreak } from './print.js';

describe('withFinalLineBreak', () => {
  test.each([
    ['plain scalar', 'a: 1', 'a: 1\n'],
    ['already ended', 's: |\n  x\n', 's: |\n  x\n'],
    ['literal, clip', 'a: 1\ns: |\n  x', 'a: 1\ns: |-\n  x\n'],
    ['literal, keep', 's: |+\n  x', 's: |-\n  x\n'],
    ['literal, strip', 's: |-\n  x', 's: |-\n  x\n'],
    ['literal, indentation indicator', 's: |2\n    x', 's: |2-\n    x\n'],
    ['literal, indicator after chomping, a comment on the header', 's: |+2 # c\n    x', 's: |2- # c\n    x\n'],
    ['folded', 's: >\n  x\n  y', 's: >-\n  x\n  y\n'],
    ['in a list', 'l:\n  - |\n    x', 'l:\n  - |-\n    x\n'],
    ['a comment last', 's: |\n  x\n# end', 's: |\n  x\n# end\n'],
    ['blank last line (the scalar holds its line break)', 's: |\n  x\n  ', 's: |\n  x\n  \n'],
    ['the last document of a stream', 's: |\n  a\n---\nt: |\n  b', 's: |\n  a\n---\nt: |-\n  b\n'],
    ['a top-level block scalar', '--- |\n  x', '--- |-\n  x\n'],
  ])('%s', (_, text, expected) => {
    expect(withFinalLineBreak(text)).toBe(expected);
  });
});

describe('a merged file that ends in a block scalar with no line break after it', () => {
  const configMap = (v: string, script: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: "${v}"\n  script: |\n    ${script}`;
  const files = (text: string) => [{ path: 'cm.yaml', text }];
  const merge = (origin: string, upstream: string, local: string) =>
    mergeFiles({ origin: files(origin), upstream: files(upstream), local: files(local) }).files[0]!.text;

  test('upstream changed another field: the script keeps its value (no line break added to it)', () => {
    expect(merge(configMap('1', 'echo hi'), configMap('2', 'echo hi'), configMap('1', 'echo hi'))).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: "2"\n  script: |-\n    echo hi\n',
    );
  });

  test("upstream changed the script: upstream's value, with no line break added to it", () => {
    expect(merge(configMap('1', 'echo hi'), configMap('1', 'echo ho'), configMap('1', 'echo hi'))).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: "1"\n  script: |-\n    echo ho\n',
    );
  });

  test("upstream changed the script's last line only: the header the file had reads no line break into the value", () => {
    const script = (last: string) => `echo hi\n    ${last}`;
    expect(merge(configMap('1', script('echo v1')), configMap('1', script('echo v2')), configMap('1', script('echo v1')))).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: "1"\n  script: |-\n    echo hi\n    echo v2\n',
    );
  });

  test('a document upstream added after one that ends so keeps its value too', () => {
    const other = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n';
    const result = mergeFiles({
      origin: files(other),
      upstream: files(`${other}---\n${configMap('1', 'echo hi')}`),
      local: files(other),
    }).files[0]!.text;
    expect(result).toBe(`${other}---\n${configMap('1', 'echo hi').replace('script: |', 'script: |-')}\n`);
  });

  test('adding the line break the value lacked is a change upstream made', () => {
    const result = merge3Text({ origin: 's: |\n  x', upstream: 's: |\n  x\n', local: 's: |\n  x' });
    expect(result.text).toBe('s: |\n  x\n');
  });
});
