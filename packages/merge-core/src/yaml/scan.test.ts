/**
 * The scanner against the parser: for generated KRM-ish streams (and damaged ones), whatever the
 * scan accepts parses without error into the same documents, and the identity read by the scan
 * is the parser's, or the scan says it is unsure.
 */
import fc from 'fast-check';
import { describe, expect, it, test } from 'vitest';
import { isMap } from 'yaml';
import { identityOf, scannedIdentityOf, upstreamIdentifierAnnotation } from '../resource/identity.js';
import { parseStream } from './parse.js';
import { scanDocuments, scanStream } from './scan.js';

const ID = upstreamIdentifierAnnotation;

const pick = <T>(xs: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);

const word = pick(['web', 'app-0', 'db', 'x', 'team.a', 'default', 'kube-system', 'a/b', 'v1.2']);
const scalar = fc.oneof(
  { weight: 6, arbitrary: word },
  { weight: 2, arbitrary: word.map((w) => `"${w}"`) },
  { weight: 2, arbitrary: word.map((w) => `'${w}'`) },
  {
    weight: 2,
    arbitrary: pick([
      '0123',
      '1e3',
      'true',
      'null',
      '~',
      '""',
      "''",
      '12',
      '-1',
      '--flag',
      'a b',
      'http://x:80/y',
      'a,b',
      'yes',
      '.5',
      'on',
      'Off',
      'y',
      '2001-01-01',
      '0x1f',
      '=',
      '<<',
    ]),
  },
  pick([
    '0123',
    '1e3',
    'true',
    'null',
    '~',
    '""',
    "''",
    '12',
    '-1',
    '--flag',
    'a b',
    'a: b',
    'a #c',
    'http://x:80/y',
    '"a"#c',
    '[a',
    '&x a',
    '*x',
    '!!str a',
    '"a\\"b"',
    'yes',
    '.5',
    'a,b',
    '>-',
  ]),
);
const comment = pick(['', '', '', ' # c', '  # kpt-merge: ns/n', ' #kpt-merge: a/', ' # kpt-merge:', '   ', '#c']);

interface Gen {
  indent: number;
}

function mapLines(entries: [string, string[]][], ind: string): string[] {
  const out: string[] = [];
  for (const [k, v] of entries) {
    if (v.length === 1 && !v[0]!.startsWith('\n')) out.push(`${ind}${k}:${v[0] === '' ? '' : ` ${v[0]}`}`);
    else {
      out.push(`${ind}${k}:${v[0]!.slice(1)}`);
      for (const l of v.slice(1)) out.push(l === '' ? '' : `${ind}${l}`);
    }
  }
  return out;
}

/** A value: an inline one (`[text]`) or `["\n<comment>", ...lines relative to the key]`. */
const valueArb = (u: string, depth: number): fc.Arbitrary<string[]> => {
  const inline = fc.tuple(scalar, comment).map(([s, c]) => [`${s}${c}`]);
  const flow = pick([['{}'], ['[]'], ['{a: b}'], ['{a: b, c: 1}'], ['{a: b, a: c}'], ['[a, "b"]'], ['[a,'], ['{ }']]);
  const blockScalar = fc
    .tuple(
      pick(['|', '>', '|-', '|+', '>-', '|2']),
      fc.array(pick(['text', 'more text', '', '# not a comment', '  indented']), { minLength: 0, maxLength: 3 }),
      comment,
    )
    .map(([h, ls, c]) => [`\n ${h}${c}`, ...ls.map((l) => (l === '' ? '' : `${u}${l}`))]);
  const empty = comment.map((c) => [`\n${c}`]);
  if (depth <= 0) return fc.oneof(inline, flow, blockScalar, empty);
  const sub = fc.array(fc.tuple(pick(['a', 'b', 'name', 'x.y/z', '"q"', 'a']), fc.constant(null)), { minLength: 1, maxLength: 3 });
  const nestedMap = fc
    .tuple(sub, fc.array(valueArb(u, depth - 1), { minLength: 3, maxLength: 3 }), comment, pick(['', `${u}# trailing`, '', '# col0']))
    .map(([ks, vs, c, trail]) => {
      const lines = mapLines(
        ks.map(([k], i) => [k, vs[i]!]),
        u,
      );
      return [`\n${c}`, ...lines, ...(trail ? [trail] : [])];
    });
  const seqIndent = pick(['', u]);
  const nestedSeq = fc
    .tuple(fc.array(fc.oneof(scalar, pick(['name: a', 'name: b\n  x: 1', ''])), { minLength: 1, maxLength: 3 }), seqIndent, comment)
    .map(([items, si, c]) => [
      `\n${c}`,
      ...items.flatMap((it) => it.split('\n').map((l, i) => (i === 0 ? `${si}-${it === '' ? '' : ` ${l}`}` : `${si}${l}`))),
    ]);
  return fc.oneof({ weight: 3, arbitrary: inline }, flow, blockScalar, empty, nestedMap, nestedSeq);
};

