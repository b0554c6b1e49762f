import {
  REPOSITORY_API_VERSION,
  type FunctionTemplate,
  type InjectionSelector,
  type KptFunction,
  type KubeObject,
  type MapExpr,
  type PackageVariantSet,
  type PackageVariantSpec,
  type Pipeline,
  type StringMap,
} from '../api/types.js';
import { evalExpr, projectObject, type CelResult, type CelVariables, type ObjectProjection } from './cel.js';
import { namespaceOf, selectObjects, type DownstreamTarget } from './targets.js';

export interface RenderContext {
  /** Objects the set can see: Repositories (looked up by the final downstream repo) and others. */
  readonly objects: readonly KubeObject[];
  /** The upstream package's metadata as CEL's `upstream` sees it. */
  readonly upstream: ObjectProjection | null;
  /** Optional faster lookup of a Repository by namespace and name (expansion builds an index). */
  readonly findRepository?: ((name: string, namespace: string) => KubeObject | undefined) | undefined;
}

/**
 * Porch's `copyAndOverlayMapExpr`: the static map, then each entry in order (key or keyExpr,
 * value or valueExpr, a missing side being ""). An empty result is `undefined`, never `{}`.
 */
export function overlayMapExprs(
  field: string,
  base: StringMap | undefined,
  exprs: readonly MapExpr[] | undefined,
  vars: CelVariables,
): CelResult<StringMap | undefined> {
  const out: StringMap = { ...(base ?? {}) };
  for (const [i, e] of (exprs ?? []).entries()) {
    let key = e.key ?? '';
    if (e.keyExpr) {
      const r = evalExpr(e.keyExpr, vars);
      if (!r.ok) return { ok: false, error: `${field}[${i}].keyExpr: ${r.error}` };
      key = r.value;
    }
    let value = e.value ?? '';
    if (e.valueExpr) {
      const r = evalExpr(e.valueExpr, vars);
      if (!r.ok) return { ok: false, error: `${field}[${i}].valueExpr: ${r.error}` };
      value = r.value;
    }
    out[key] = value;
  }
  return { ok: true, value: Object.keys(out).length > 0 ? out : undefined };
}

function findRepository(objects: readonly KubeObject[], name: string, namespace: string): KubeObject | undefined {
  const found = selectObjects(objects, { apiVersion: REPOSITORY_API_VERSION, kind: 'Repository', namespace, selector: {}, name });
  return found.ok ? found.value[0] : undefined;
}

/**
 * Porch's `renderPackageVariantSpec`: the spec of the PackageVariant one unrolled target generates.
 * Errors name the template field: `template.labelExprs[1].valueExpr: <CEL error>`.
 */
