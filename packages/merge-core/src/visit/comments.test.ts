// biome-ignore-all lint/suspicious/noTemplateCurlyInString: kpt setter comments are literal `${name}` text
// Comments merge three ways, as values do (and as kpt does): upstream's change to a comment is
// taken where local left that comment as origin had it; where local changed it, local's stays.
import { describe, expect, test } from 'vitest';
import { mergeFiles } from '../resource/merge-files.js';
import { merge3Text } from '../value.js';

interface CommentCase {
  readonly name: string;
  readonly origin: string;
  readonly upstream: string;
  readonly local: string;
  readonly expected: string;
}

const cases: readonly CommentCase[] = [
  {
    name: 'a line comment upstream changed on a value it did not change',
    origin: 'a: 1 # old\nb: 2\n',
    upstream: 'a: 1 # new\nb: 2\n',
    local: 'a: 1 # old\nb: 3\n',
    expected: 'a: 1 # new\nb: 3\n',
  },
  {
    name: 'a line comment upstream added',
    origin: 'a: 1\n',
    upstream: 'a: 1 # added\n',
    local: 'a: 1\n',
    expected: 'a: 1 # added\n',
  },
  {
    name: 'a line comment upstream removed (a setter upstream dropped)',
    origin: 'namespace: ns # kpt-set: ${namespace}\n',
    upstream: 'namespace: ns\n',
    local: 'namespace: ns # kpt-set: ${namespace}\n',
    expected: 'namespace: ns\n',
  },
  {
    name: "a line comment upstream removed on a value local changed: local's comment was origin's, so it goes",
    origin: 'namespace: ns # kpt-set: ${namespace}\n',
    upstream: 'namespace: ns\n',
    local: 'namespace: mine # kpt-set: ${namespace}\n',
    expected: 'namespace: mine\n',
  },
  {
    name: "both changed the line comment: local's stays",
    origin: 'a: 1 # old\n',
    upstream: 'a: 1 # upstream\n',
    local: 'a: 1 # local\n',
    expected: 'a: 1 # local\n',
  },
  {
    name: "only local changed the line comment: local's stays",
    origin: 'a: 1 # old\n',
    upstream: 'a: 1 # old\n',
    local: 'a: 1 # local\n',
    expected: 'a: 1 # local\n',
  },
  {
    name: 'a comment above a key (not the first) upstream changed',
    origin: 'a: 1\n# about b\nb: 2\n',
    upstream: 'a: 1\n# about b, v2\nb: 2\n',
    local: 'a: 1\n# about b\nb: 2\n',
    expected: 'a: 1\n# about b, v2\nb: 2\n',
  },
  {
    name: "a comment above a key both changed: local's stays",
    origin: 'a: 1\n# about b\nb: 2\n',
    upstream: 'a: 1\n# about b, v2\nb: 2\n',
    local: 'a: 1\n# about b, mine\nb: 2\n',
    expected: 'a: 1\n# about b, mine\nb: 2\n',
  },
  {
    name: 'a comment above the first key of a nested map upstream changed',
    origin: 'spec:\n  # the class\n  storageClass: STANDARD\n',
    upstream: 'spec:\n  # the class, v2\n  storageClass: STANDARD\n',
    local: 'spec:\n  # the class\n  storageClass: STANDARD\n  extra: 1\n',
    expected: 'spec:\n  # the class, v2\n  storageClass: STANDARD\n  extra: 1\n',
  },
  {
    name: "a comment above the first key of a nested map both changed: local's stays",
    origin: 'spec:\n  # the class\n  storageClass: STANDARD\n',
    upstream: 'spec:\n  # the class, v2\n  storageClass: STANDARD\n',
    local: 'spec:\n  # the class, mine\n  storageClass: STANDARD\n',
    expected: 'spec:\n  # the class, mine\n  storageClass: STANDARD\n',
  },
  {
    name: 'a comment above the first key of the document upstream changed',
    origin: '# the resource\na: 1\n',
    upstream: '# the resource, v2\na: 1\n',
    local: '# the resource\na: 1\nb: 2\n',
    expected: '# the resource, v2\na: 1\nb: 2\n',
  },
  {
    name: "a map's line comment (after its key) upstream changed",
    origin: 'labels: # labels\n  team: a\n',
    upstream: 'labels: # labels, v2\n  team: a\n',
    local: 'labels: # labels\n  team: a\n',
    expected: 'labels: # labels, v2\n  team: a\n',
  },
  {
    name: 'a comment above the first item of a list upstream changed',
    origin: 'args:\n  # the flags\n  - -a\n  - -b\n',
    upstream: 'args:\n  # the flags, v2\n  - -a\n  - -b\n',
    local: 'args:\n  # the flags\n  - -a\n  - -b\n',
    expected: 'args:\n  # the flags, v2\n  - -a\n  - -b\n',
  },
  {
    name: "a comment on an item of a list merged whole upstream changed: upstream's list, as it is local's value",
    origin: 'args:\n  - -a # first\n  - -b\n',
    upstream: 'args:\n  - -a # first, v2\n  - -b\n',
    local: 'args:\n  - -a # first\n  - -b\n',
    expected: 'args:\n  - -a # first, v2\n  - -b\n',
  },
  {
    name: "a comment on an item of a list merged whole both changed: local's stays",
    origin: 'args:\n  - -a # first\n  - -b\n',
    upstream: 'args:\n  - -a # first, v2\n  - -b\n',
    local: 'args:\n  - -a # mine\n  - -b\n',
    expected: 'args:\n  - -a # mine\n  - -b\n',
  },
  {
    name: "a comment on a map's trailing line upstream changed",
    origin: 'spec:\n  a: 1\n  # end of spec\nother: 1\n',
    upstream: 'spec:\n  a: 1\n  # end of spec, v2\nother: 1\n',
    local: 'spec:\n  a: 1\n  # end of spec\nother: 1\n',
    expected: 'spec:\n  a: 1\n  # end of spec, v2\nother: 1\n',
  },
  {
    name: "a comment after the document's last line upstream changed, next to a change (no blank line added)",
    origin: 'a: 1\nb: 2\n# end\n',
    upstream: 'a: 1\nb: 3\n# end, v2\n',
    local: 'a: 1\nb: 2\n# end\n',
    expected: 'a: 1\nb: 3\n# end, v2\n',
  },
  {
    name: "a comment after the document's last line both changed: local's stays",
    origin: 'a: 1\nb: 2\n# end\n',
    upstream: 'a: 1\nb: 3\n# end, v2\n',
    local: 'a: 1\nb: 2\n# end, mine\n',
    expected: 'a: 1\nb: 3\n# end, mine\n',
  },
  {
    name: "the document's head comment, set apart by a blank line (a licence), stays local's as kpt keeps it",
    origin: '# head\n\na: 1\n',
    upstream: '# head, v2\n\na: 2\n',
    local: '# head\n\na: 1\n',
    expected: '# head\n\na: 2\n',
  },
];