const docArb = (g: Gen): fc.Arbitrary<string> => {
  const u = ' '.repeat(g.indent);
  const identifier = pick([`'|A|default|a'`, `'apps|Deployment|prod|web'`, '"x|y|z|w"', '|A|ns|n', '', "'wrong'", '{}']);
  const metaEntry = fc.oneof(
    fc.tuple(
      pick(['name', 'namespace', '"name"', 'generateName', 'uid']),
      scalar.map((s) => [s]),
    ),
    fc.tuple(pick(['labels']), valueArb(u, 1)),
    fc.tuple(
      pick(['annotations']),
      fc.oneof(
        valueArb(u, 1),
        fc
          .tuple(fc.array(fc.tuple(pick(['a', 'b', ID, 'c']), scalar), { maxLength: 3 }), fc.option(identifier), comment)
          .map(([items, idv, c]) => {
            const entries: [string, string[]][] = items.map(([k, v]) => [k, [v]]);
            if (idv !== null) entries.push([ID, [idv]]);
            return entries.length === 0 ? [''] : [`\n${c}`, ...mapLines(entries, u)];
          }),
      ),
    ),
  );
  const metadata = fc.oneof(
    fc.tuple(comment, fc.array(metaEntry, { minLength: 1, maxLength: 5 })).map(([c, es]) => [`\n${c}`, ...mapLines(es, u)]),
    pick([['{}'], ['{name: a}'], [''], ['[a]'], ['x']]),
  );
  const top = fc.array(
    fc.oneof(
      fc.tuple(
        pick(['apiVersion']),
        pick(['v1', 'apps/v1', '"v1"', 'rbac.authorization.k8s.io/v1', '1', '']).map((v) => [v]),
      ),
      fc.tuple(
        pick(['kind']),
        pick(['Deployment', '"Service"', 'ConfigMap', 'true', '']).map((v) => [v]),
      ),
      fc.tuple(pick(['metadata']), metadata),
      fc.tuple(pick(['spec', 'data', 'items']), valueArb(u, 2)),
    ),
    { minLength: 0, maxLength: 5 },
  );
  return fc.oneof(
    { weight: 8, arbitrary: top.map((es) => mapLines(es as [string, string[]][], '').join('\n')) },
    pick(['- a\n- b', 'hello', '# only comments', '', 'key: [broken', '%YAML 1.1\n---\nkind: A', 'a:\n\tb: c', '? x\n: y']),
  );
};

/** Small damage to a text: a character dropped or doubled, a line re-indented or duplicated. */
const mutate = (text: string): fc.Arbitrary<string> =>
  fc
    .tuple(fc.nat(), pick(['none', 'none', 'none', 'none', 'none', 'none', 'drop', 'dup-char', 'indent', 'dup-line', 'crlf', 'tab']))
    .map(([n, how]) => {
      if (text.length === 0 || how === 'none') return text;
      const i = n % text.length;
      const lines = text.split('\n');
      const li = n % lines.length;
      switch (how) {
        case 'drop':
          return text.slice(0, i) + text.slice(i + 1);
        case 'dup-char':
          return text.slice(0, i) + text[i] + text.slice(i);
        case 'indent':
          lines[li] = ` ${lines[li]}`;
          return lines.join('\n');
        case 'dup-line':
          lines.splice(li, 0, lines[li]!);
          return lines.join('\n');
        case 'crlf':
          return text.replace(/\n/g, '\r\n');
        default:
          return text.slice(0, i) + '\t' + text.slice(i);
      }
    });

