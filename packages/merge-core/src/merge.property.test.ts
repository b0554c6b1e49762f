/**
 * The merge laws, as fast-check properties over generated Deployments. CI runs a few hundred
 * cases per law; `pnpm bench` runs them with KDELTA_PROPERTY_RUNS=10000.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parse, stringify } from 'yaml';
import { mergeFiles } from './resource/merge-files.js';
import { deepEqual } from './resource/merge-files.js';

const numRuns = Number(process.env.KDELTA_PROPERTY_RUNS ?? 150);

const envVar = fc.record({ name: fc.constantFrom('A', 'B', 'C', 'D'), value: fc.constantFrom('1', '2', 'x', 'yes', '0644') });
const container = fc.record({
  name: fc.constantFrom('web', 'api', 'sidecar', 'cache'),
  image: fc.constantFrom('img:1', 'img:2', 'img:3'),
  args: fc.option(fc.array(fc.constantFrom('-a', '-b', '--c'), { maxLength: 3 }), { nil: undefined }),
  env: fc.option(fc.uniqueArray(envVar, { selector: (e) => e.name, maxLength: 3 }), { nil: undefined }),
});
const deployment = fc
  .record({
    replicas: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    labels: fc.option(fc.dictionary(fc.constantFrom('app', 'team', 'tier'), fc.constantFrom('x', 'y', 'on')), { nil: undefined }),
    containers: fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 3 }),
    paused: fc.option(fc.boolean(), { nil: undefined }),
  })
  .map(({ replicas, labels, containers, paused }) =>
    prune({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app', labels },
      spec: { replicas, paused, template: { spec: { containers } } },
    }),
  );

/**
 * Explicit nulls as generators write them (kubebuilder's `creationTimestamp: null`, an affinity
 * whose parts are null), beside maps and scalars.
 */
const nullable = <T>(value: fc.Arbitrary<T>) => fc.oneof(fc.constant(null), value);
const nulls = fc.record({
  creationTimestamp: fc.option(fc.constant(null), { nil: undefined }),
  affinity: fc.option(
    fc.dictionary(
      fc.constantFrom('a', 'b', 'c'),
      nullable(fc.oneof(fc.constantFrom('1', '2'), fc.dictionary(fc.constantFrom('x', 'y'), fc.constantFrom('1', '2'), { minKeys: 1 }))),
      { minKeys: 1 },
    ),
    { nil: undefined },
  ),
});
const deploymentWithNulls = fc.tuple(deployment, nulls).map(([d, { creationTimestamp, affinity }]) =>
  prune({
    ...d,
    metadata: { ...d.metadata, creationTimestamp },
    spec: { ...d.spec, template: { spec: { ...d.spec.template.spec, affinity } } },
  }),
);

