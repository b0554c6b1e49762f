import { decodeObject } from '../api/decode.js';
import {
  PACKAGE_VARIANT_API_VERSION,
  PACKAGE_VARIANT_SET_API_VERSION,
  REPOSITORY_API_VERSION,
  type Condition,
  type KubeObject,
  type MapExpr,
  type PackageVariant,
  type PackageVariantSet,
  type PackageVariantSpec,
} from '../api/types.js';
import { validatePackageVariantSet, type SetValidationOptions } from '../api/validate.js';
import { findSetUpstream } from '../lifecycle/upstream.js';
import { compileExpr, projectObject, type CelScope, type ObjectProjection } from './cel.js';
import { renderPackageVariantSpec } from './render.js';
import { namespaceOf, unrollTargets } from './targets.js';
import { variantIdentifier, variantName } from './naming.js';

/** The label Porch puts on generated variants (value: the set's uid; in files, its name). */
export const PACKAGE_VARIANT_SET_LABEL = 'config.porch.kpt.dev/packagevariantset';

export type ExpandFailureReason = 'ValidationError' | 'UpstreamNotFound' | 'NoMatchingTargets' | 'UnexpectedError';

export type ExpandResult =
  | {
      readonly ok: true;
      readonly variants: PackageVariant[];
      readonly conditions: Condition[];
      /** Selector targets that selected nothing (not an error for Porch, but worth saying). */
      readonly warnings: string[];
    }
  | { readonly ok: false; readonly reason: ExpandFailureReason; readonly errors: string[]; readonly conditions: Condition[] };

export interface ExpandOptions extends SetValidationOptions {
  /** Repositories, selector targets, and (optionally) the upstream PackageRevision. */
  readonly objects: readonly KubeObject[];
  /**
   * The upstream package's metadata for CEL's `upstream`. Default: a Porch `PackageRevision` among
   * `objects` matching the set's upstream (Porch's rule); else `{name: <package>, namespace: <set's>}`.
   */
  readonly upstream?: KubeObject | undefined;
}

/**
 * Every CEL expression of a template, with its full field path and the scope it is evaluated in,
 * so that syntax errors, unknown variables and non-string types are found before expansion.
 */
export function templateExpressions(pvs: PackageVariantSet): { path: string; source: string; scope: CelScope }[] {
  const out: { path: string; source: string; scope: CelScope }[] = [];
  const mapExprs = (path: string, exprs: readonly MapExpr[] | undefined) =>
    (exprs ?? []).forEach((e, j) => {
      if (e.keyExpr) out.push({ path: `${path}[${j}].keyExpr`, source: e.keyExpr, scope: 'full' });
      if (e.valueExpr) out.push({ path: `${path}[${j}].valueExpr`, source: e.valueExpr, scope: 'full' });
    });
  (pvs.spec?.targets ?? []).forEach((target, i) => {
    const t = target.template;
    if (!t) return;
    const p = `spec.targets[${i}].template`;
    if (t.downstream?.repoExpr) out.push({ path: `${p}.downstream.repoExpr`, source: t.downstream.repoExpr, scope: 'repoExpr' });
    if (t.downstream?.packageExpr) out.push({ path: `${p}.downstream.packageExpr`, source: t.downstream.packageExpr, scope: 'full' });
    mapExprs(`${p}.labelExprs`, t.labelExprs);
    mapExprs(`${p}.annotationExprs`, t.annotationExprs);
    mapExprs(`${p}.packageContext.dataExprs`, t.packageContext?.dataExprs);
    (t.packageContext?.removeKeyExprs ?? []).forEach((source, j) =>
      out.push({ path: `${p}.packageContext.removeKeyExprs[${j}]`, source, scope: 'full' }),
    );
    (t.injectors ?? []).forEach((inj, j) => {
      if (inj.nameExpr) out.push({ path: `${p}.injectors[${j}].nameExpr`, source: inj.nameExpr, scope: 'full' });
    });
    for (const list of ['validators', 'mutators'] as const) {
      (t.pipeline?.[list] ?? []).forEach((f, j) => mapExprs(`${p}.pipeline.${list}[${j}].configMapExprs`, f.configMapExprs));
    }
  });
  return out;
}

