import { describe, expect, it } from 'vitest';
import { Scalar } from 'yaml';
import { mergeFiles } from '../resource/merge-files.js';
import { printOptions } from './print.js';
import { ScalarPrinter } from './splice.js';
import { parseYamlStream } from '../yaml/parse.js';

/** One ConfigMap file merged three ways; the merged text. */
function merged(origin: string, upstream: string, local: string): string {
  const result = mergeFiles({
    origin: [{ path: 'cm.yaml', text: origin }],
    upstream: [{ path: 'cm.yaml', text: upstream }],
    local: [{ path: 'cm.yaml', text: local }],
  });
  return result.files[0]!.text;
}

const cm = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n${data}`;

describe('a merge that changes only values in place', () => {
  it.each([
    ['a quoted key and the spaces before its value', '  "a":   "1"\n  b: "2"\n', '  "a":   "9"\n  b: "2"\n'],
    ['a line comment as local spaced it', '  a: "1"   #  keep\n  b: "2"\n', '  a: "9"   #  keep\n  b: "2"\n'],
    ['a value nested in maps', '  a: "1"\nspec:\n    deep:\n        x: 1\n', '  a: "9"\nspec:\n    deep:\n        x: 2\n'],
    ['a plain value that must now be quoted', '  a: one\n', '  a: "yes"\n'],
  ])('keeps every byte of local but the values upstream changed (%s)', (_, local, expected) => {
    // upstream changes `a` to 9 (and `x` to 2); local's own layout is what the file keeps
    const origin = cm(
      local
        .replace(/"a":\s+/, 'a: ')
        .replace(/\s+#\s+keep/, '')
        .replace(/ {4}/g, '  '),
    );
    const upstreamText = origin
      .replace(/a: "1"/, 'a: "9"')
      .replace('a: one', "a: 'yes'")
      .replace(/x: 1/, 'x: 2');
    expect(merged(origin, upstreamText, cm(local))).toBe(cm(expected));
  });

  it.each([
    ['an empty value', '  a:\n  b: "1"\n', '  a: x\n  b: "1"\n', '  a:\n  b: "1"\n', '  a: x\n  b: "1"\n'],
    ['a null', '  a: ~\n', '  a: x\n', '  a: ~\n', '  a: x\n'],
    ['a tagged value', '  a: !!str 1\n', '  a: !!str 2\n', '  a: !!str 1\n', '  a: !!str "2"\n'],
    ['a value that becomes two lines', '  a: "1"\n', '  a: "two\\nlines"\n', '  a: "1"\n', '  a: "two\\nlines"\n'],
  ])('writes a value where local had %s', (_, origin, upstream, local, expected) => {
    expect(merged(cm(origin), cm(upstream), cm(local))).toBe(cm(expected));
  });

  it('prints the document when more than values changed: a key added, a list edited', () => {
    const origin = cm('  a: "1"\n');
    const out = merged(origin, cm('  a: "9"\n  b: "2"\n'), cm('  a:   "1"\n'));
    expect(parseYamlStream(out)[0]!.toJS()).toMatchObject({ data: { a: '9', b: '2' } });
    const list = (items: string) => `apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems:\n${items}`;
    const listed = merged(list('- "1"\n'), list('- "9"\n'), list('- "1"\n'));
    expect(parseYamlStream(listed)[0]!.toJS()).toMatchObject({ items: ['9'] });
  });
});

describe('a replaced double-quoted value', () => {
  it.each([
    'value 2',
    '',
    '  spaced  ',
    'a: b # c',
    '{x}',
    '[1, 2]',
    "it's",
    'tab\there',
    'quote " inside',
    'back\\slash',
    'é',
    'yes',
    '0644',
  ])('is written as the printer writes it (%j)', (value) => {
    const printer = new ScalarPrinter(printOptions({ indent: 2, indentSeq: false }));
    const scalar = Object.assign(new Scalar(value), { type: 'QUOTE_DOUBLE' as const });
    expect(printer.print(scalar)).toBe(printer.printed(scalar));
  });
});
