import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FieldPath } from '../path.js';
import { mergeFiles } from './merge-files.js';
import { setResourceField } from './set-field.js';

const deployment = (replicas: string, image = 'nginx:1') =>
  `# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # ours
spec:
  replicas: ${replicas}
  template:
    spec:
      containers:
      - name: web
        image: ${image}
        args: [a, b]
        env:
        - name: MODE
          value: fast
`;

describe('FieldPath.parse reads back what toString prints', () => {
  test.each([
    '.',
    '.spec.replicas',
    '.spec.template.spec.containers[name="web"].image',
    '.spec.ports[containerPort="80",protocol="TCP"].name',
    '.metadata.finalizers[="a.b/c"]',
    '.spec.args[2]',
    '.metadata.annotations["example.com/x y"]',
  ])('%s', (text) => {
    expect(FieldPath.parse(text)?.toString()).toBe(text);
  });

  test.each(['', 'spec', '.spec[', '.a[name=web]', '.a["x"', '.a[k="v"'])('%j is not a path', (text) => {
    expect(FieldPath.parse(text)).toBeUndefined();
  });

  test('any path survives print and parse', () => {
    const segment = fc.oneof(
      fc.string().map((s) => ({ field: s })),
      fc.nat(50).map((n) => ({ index: n })),
      fc.string().map((s) => ({ value: s })),
      fc
        .array(fc.tuple(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9]*$/), fc.string()), { minLength: 1, maxLength: 3 })
        .map((keys) => ({ keys })),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (segments) => {
        let path = FieldPath.root;
        for (const s of segments) {
          path =
            'field' in s
              ? path.field(s.field)
              : 'index' in s
                ? path.index(s.index)
                : 'value' in s
                  ? path.value(s.value)
                  : path.keyed(s.keys);
        }
        expect(FieldPath.parse(path.toString())?.toString()).toBe(path.toString());
      }),
    );
  });
});

describe('setResourceField', () => {
  const set = (path: string, value: unknown, pin = true, text = deployment('4')) =>
    setResourceField({ text, file: 'deploy.yaml', resource: 'apps/Deployment web', path, value, pin });

  test.each([
    { path: '.spec.replicas', value: 6, pin: true, line: '  replicas: 6 # kdelta:local' },
    { path: '.spec.replicas', value: 6, pin: false, line: '  replicas: 6' },
    { path: '.metadata.name', value: 'web', pin: true, line: '  name: web # kdelta:local ours' },
    { path: '.spec.replicas', value: '6', pin: true, line: '  replicas: "6" # kdelta:local' },
    {
      path: '.spec.template.spec.containers[name="web"].image',
      value: 'nginx:2',
      pin: true,
      line: '        image: nginx:2 # kdelta:local',
    },
    {
      path: '.spec.template.spec.containers[name="web"].env[name="MODE"].value',
      value: 'slow',
      pin: true,
      line: '          value: slow # kdelta:local',
    },
    { path: '.spec.paused', value: true, pin: true, line: '  paused: true # kdelta:local' },
  ])('$path = $value (pin $pin)', ({ path, value, pin, line }) => {
    const out = set(path, value, pin);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.text.split('\n')).toContain(line);
    // every other line as it was
    const before = deployment('4').split('\n');
    const after = out.text.split('\n');
    expect(after.filter((l) => !before.includes(l))).toEqual([line]);
  });

  test('a block map is pinned on its first line, and reads as pinned', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: "1"\n';
    const out = setResourceField({ text, file: 'c.yaml', resource: 'ConfigMap c', path: '.data', value: { a: '2', b: '3' }, pin: true });
    expect(out).toEqual({
      ok: true,
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  # kdelta:local\n  a: "2"\n  b: "3"\n',
    });
  });

  test('a list becomes a block list pinned on its first line', () => {
    const out = set('.spec.template.spec.containers[name="web"].args', ['c']);
    expect(out.ok && out.text).toContain('        args:\n        # kdelta:local\n        - c\n        env:\n');
  });

  test('only the named resource of a stream changes', () => {
    const other = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c # keep\ndata:\n  replicas: "4"\n';
    const text = `${other}---\n${deployment('4')}`;
    const out = set('.spec.replicas', 6, true, text);
    expect(out.ok && out.text).toBe(`${other}---\n${deployment('6 # kdelta:local')}`);
  });

  test.each([
    {
      path: '.spec.template.spec.containers[name="api"].image',
      reason: 'apps/Deployment web has no .spec.template.spec.containers[name="api"].image',
    },
    { path: '.spec.template.spec.containers[name="web"]', reason: 'is not a field of a map' },
    { path: '.', reason: 'is not a field of a map' },
  ])('$path cannot be set: $reason', ({ path, reason }) => {
    const out = set(path, 1);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.reason).toContain(reason);
  });

  test('a resource the file does not hold is said', () => {
    const out = setResourceField({
      text: deployment('4'),
      file: 'd.yaml',
      resource: 'apps/Deployment api',
      path: '.spec.replicas',
      value: 1,
      pin: true,
    });
    expect(out).toEqual({ ok: false, reason: 'd.yaml holds no resource apps/Deployment api' });
  });

  test.each([
    { path: '.spec.replicas', value: 6, kept: 'replicas: 6 # kdelta:local' },
    { path: '.spec.template.spec.containers[name="web"].args', value: ['c'], kept: '# kdelta:local\n        - c\n' },
  ])(
    'the pin written on $path holds at the next merge: upstream changes the field, local keeps it, no conflict',
    ({ path, value, kept }) => {
      const decided = set(path, value);
      if (!decided.ok) throw new Error(decided.reason);
      const upstream = deployment('8', 'nginx:2').replace('args: [a, b]', 'args: [a, b, z]');
      const result = mergeFiles({
        origin: [{ path: 'deploy.yaml', text: deployment('4') }],
        upstream: [{ path: 'deploy.yaml', text: upstream }],
        local: [{ path: 'deploy.yaml', text: decided.text }],
      });
      expect(result.conflicts).toEqual([]);
      expect(result.decisions.map((d) => d.path)).toEqual([path]);
      expect(result.files[0]!.text).toContain(kept);
      expect(result.files[0]!.text).toContain('image: nginx:2');
    },
  );
});