export function renderPackageVariantSpec(
  pvs: PackageVariantSet,
  target: DownstreamTarget,
  ctx: RenderContext,
): CelResult<PackageVariantSpec> {
  const spec: PackageVariantSpec = {
    upstream: pvs.spec?.upstream,
    downstream: { repo: target.repoDefault, package: target.packageDefault },
  };
  const t = target.template;
  if (!t) return { ok: true, value: spec };

  const vars: { -readonly [K in keyof CelVariables]: CelVariables[K] } = {
    repoDefault: target.repoDefault,
    packageDefault: target.packageDefault,
    upstream: ctx.upstream,
    target: target.object ? projectObject(target.object) : { repo: target.repoDefault, package: target.packageDefault },
  };

  let repo = target.repoDefault;
  if (t.downstream?.repo) repo = t.downstream.repo;
  if (t.downstream?.repoExpr) {
    const r = evalExpr(t.downstream.repoExpr, vars, 'repoExpr');
    if (!r.ok) return { ok: false, error: `template.downstream.repoExpr: ${r.error}` };
    repo = r.value;
  }
  const repository = (ctx.findRepository ?? ((n: string, ns: string) => findRepository(ctx.objects, n, ns)))(repo, namespaceOf(pvs));
  if (!repository) return { ok: false, error: `repository "${repo}" could not be loaded` };
  vars.repository = projectObject(repository);

  let pkg = target.packageDefault;
  if (t.downstream?.package) pkg = t.downstream.package;
  if (t.downstream?.packageExpr) {
    const r = evalExpr(t.downstream.packageExpr, vars);
    if (!r.ok) return { ok: false, error: `template.downstream.packageExpr: ${r.error}` };
    pkg = r.value;
  }
  spec.downstream = { repo, package: pkg };

  if (t.adoptionPolicy !== undefined) spec.adoptionPolicy = t.adoptionPolicy;
  if (t.deletionPolicy !== undefined) spec.deletionPolicy = t.deletionPolicy;

  const labels = overlayMapExprs('template.labelExprs', t.labels, t.labelExprs, vars);
  if (!labels.ok) return labels;
  if (labels.value) spec.labels = labels.value;
  const annotations = overlayMapExprs('template.annotationExprs', t.annotations, t.annotationExprs, vars);
  if (!annotations.ok) return annotations;
  if (annotations.value) spec.annotations = annotations.value;

  if (t.packageContext) {
    const pc = t.packageContext;
    const data = overlayMapExprs('template.packageContext.dataExprs', pc.data, pc.dataExprs, vars);
    if (!data.ok) return data;
    const removeKeys = new Set(pc.removeKeys ?? []);
    for (const [i, expr] of (pc.removeKeyExprs ?? []).entries()) {
      const r = evalExpr(expr, vars);
      if (!r.ok) return { ok: false, error: `template.packageContext.removeKeyExprs[${i}]: ${r.error}` };
      removeKeys.add(r.value);
    }
    spec.packageContext = {};
    if (data.value) spec.packageContext.data = data.value;
    if (removeKeys.size > 0) spec.packageContext.removeKeys = [...removeKeys].sort(byteOrder);
  }

  if (t.injectors) {
    const injectors: InjectionSelector[] = [];
    for (const [i, inj] of t.injectors.entries()) {
      const out: InjectionSelector = { name: inj.name ?? '' };
      if (inj.group !== undefined) out.group = inj.group;
      if (inj.version !== undefined) out.version = inj.version;
      if (inj.kind !== undefined) out.kind = inj.kind;
      if (inj.nameExpr) {
        const r = evalExpr(inj.nameExpr, vars);
        if (!r.ok) return { ok: false, error: `template.injectors[${i}].nameExpr: ${r.error}` };
        out.name = r.value;
      }
      // Key order as Porch prints it: group, version, kind, name.
      injectors.push(
        Object.fromEntries(
          (['group', 'version', 'kind', 'name'] as const).filter((k) => out[k] !== undefined).map((k) => [k, out[k]]),
        ) as unknown as InjectionSelector,
      );
    }
    spec.injectors = injectors;
  }

  if (t.pipeline) {
    const pipeline: Pipeline = {};
    for (const list of ['validators', 'mutators'] as const) {
      const fns = t.pipeline[list];
      if (!fns || fns.length === 0) continue;
      const out: KptFunction[] = [];
      for (const [i, f] of fns.entries()) {
        const r = renderFunction(`template.pipeline.${list}[${i}].configMapExprs`, f, vars);
        if (!r.ok) return r;
        out.push(r.value);
      }
      pipeline[list] = out;
    }
    if (pipeline.validators || pipeline.mutators) spec.pipeline = pipeline;
  }
  return { ok: true, value: spec };
}

function renderFunction(field: string, f: FunctionTemplate, vars: CelVariables): CelResult<KptFunction> {
  const { configMapExprs, ...fn } = f;
  const configMap = overlayMapExprs(field, f.configMap, configMapExprs, vars);
  if (!configMap.ok) return configMap;
  const out: KptFunction = { ...fn };
  if (configMap.value) out.configMap = configMap.value;
  else delete out.configMap;
  return { ok: true, value: out };
}

export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