function stalled(reason: ExpandFailureReason, errors: string[]): ExpandResult {
  const message = errors.join('; ');
  return {
    ok: false,
    reason,
    errors,
    conditions: [
      { type: 'Stalled', status: 'True', reason, message },
      { type: 'Ready', status: 'False', reason, message },
    ],
  };
}

function upstreamProjection(pvs: PackageVariantSet, options: ExpandOptions): ObjectProjection | null {
  if (options.upstream) return projectObject(options.upstream);
  const ns = namespaceOf(pvs);
  const revisions = options.objects.filter(
    (o) => o.kind === 'PackageRevision' && /^porch\.kpt\.dev\//.test(o.apiVersion ?? '') && namespaceOf(o) === ns,
  );
  const specOf = (o: KubeObject) => (o.spec ?? {}) as Record<string, string | number | undefined>;
  const found = findSetUpstream(
    pvs.spec?.upstream ?? {},
    revisions.map((o) => ({
      repository: specOf(o).repository as string | undefined,
      packageName: specOf(o).packageName as string | undefined,
      workspaceName: specOf(o).workspaceName as string | undefined,
      revision: specOf(o).revision,
      object: o,
    })),
  );
  if (found.ok) return projectObject(found.value.object);
  return { name: pvs.spec?.upstream?.package ?? '', namespace: pvs.metadata?.namespace ?? '', labels: null, annotations: null };
}

/** The PackageVariant object Porch creates for one rendered spec. */
export function generatedPackageVariant(pvs: PackageVariantSet, spec: PackageVariantSpec): PackageVariant {
  const setName = pvs.metadata?.name ?? '';
  const id = variantIdentifier(setName, spec.downstream?.repo ?? '', spec.downstream?.package ?? '');
  const metadata: PackageVariant['metadata'] = { name: variantName(id) };
  if (pvs.metadata?.namespace) metadata.namespace = pvs.metadata.namespace;
  metadata.labels = { [PACKAGE_VARIANT_SET_LABEL]: pvs.metadata?.uid || setName };
  // An owner reference needs the owner's uid; sets read from files have none, and then the label
  // alone records the ownership.
  if (pvs.metadata?.uid) {
    metadata.ownerReferences = [
      { apiVersion: PACKAGE_VARIANT_SET_API_VERSION, kind: 'PackageVariantSet', name: setName, uid: pvs.metadata.uid, controller: true },
    ];
  }
  return { apiVersion: PACKAGE_VARIANT_API_VERSION, kind: 'PackageVariant', metadata, spec };
}

/**
 * A PackageVariantSet's variants, as Porch's controller would generate them: validate, check every
 * CEL expression, unroll the targets, render each one, name the result. Deterministic: the same
 * inputs give the same variants, in the same order (targets in order, selected objects by name).
 */