/** Drops undefined fields, as a YAML file would not have them. */
function prune<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * A custom resource whose order means something: Cloud Build-like steps (a list keyed by `name`
 * by kpt's fallback keys), a map of substitutions, labels; every one in a generated order.
 */
const step = fc.record({
  name: fc.constantFrom('fetch', 'build', 'test', 'push', 'deploy', 'notify'),
  args: fc.constantFrom(['a'], ['b']),
});
const build = fc
  .record({
    labels: fc.option(fc.dictionary(fc.constantFrom('app', 'team', 'tier', 'zone'), fc.constantFrom('x', 'y')), { nil: undefined }),
    steps: fc.uniqueArray(step, { selector: (s) => s.name, minLength: 1, maxLength: 6 }),
    substitutions: fc.option(fc.dictionary(fc.constantFrom('_A', '_B', '_C', '_D', '_E'), fc.constantFrom('1', '2'), { minKeys: 1 }), {
      nil: undefined,
    }),
  })
  .map(({ labels, steps, substitutions }) =>
    prune({ apiVersion: 'cloudbuild.example.com/v1', kind: 'Build', metadata: { name: 'b', labels }, spec: { steps, substitutions } }),
  );

/**
 * A Service's ports, keyed by `port` and `protocol` (a secondary key that may be absent: TCP), and
 * upstream's version of them: each item keeps, drops or changes its protocol, name and targetPort.
 */
const portFields = {
  protocol: fc.constantFrom('TCP', 'UDP'),
  name: fc.constantFrom('dns', 'web', 'metrics'),
  targetPort: fc.constantFrom(8053, 8080),
};
type ServicePort = { port: number; protocol?: string; name?: string; targetPort?: number };
const servicePort = fc.record({
  port: fc.constantFrom(53, 80, 443, 9153),
  protocol: fc.option(portFields.protocol, { nil: undefined }),
  name: fc.option(portFields.name, { nil: undefined }),
  targetPort: fc.option(portFields.targetPort, { nil: undefined }),
});
/** A field as upstream leaves it: kept, deleted, or set (to the same or another value). */
const edited = <T>(value: T | undefined, other: fc.Arbitrary<T>) => fc.oneof(fc.constant(value), fc.constant(undefined), other);
const upstreamPort = (p: ServicePort) =>
  fc.record({
    port: fc.constant(p.port),
    protocol: edited(p.protocol, portFields.protocol),
    name: edited(p.name, portFields.name),
    targetPort: edited(p.targetPort, portFields.targetPort),
  });
const service = (ports: readonly ServicePort[]) =>
  prune({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { selector: { app: 'x' }, ports } });
const portsUpdate = fc
  .uniqueArray(servicePort, { selector: (p) => p.port, minLength: 1, maxLength: 3 })
  .chain((origin) => fc.tuple(...origin.map(upstreamPort)).map((upstream) => [service(origin), service(upstream)] as const));

const text = (value: unknown) => stringify(value, { version: '1.1' });
const files = (value: unknown) => [{ path: 'app.yaml', text: text(value) }];

function merge(o: unknown, u: unknown, l: unknown, strategy: 'upstream-wins' | 'local-wins' = 'upstream-wins') {
  return mergeFiles({ origin: files(o), upstream: files(u), local: files(l) }, { strategy }).files[0]!.text;
}

/** Keyed lists compare as sets: order of containers and env vars is not meaningful. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(normalize);
    return items.every((i) => typeof i === 'object' && i !== null && 'name' in i)
      ? [...items].sort((a, b) => String((a as { name: string }).name).localeCompare(String((b as { name: string }).name)))
      : items;
  }
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  return value;
}

const read = (yaml: string) => normalize(parse(yaml, { version: '1.1' }));

/**
 * Upstream as a merge leaves it: a null upstream set where origin had none is a deletion (seed 001:
 * "the value is null, remove the field from local"); a null origin already had is upstream's value.
 * Maps only: the generated nulls are never inside list items.
 */
function asMerged(upstream: unknown, origin: unknown): unknown {
  if (!isRecord(upstream)) return upstream;
  const before = isRecord(origin) ? origin : {};
  const fields = Object.entries(upstream).filter(([k, v]) => v !== null || before[k] === null);
  return Object.fromEntries(fields.map(([k, v]) => [k, asMerged(v, before[k])]));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

describe('merge laws', () => {
  test('merge(o, u, o) = u: an untouched copy becomes upstream', () => {
    fc.assert(
      fc.property(deployment, deployment, (o, u) => deepEqual(read(merge(o, u, o)), normalize(u))),
      { numRuns },
    );
  });

  test('merge(o, u, o) = u with explicit nulls: a null local left as origin had it does not outlive upstream', () => {
    fc.assert(
      fc.property(deploymentWithNulls, deploymentWithNulls, (o, u) => deepEqual(read(merge(o, u, o)), normalize(asMerged(u, o)))),
      { numRuns },
    );
  });

  test("merge(o, u, o) = u in order: with no local edit, every keyed list and map comes out in upstream's order", () => {
    // JSON text keeps the order of keys and items: equal text is equal order.
    const inOrder = (yaml: string) => JSON.stringify(parse(yaml, { version: '1.1' }));
    fc.assert(
      fc.property(
        fc.oneof(fc.tuple(deployment, deployment), fc.tuple(build, build), fc.tuple(deploymentWithNulls, deploymentWithNulls)),
        ([o, u]) => inOrder(merge(o, u, o)) === JSON.stringify(asMerged(u, o)),
      ),
      { numRuns },
    );
  });

  test('merge(o, u, o) = u for keyed lists whose items lose or gain fields, their secondary key among them', () => {
    // A port's protocol upstream deleted must not come back from origin: TCP is the default, so
    // the change would be lost without a word.
    fc.assert(
      fc.property(portsUpdate, ([o, u]) => {
        expect(parse(merge(o, u, o), { version: '1.1' })).toEqual(u);
      }),
      { numRuns },
    );
  });

  test('merge(o, o, l) = l, byte for byte: nothing new upstream changes nothing', () => {
    fc.assert(
      fc.property(deployment, deployment, (o, l) => merge(o, o, l) === text(l)),
      { numRuns },
    );
  });

  test('the same holds when upstream is the same data written differently (the merge itself, not its shortcut)', () => {
    // mergeFiles skips a resource whose upstream text is origin's; re-indenting upstream makes
    // the engine run, so this law is what justifies that shortcut.
    const reindented = (value: unknown) => [{ path: 'app.yaml', text: stringify(value, { version: '1.1', indent: 4, indentSeq: false }) }];
    fc.assert(
      fc.property(deployment, deployment, (o, l) => {
        const upstream = reindented(o);
        expect(upstream[0]!.text).not.toBe(text(o));
        return mergeFiles({ origin: files(o), upstream, local: files(l) }).files[0]!.text === text(l);
      }),
      { numRuns },
    );
  });

  test('merge(o, u, u) = u: a copy that already has the update keeps it', () => {
    fc.assert(
      fc.property(deployment, deployment, (o, u) => deepEqual(read(merge(o, u, u)), normalize(u))),
      { numRuns },
    );
  });

  test('the output parses, and merging the same update twice changes nothing', () => {
    fc.assert(
      fc.property(deployment, deployment, deployment, (o, u, l) => {
        const once = merge(o, u, l);
        expect(() => parse(once, { version: '1.1' })).not.toThrow();
        const twice = mergeFiles({ origin: files(o), upstream: files(u), local: [{ path: 'app.yaml', text: once }] }).files[0]!.text;
        return twice === once;
      }),
      { numRuns },
    );
  });

  test('with local-wins, no local change is ever lost', () => {
    fc.assert(
      fc.property(deployment, deployment, deployment, (o, u, l) => {
        const result = flatten(parse(merge(o, u, l, 'local-wins'), { version: '1.1' }));
        const origin = flatten(o);
        const local = flatten(l);
        for (const [path, value] of local) {
          if (origin.get(path) !== value && result.get(path) !== value) return false;
        }
        for (const path of origin.keys()) {
          if (!local.has(path) && result.has(path) && !isContainerPath(path, local)) return false;
        }
        return true;
      }),
      { numRuns },
    );
  });

  test("a pinned field (# kdelta:local) always equals local's, under every strategy", () => {
    // Each pinnable field by the line that holds it in the printed Deployment, and where it is.
    const pins = [
      { line: /^( {2}replicas: .*)$/m, path: ['spec', 'replicas'] },
      { line: /^( {2}labels:)$/m, path: ['metadata', 'labels'] },
      { line: /^( {6}containers:)$/m, path: ['spec', 'template', 'spec', 'containers'] },
    ];
    const at = (value: unknown, path: readonly string[]) =>
      path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);
    fc.assert(
      fc.property(
        deployment,
        deployment,
        deployment,
        fc.constantFrom(...pins),
        fc.constantFrom('upstream-wins' as const, 'local-wins' as const, 'fail' as const),
        (o, u, l, pin, strategy) => {
          const local = text(l);
          if (!pin.line.test(local)) return true;
          const pinned = local.replace(pin.line, '$1 # kdelta:local');
          const result = mergeFiles({ origin: files(o), upstream: files(u), local: [{ path: 'app.yaml', text: pinned }] }, { strategy });
          const merged = result.files[0]!.text;
          expect(merged).toContain('# kdelta:local');
          expect(result.conflicts.filter((c) => c.path.startsWith(`.${pin.path.join('.')}`))).toEqual([]);
          return deepEqual(at(parse(merged, { version: '1.1' }), pin.path), at(l, pin.path));
        },
      ),
      { numRuns },
    );
  });
});

/** A local deletion of a whole container shows up as missing leaves; it is checked by the leaves of the list. */
function isContainerPath(path: string, local: Map<string, unknown>): boolean {
  const container = /^spec\.template\.spec\.containers\[[^\]]+\]/.exec(path)?.[0];
  return container !== undefined && ![...local.keys()].some((k) => k.startsWith(container));
}

/** Leaves by path, keyed lists addressed by name, atomic lists as one JSON leaf. */
function flatten(value: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(value)) {
    if (value.every((i) => i && typeof i === 'object' && 'name' in i)) {
      for (const item of value) flatten(item, `${path}[${(item as { name: string }).name}]`, out);
    } else {
      out.set(path, JSON.stringify(value));
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) flatten(v, path ? `${path}.${k}` : k, out);
  } else {
    out.set(path, value);
  }
  return out;
}
