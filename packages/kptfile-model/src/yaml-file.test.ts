import { describe, expect, it } from 'vitest';
import { rebuildYamlFile, splitYamlDocuments } from './yaml-file.js';

const three = 'a: 1 # first\n---\nb: 2\n---\nc: 3\n';

describe('rebuildYamlFile', () => {
  it('gives back the file byte for byte when nothing changes', () => {
    for (const text of [three, '---\na: 1\n', '# only a comment\n', 'a: 1\n---\n# trailing\n', '']) {
      expect(rebuildYamlFile(text, new Map())).toBe(text);
      expect(
        splitYamlDocuments(text)
          .map((c) => c.marker + c.body)
          .join(''),
      ).toBe(text);
    }
  });

  it('replaces and removes documents in the middle, keeping the rest as written', () => {
    expect(rebuildYamlFile(three, new Map([[1, null]]))).toBe('a: 1 # first\n---\nc: 3\n');
    expect(rebuildYamlFile(three, new Map([[2, 'c: 4\n']]))).toBe('a: 1 # first\n---\nb: 2\n---\nc: 4\n');
  });

  it('starts the file without `---` when its first documents are removed, as kpt writes it', () => {
    expect(rebuildYamlFile(three, new Map([[0, null]]))).toBe('b: 2\n---\nc: 3\n');
    expect(
      rebuildYamlFile(
        three,
        new Map([
          [0, null],
          [1, null],
        ]),
      ),
    ).toBe('c: 3\n');
    // a comment-only head stays; the first document kept follows it directly
    expect(rebuildYamlFile('# head\n---\na: 1\n---\nb: 2\n', new Map([[0, null]]))).toBe('# head\nb: 2\n');
  });

  it("keeps a file's own leading `---` when its first document stays", () => {
    expect(rebuildYamlFile('---\na: 1\n---\nb: 2\n', new Map([[1, null]]))).toBe('---\na: 1\n');
  });

  it('appends added documents after `---`', () => {
    expect(rebuildYamlFile('a: 1\n', new Map(), ['b: 2\n'])).toBe('a: 1\n---\nb: 2\n');
    expect(rebuildYamlFile('', new Map(), ['b: 2\n'])).toBe('b: 2\n');
  });
});

describe('a file that ends in a block scalar with no line break after it', () => {
  it('gets a line break that leaves the value as Kubernetes reads it (`|` strips)', () => {
    const text = 'a: 1\ns: |\n  echo hi';
    expect(rebuildYamlFile(text, new Map(), ['b: 2\n'])).toBe('a: 1\ns: |-\n  echo hi\n---\nb: 2\n');
    expect(rebuildYamlFile('a: 1\n', new Map(), ['s: >\n  x'])).toBe('a: 1\n---\ns: >-\n  x\n');
  });
});