export function expandPackageVariantSet(pvs: PackageVariantSet, options: ExpandOptions): ExpandResult {
  const validation = validatePackageVariantSet(pvs, options);
  if (validation.length > 0) return stalled('ValidationError', validation);
  const celErrors: string[] = [];
  for (const e of templateExpressions(pvs)) {
    const compiled = compileExpr(e.source, e.scope);
    if (!compiled.ok) celErrors.push(`${e.path}: ${compiled.error}`);
  }
  if (celErrors.length > 0) return stalled('ValidationError', celErrors);

  const objects = options.objects.map((o) => decodeObject(o).value);
  const targets = unrollTargets(pvs, objects);
  if (!targets.ok) return stalled('NoMatchingTargets', [targets.error]);
  const upstream = upstreamProjection(pvs, { ...options, objects });

  const repositories = new Map<string, KubeObject>();
  for (const o of objects) {
    if (o.kind !== 'Repository' || o.apiVersion !== REPOSITORY_API_VERSION) continue;
    const key = `${namespaceOf(o)}/${o.metadata?.name ?? ''}`;
    if (!repositories.has(key)) repositories.set(key, o);
  }
  const findRepository = (name: string, namespace: string) => repositories.get(`${namespace}/${name}`);

  const variants: PackageVariant[] = [];
  const errors: string[] = [];
  const seen = new Map<string, number>();
  const namespace = namespaceOf(pvs);
  const missingReported = new Set<string>();
  for (const target of targets.value) {
    if (target.repositoryIndex !== undefined && !findRepository(target.repoDefault, namespace)) {
      // Porch would create a variant whose downstream can never be written
      const at = `spec.targets[${target.targetIndex}].repositories[${target.repositoryIndex}]`;
      if (!missingReported.has(at)) {
        errors.push(`${at}: Repository "${target.repoDefault}" does not exist in namespace "${namespace}" (none among the objects given)`);
        missingReported.add(at);
      }
      continue;
    }
    const rendered = renderPackageVariantSpec(pvs, target, { objects, upstream, findRepository });
    const where = `spec.targets[${target.targetIndex}] (repository "${target.repoDefault}", package "${target.packageDefault}")`;
    if (!rendered.ok) {
      errors.push(`${where}: ${rendered.error}`);
      continue;
    }
    const pv = generatedPackageVariant(pvs, rendered.value);
    const name = pv.metadata!.name!;
    const previous = seen.get(name);
    if (previous !== undefined) {
      errors.push(`${where}: generates PackageVariant "${name}", which spec.targets[${previous}] already generates`);
      continue;
    }
    seen.set(name, target.targetIndex);
    variants.push(pv);
  }
  if (errors.length > 0) return stalled('UnexpectedError', errors);
  const selecting = new Set(targets.value.map((t) => t.targetIndex));
  const warnings: string[] = [];
  (pvs.spec?.targets ?? []).forEach((t, i) => {
    if (selecting.has(i)) return;
    const field = t.repositorySelector ? 'repositorySelector' : t.objectSelector ? 'objectSelector' : 'repositories';
    const what = t.objectSelector ? `${t.objectSelector.kind ?? ''} object` : 'Repository';
    warnings.push(`spec.targets[${i}].${field} selects no ${what} in namespace "${namespace}": it generates no PackageVariant`);
  });
  return {
    ok: true,
    warnings,
    variants,
    conditions: [
      { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'package variants successfully reconciled' },
    ],
  };
}

export interface VariantSetPlan {
  readonly create: PackageVariant[];
  /** Existing variants whose spec is replaced (their metadata is kept). */
  readonly update: { readonly existing: PackageVariant; readonly spec: PackageVariantSpec }[];
  readonly delete: PackageVariant[];
}

/**
 * Porch's `ensurePackageVariants` as a plan: variants are matched by identifier
 * (`<set>-<repo>-<package>`, computed from each existing variant's spec, not its name).
 */
export function planVariantSet(setName: string, desired: readonly PackageVariant[], existing: readonly PackageVariant[]): VariantSetPlan {
  const idOf = (pv: PackageVariant) => variantIdentifier(setName, pv.spec?.downstream?.repo ?? '', pv.spec?.downstream?.package ?? '');
  const wanted = new Map(desired.map((pv) => [idOf(pv), pv]));
  const plan: VariantSetPlan = { create: [], update: [], delete: [] };
  const have = new Set<string>();
  for (const pv of existing) {
    const id = idOf(pv);
    const want = wanted.get(id);
    if (!want || have.has(id)) plan.delete.push(pv);
    else plan.update.push({ existing: pv, spec: want.spec ?? {} });
    have.add(id);
  }
  for (const [id, pv] of wanted) if (!have.has(id)) plan.create.push(pv);
  return plan;
}