describe('comments merged three ways', () => {
  for (const c of cases) {
    test(c.name, () => {
      expect(merge3Text({ origin: c.origin, upstream: c.upstream, local: c.local }).text).toBe(c.expected);
    });
  }
});

describe("a package's setters follow upstream's (blueprints' catalog/bucket v0.4.1 → v0.4.3)", () => {
  const bucket = (nameSetter: string, namespace: string, classSetter: string) =>
    [
      'apiVersion: storage.cnrm.cloud.google.com/v1beta1',
      'kind: StorageBucket',
      'metadata: # kpt-merge: config-control/bucket',
      `  name: my-bucket # ${nameSetter}`,
      `  namespace: ${namespace}`,
      'spec:',
      `  storageClass: STANDARD # ${classSetter}`,
      '  versioning:',
      '    enabled: false',
      '',
    ].join('\n');
  const v041 = bucket('{"$kpt-set":"name"}', 'config-control # {"$kpt-set":"namespace"}', '{"$kpt-set":"storage-class"}');
  const v042 = bucket('kpt-set: ${name}', 'config-control # kpt-set: ${namespace}', 'kpt-set: ${storage-class}');
  const v043 = bucket('kpt-set: ${name}', 'config-control', 'kpt-set: ${storage-class}');
  const files = (text: string) => [{ path: 'bucket.yaml', text }];
  const update = (origin: string, upstream: string, local: string) =>
    mergeFiles({ origin: files(origin), upstream: files(upstream), local: files(local) }).files[0]!.text;

  test('the setter comments change with upstream; a local value edit stays', () => {
    const local = v041.replace('enabled: false', 'enabled: true');
    expect(update(v041, v042, local)).toBe(v042.replace('enabled: false', 'enabled: true'));
  });

  test('a setter upstream removed goes', () => {
    expect(update(v042, v043, v042)).toBe(v043);
  });
});