const streamArb = fc
  .tuple(pick([2, 2, 2, 4, 3]), fc.integer({ min: 1, max: 4 }), pick(['\n', '', '\n\n']), fc.boolean())
  .chain(([indent, n, tail, leadingSep]) =>
    fc
      .tuple(fc.array(docArb({ indent }), { minLength: n, maxLength: n }), pick(['', '', '# head\n', '\n# head\n\n']))
      .map(([docs, head]) => `${head}${leadingSep || head ? '---\n' : ''}${docs.join('\n---\n')}${tail}`),
  )
  .chain(mutate);

describe('scanStream against parseStream', () => {
  it('splits, identifies and validates as the parser does, or declines', () => {
    const seen = { scanned: 0, declined: 0, identities: 0, unsure: 0 };
    fc.assert(
      fc.property(streamArb, (text) => {
        const scanned = scanStream(text);
        if (!scanned) {
          seen.declined++;
          return;
        }
        seen.scanned++;
        // what the scan accepts, the parser reads without error, into the same document texts
        const parsed = parseStream(text, 'f.yaml');
        expect(scanned.map((d) => [d.text, d.empty])).toEqual(parsed.documents.map((d) => [d.text, d.empty]));
        for (const [i, d] of parsed.documents.entries()) {
          if (d.empty) continue;
          const contents = d.doc.contents;
          expect(isMap(contents)).toBe(true);
          if (!isMap(contents)) continue;
          // a document's text alone parses to the same resource as within its stream
          const alone = parseStream(d.text, 'f.yaml').documents;
          expect(alone).toHaveLength(1);
          // `yaml` prints a blank line that ends the whole text after a trailing empty value
          // (`kind:`) and drops it when another document follows; the resource is the same.
          expect(alone[0]!.doc.toString().trimEnd()).toBe(d.doc.toString().trimEnd());
          const r = scannedIdentityOf(scanned[i]!, text);
          if (!r) {
            seen.unsure++;
            continue;
          }
          seen.identities++;
          expect(r.identity).toEqual(identityOf(contents));
          const kind = contents.get('kind');
          expect(r.kind).toEqual(typeof kind === 'string' ? kind : undefined);
        }
      }),
      {
        numRuns: Number(process.env.KDELTA_PROPERTY_RUNS ?? 400),
        // a stream that once failed, checked on every run
        examples: [['# head\n---\n\n---\nmetadata: {}\nkind:\n\n---\n\n\n']],
      },
    );
    if (process.env.KDELTA_PROPERTY_STATS) console.log(seen);
    // The scan must actually be exercised, not only the fallback. About one stream in six is
    // scanned; one in twenty is far enough below that (six standard deviations at 400 runs)
    // never to flake, and still fails if the scanner stops accepting clean streams.
    expect(seen.scanned).toBeGreaterThan((seen.scanned + seen.declined) / 20);
    expect(seen.identities).toBeGreaterThan(seen.unsure);
  });
});

