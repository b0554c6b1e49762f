/** Merge laws of the Kptfile merge, checked on generated Kptfiles. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatKptfile } from './format.js';
import { mergeKptfile } from './merge.js';
import { derivedFunctionKey } from './pipeline-key.js';
import type { KptFunction, Kptfile } from './types.js';

const RUNS = Number(process.env['KDELTA_PROPERTY_RUNS'] ?? 150);

const stringMap = (keys: string[], values: string[]) =>
  fc.dictionary(fc.constantFrom(...keys), fc.constantFrom(...values), { maxKeys: keys.length });

const selectors = fc.array(fc.record({ kind: fc.constantFrom('Deployment', 'Service') }, { requiredKeys: [] }), { maxLength: 2 });

const fnArb: fc.Arbitrary<KptFunction> = fc
  .record({
    base: fc.constantFrom('gcr.io/fn/a', 'gcr.io/fn/b', 'c', 'localhost:5000/d', 'localhost:5000/e'),
    tag: fc.constantFrom('v1', 'v2'),
    name: fc.option(fc.constantFrom('n1', 'n2', 'n3'), { nil: undefined }),
    configMap: fc.option(stringMap(['k1', 'k2'], ['x', 'y']), { nil: undefined }),
    selectors: fc.option(selectors, { nil: undefined }),
  })
  .map(({ base, tag, name, configMap, selectors: sel }) => ({
    image: `${base}:${tag}`,
    ...(name ? { name } : {}),
    ...(configMap && Object.keys(configMap).length > 0 ? { configMap } : {}),
    ...(sel && sel.length > 0 ? { selectors: sel } : {}),
  }));

const kptfileArb = (fns: fc.Arbitrary<KptFunction[]>): fc.Arbitrary<Kptfile> =>
  fc
    .record({
      labels: fc.option(stringMap(['team', 'tier'], ['a', 'b']), { nil: undefined }),
      description: fc.option(fc.constantFrom('one', 'two'), { nil: undefined }),
      mutators: fc.option(fns, { nil: undefined }),
      validators: fc.option(fc.array(fnArb, { maxLength: 2 }), { nil: undefined }),
    })
    .map(({ labels, description, mutators, validators }) => {
      const kf: Kptfile = {
        apiVersion: 'kpt.dev/v1',
        kind: 'Kptfile',
        metadata: { name: 'pkg', ...(labels && Object.keys(labels).length ? { labels } : {}) },
      };
      if (description) kf.info = { description };
      if (mutators?.length || validators?.length) {
        kf.pipeline = { ...(mutators?.length ? { mutators } : {}), ...(validators?.length ? { validators } : {}) };
      }
      return kf;
    });

const anyKptfile = kptfileArb(fc.array(fnArb, { maxLength: 4 }));
const text = (kf: Kptfile): string => formatKptfile(kf);

/** The canonical form without empty sections (kpt keeps an emptied section as `{}`). */
function canonical(kf: Kptfile): string {
  const prune = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.length ? v.map(prune) : undefined;
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const p = prune(x);
        if (p !== undefined) out[k] = p;
      }
      return Object.keys(out).length ? out : undefined;
    }
    return v;
  };
  return formatKptfile((prune(kf) ?? {}) as Kptfile);
}

describe('Kptfile merge laws', () => {
  it('merge(o, o, l) = l', () => {
    fc.assert(
      fc.property(anyKptfile, anyKptfile, (o, l) => {
        const r = mergeKptfile({ origin: text(o), upstream: text(o), local: text(l) });
        expect(formatKptfile(r.kptfile)).toBe(formatKptfile(l));
      }),
      { numRuns: RUNS },
    );
  });

  it('merge(o, u, o) = u (empty sections aside)', () => {
    fc.assert(
      fc.property(anyKptfile, anyKptfile, (o, u) => {
        const r = mergeKptfile({ origin: text(o), upstream: text(u), local: text(o) });
        expect(canonical(r.kptfile)).toBe(canonical(u));
      }),
      { numRuns: RUNS },
    );
  });

  // Functions with distinct keys: either every one named (key = name) or none (key = image).
  const keyed = (named: boolean, pool: string[]) =>
    fc.subarray(pool).chain((keys) =>
      fc
        .tuple(
          ...keys.map((k) =>
            fc.record({ tag: fc.constantFrom('v1', 'v2'), cm: stringMap(['k1', 'k2'], ['x', 'y']) }).map(({ tag, cm }) => ({ k, tag, cm })),
          ),
        )
        .map((items) =>
          items.map(
            ({ k, tag, cm }): KptFunction => ({
              image: `localhost:5000/${named ? 'fn' : k}:${tag}`,
              ...(named ? { name: k } : {}),
              ...(Object.keys(cm).length ? { configMap: cm } : {}),
            }),
          ),
        ),
    );

  it('when a merge key applies, a function only local has is never lost', () => {
    fc.assert(
      fc.property(
        fc
          .boolean()
          .chain((named) =>
            fc.tuple(
              fc.constant(named),
              kptfileArb(keyed(named, ['a', 'b', 'c'])),
              kptfileArb(keyed(named, ['a', 'b', 'c'])),
              keyed(named, ['a', 'b', 'c']),
              fc.integer({ min: 0, max: 3 }),
            ),
          ),
        ([named, o, u, localFns, at]) => {
          const mine: KptFunction = { image: 'localhost:5000/mine:v1', ...(named ? { name: 'mine' } : {}), configMap: { k1: 'local' } };
          const fns = [...localFns];
          fns.splice(Math.min(at, fns.length), 0, mine);
          // The generated validators may or may not be named: leave them out here.
          const strip = (kf: Kptfile): Kptfile =>
            kf.pipeline ? { ...kf, pipeline: { ...(kf.pipeline.mutators ? { mutators: kf.pipeline.mutators } : {}) } } : kf;
          const local: Kptfile = { ...strip(o), pipeline: { mutators: fns } };
          const r = mergeKptfile({ origin: text(strip(o)), upstream: text(strip(u)), local: text(local) });
          expect(r.pipelineKey).toBe(named ? 'name' : 'derived');
          const found = (r.kptfile.pipeline?.mutators ?? []).filter(
            (f) => derivedFunctionKey(f) === 'localhost:5000/mine' || f.name === 'mine',
          );
          expect(found).toEqual([mine]);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