/** A document as `yaml` prints it, or the error printing it throws (an alias without its anchor). */
function printed(doc: { toString(): string }): string {
  try {
    return doc.toString();
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe('scanDocuments against parseStream', () => {
  it('splits where the parser splits; a document it declines parses alone as in its stream', () => {
    const seen = { split: 0, declinedDocuments: 0, undelimited: 0 };
    fc.assert(
      fc.property(streamArb, (text) => {
        const documents = scanDocuments(text);
        if (!documents) {
          seen.undelimited++;
          return;
        }
        let parsed: ReturnType<typeof parseStream>;
        try {
          parsed = parseStream(text, 'f.yaml');
        } catch {
          // A stream that does not parse: some document it holds must be declined (the merge
          // then parses it alone, fails, and parses the whole file to name the error).
          expect(documents.some((d) => d.declined)).toBe(true);
          return;
        }
        seen.split++;
        expect(documents.map((d) => d.text)).toEqual(parsed.documents.map((d) => d.text));
        for (const [i, d] of documents.entries()) {
          const inStream = parsed.documents[i]!;
          if (!d.declined) {
            expect(d.empty).toBe(inStream.empty);
            continue;
          }
          seen.declinedDocuments++;
          const alone = parseStream(d.text, 'f.yaml').documents;
          expect(alone).toHaveLength(1);
          expect(alone[0]!.empty).toBe(inStream.empty);
          expect(printed(alone[0]!.doc)).toBe(printed(inStream.doc));
        }
      }),
      { numRuns: Number(process.env.KDELTA_PROPERTY_RUNS ?? 400) },
    );
    if (process.env.KDELTA_PROPERTY_STATS) console.log(seen);
    expect(seen.declinedDocuments).toBeGreaterThan(0);
    expect(seen.split).toBeGreaterThan(seen.undelimited / 20);
  });
});

describe('scanDocuments', () => {
  const cm = (name: string, data = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${data}`;

  test('a document it does not model is declined alone; the others of the stream are scanned', () => {
    const odd = cm('b', 'data:\n  a: &x 1\n  b: *x\n');
    const text = `${cm('a')}---\n${odd}---\n${cm('c', 'data:\n\tx: 1\n')}---\n${cm('d')}`;
    const docs = scanDocuments(text)!;
    expect(docs.map((d) => d.declined)).toEqual([false, true, true, false]);
    expect(docs.map((d) => d.text)).toEqual(
      parseStream(`${cm('a')}---\n${odd}---\n${cm('c')}---\n${cm('d')}`, 'f').documents.map((d, i) =>
        i === 2 ? `---\n${cm('c', 'data:\n\tx: 1\n')}` : d.text,
      ),
    );
    expect(scanStream(text)).toBeUndefined();
  });

  // Small maps look through their keys, large ones keep a set: a duplicate is found either way,
  // where yaml would refuse it, and wherever it is in the map.
  test.each([
    [2, 0, 1],
    [16, 3, 15],
    [17, 0, 16],
    [17, 15, 16],
    [40, 20, 39],
    [40, 38, 39],
    [40, 2, 30],
  ])('a map of %i keys with key %i written again as key %i declines the document', (size, first, again) => {
    const keys = Array.from({ length: size }, (_, i) => `k${i === again ? first : i}`);
    const doc = (ks: string[]) => cm('a', `data:\n${ks.map((k) => `  ${k}: v\n`).join('')}`);
    expect(scanDocuments(doc(keys))!.map((d) => d.declined)).toEqual([true]);
    expect(scanDocuments(doc(keys.map((k, i) => (i === again ? `k${i}` : k))))!.map((d) => d.declined)).toEqual([false]);
  });

  test('what could move a document boundary declines the stream', () => {
    for (const text of [`%YAML 1.1\n---\n${cm('a')}`, `${cm('a')}...\n`, `--- # c\n${cm('a')}`, `${cm('a')}---\r\n${cm('b')}`]) {
      expect(scanDocuments(text), text).toBeUndefined();
    }
  });
});

describe('scanStream', () => {
  const cm = (name: string, meta = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:${meta}\n  name: ${name}\n`;

  test('a stream of KRM documents: the texts parseStream gives, comments and separators included', () => {
    const text = `# head\n---\n${cm('a')}# tail of a\n---\n${cm('b')}---\n`;
    const docs = scanStream(text)!;
    expect(docs.map((d) => d.text)).toEqual([`# head\n---\n${cm('a')}# tail of a\n`, `---\n${cm('b')}`, '---\n']);
    expect(docs.map((d) => d.empty)).toEqual([false, false, true]);
  });

  test('the merge comment on the metadata line names the resource; elsewhere the scan is unsure', () => {
    const text = cm('renamed', ' # kpt-merge: ns/original');
    expect(scannedIdentityOf(scanStream(text)![0]!, text)).toEqual({
      identity: { group: '', kind: 'ConfigMap', namespace: 'ns', name: 'original' },
      kind: 'ConfigMap',
    });
    const elsewhere = `${cm('x')}data:\n  # kpt-merge: ns/other\n  a: b\n`;
    expect(scannedIdentityOf(scanStream(elsewhere)![0]!, elsewhere)).toBeUndefined();
  });

  test('a name YAML 1.1 reads as a boolean: the scan is unsure', () => {
    const text = cm('on');
    expect(scannedIdentityOf(scanStream(text)![0]!, text)).toBeUndefined();
  });

  test('declines what it does not model, and what would not parse', () => {
    for (const text of [
      `${cm('a')}data:\n  a: &x 1\n  b: *x\n`,
      `${cm('a')}data:\n  a: 1\n  a: 2\n`,
      `${cm('a')}data:\n  yes: 1\n  on: 2\n`,
      `${cm('a')}data:\n\ta: 1\n`,
      `${cm('a')}data:\n  a: long\n   text\n`,
      `%YAML 1.1\n---\n${cm('a')}`,
      '- a\n- b\n',
      `${cm('a')}...\n`,
    ]) {
      expect(scanStream(text), text).toBeUndefined();
    }
  });
});
