import { RESERVED_PACKAGE_CONTEXT_KEYS, validateFunction } from '@kdelta/kptfile-model';
import type { MapExpr, PackageVariant, PackageVariantSet, PackageVariantTemplate, Pipeline, Target, Upstream } from './types.js';

/**
 * Validation with Porch's messages, word for word (conformance: pv-validate, pvs-validate).
 * Each function returns the list of problems; Porch joins them with "; " into the Stalled
 * condition's message (see `joinErrors`).
 */

export { RESERVED_PACKAGE_CONTEXT_KEYS };
const ADOPTION_POLICIES = ['adoptNone', 'adoptExisting'];
const DELETION_POLICIES = ['orphan', 'delete'];

export function joinErrors(errors: readonly string[]): string {
  return errors.join('; ');
}

/** JSON as Go's encoding/json writes it: map keys sorted, `<`, `>` and `&` escaped. */
export function goJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sortKeys(value)).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/** Porch's `isValidUpstream` for a PackageVariant: repo and package are required, revision is not. */
export function validatePackageVariantUpstream(upstream: Upstream | undefined): string[] {
  if (!upstream) return ['missing required field spec.upstream'];
  const errors: string[] = [];
  if (!upstream.repo) errors.push('missing required field spec.upstream.repo');
  if (!upstream.package) errors.push('missing required field spec.upstream.package');
  return errors;
}

/**
 * Porch's `validatePackageVariant`. kdelta applies the same defaults (adoptNone, delete) through
 * `withPackageVariantDefaults`, but never rewrites `upstream.revision` (Porch sets it to -1 because
 * its controller resolves the upstream by workspace; kdelta resolves the revision to a git tag).
 */
export function validatePackageVariant(pv: PackageVariant): string[] {
  const spec = pv.spec ?? {};
  const errors = validatePackageVariantUpstream(spec.upstream);
  if (!spec.downstream) {
    errors.push('missing required field spec.downstream');
  } else {
    if (!spec.downstream.repo) errors.push('missing required field spec.downstream.repo');
    if (!spec.downstream.package) errors.push('missing required field spec.downstream.package');
  }
  const adoption = spec.adoptionPolicy || 'adoptNone';
  const deletion = spec.deletionPolicy || 'delete';
  if (!ADOPTION_POLICIES.includes(adoption)) {
    errors.push('spec.adoptionPolicy field can only be "adoptNone" or "adoptExisting"');
  }
  if (!DELETION_POLICIES.includes(deletion)) {
    errors.push('spec.deletionPolicy can only be "orphan" or "delete"');
  }
  const ctx = spec.packageContext;
  if (ctx) {
    for (const key of RESERVED_PACKAGE_CONTEXT_KEYS) {
      if (ctx.data && Object.hasOwn(ctx.data, key)) {
        errors.push(`spec.packageContext.data: Invalid value: ${goJson(ctx.data)}: must not contain the key "${key}"`);
      }
      for (const removed of ctx.removeKeys ?? []) {
        if (removed === key) {
          errors.push(`spec.packageContext.removeKeys: Invalid value: ${goJson(ctx.removeKeys)}: must not contain the key "${key}"`);
        }
      }
    }
  }
  (spec.injectors ?? []).forEach((injector, i) => {
    if (!injector.name) errors.push(`spec.injectors[${i}].name must not be empty`);
  });
  errors.push(...validatePipelineFunctions('spec.pipeline', spec.pipeline));
  return errors;
}

/** The spec with Porch's defaults filled in: adoptionPolicy `adoptNone`, deletionPolicy `delete`. */
export function withPackageVariantDefaults(pv: PackageVariant): PackageVariant {
  const spec = pv.spec ?? {};
  return {
    ...pv,
    spec: { ...spec, adoptionPolicy: spec.adoptionPolicy || 'adoptNone', deletionPolicy: spec.deletionPolicy || 'delete' },
  };
}

function isUnsetRevision(revision: Upstream['revision']): boolean {
  return revision === undefined || revision === 0 || revision === '' || revision === '0';
}

/** Where kdelta's reading of a PackageVariantSet departs from Porch's, by the caller's choice. */
export interface SetValidationOptions {
  /**
   * A set with neither `upstream.revision` nor `upstream.workspaceName` is valid: its variants
   * follow the upstream's latest release, as a PackageVariant without a revision does in
   * `kdelta run`. Porch (and so the default) requires one of them.
   */
  readonly followsReleases?: boolean | undefined;
}

/** Porch's `validatePackageVariantSet` (v1alpha2). */
export function validatePackageVariantSet(pvs: PackageVariantSet, options: SetValidationOptions = {}): string[] {
  const spec = pvs.spec ?? {};
  const errors: string[] = [];
  const up = spec.upstream;
  if (!up) {
    errors.push('spec.upstream is a required field');
  } else {
    if (!up.package) errors.push('spec.upstream.package is a required field');
    if (!up.repo) errors.push('spec.upstream.repo is a required field');
    if (isUnsetRevision(up.revision) && !up.workspaceName && options.followsReleases !== true) {
      errors.push('either spec.upstream.revision or spec.upstream.workspaceName must be specified');
    }
  }
  if (!spec.targets || spec.targets.length === 0) {
    errors.push('must specify at least one item in spec.targets');
  }
  (spec.targets ?? []).forEach((target, i) => errors.push(...validateTarget(i, target)));
  return errors;
}

function validateTarget(i: number, target: Target): string[] {
  const errors: string[] = [];
  const prefix = `spec.targets[${i}]`;
  let modes = 0;
  if (target.repositories !== undefined) {
    modes++;
    if (target.repositories.length === 0) {
      errors.push(`${prefix}.repositories must not be an empty list if specified`);
    }
    target.repositories.forEach((repo, j) => {
      if (!repo.name) errors.push(`${prefix}.repositories[${j}].name cannot be empty`);
      (repo.packageNames ?? []).forEach((name, k) => {
        if (!name) errors.push(`${prefix}.repositories[${j}].packageNames[${k}] cannot be empty`);
      });
    });
  }
  if (target.repositorySelector !== undefined) modes++;
  if (target.objectSelector !== undefined) {
    modes++;
    if (!target.objectSelector.apiVersion) errors.push(`${prefix}.objectselector.apiVersion cannot be empty`);
    if (!target.objectSelector.kind) errors.push(`${prefix}.objectselector.kind cannot be empty`);
  }
  if (modes !== 1) {
    errors.push(`${prefix} must specify one of \`repositories\`, \`repositorySelector\`, or \`objectSelector\``);
  }
  if (target.packageNames !== undefined) {
    if (target.repositories !== undefined) {
      errors.push(`${prefix}.packageNames goes with a selector; with \`repositories\`, list them under each repository`);
    }
    target.packageNames.forEach((name, k) => {
      if (!name) errors.push(`${prefix}.packageNames[${k}] cannot be empty`);
    });
  }
  if (target.template) errors.push(...validateTemplate(`${prefix}.template`, target.template));
  return errors;
}

function validateMapExprs(field: string, exprs: readonly MapExpr[] | undefined): string[] {
  const errors: string[] = [];
  (exprs ?? []).forEach((e, j) => {
    if (e.key !== undefined && e.keyExpr !== undefined) {
      errors.push(`${field}[${j}] may specify only one of \`key\` and \`keyExpr\``);
    }
    if (e.value !== undefined && e.valueExpr !== undefined) {
      errors.push(`${field}[${j}] may specify only one of \`value\` and \`valueExpr\``);
    }
  });
  return errors;
}

function validateTemplate(prefix: string, t: PackageVariantTemplate): string[] {
  const errors: string[] = [];
  if (t.adoptionPolicy !== undefined && !ADOPTION_POLICIES.includes(t.adoptionPolicy)) {
    errors.push(`${prefix}.adoptionPolicy can only be "adoptNone" or "adoptExisting"`);
  }
  if (t.deletionPolicy !== undefined && !DELETION_POLICIES.includes(t.deletionPolicy)) {
    errors.push(`${prefix}.deletionPolicy can only be "orphan" or "delete"`);
  }
  const d = t.downstream;
  if (d?.repo !== undefined && d.repoExpr !== undefined) {
    errors.push(`${prefix} may specify only one of \`downstream.repo\` and \`downstream.repoExpr\``);
  }
  if (d?.package !== undefined && d.packageExpr !== undefined) {
    errors.push(`${prefix} may specify only one of \`downstream.package\` and \`downstream.packageExpr\``);
  }
  errors.push(...validateMapExprs(`${prefix}.labelExprs`, t.labelExprs));
  errors.push(...validateMapExprs(`${prefix}.annotationExprs`, t.annotationExprs));
  errors.push(...validateMapExprs(`${prefix}.packageContext.dataExprs`, t.packageContext?.dataExprs));
  (t.injectors ?? []).forEach((inj, j) => {
    if (inj.name !== undefined && inj.nameExpr !== undefined) {
      errors.push(`${prefix}.injectors[${j}] may specify only one of \`name\` and \`nameExpr\``);
    }
    if (inj.name === undefined && inj.nameExpr === undefined) {
      errors.push(`${prefix}.injectors[${j}] must specify either \`name\` or \`nameExpr\``);
    }
  });
  for (const list of ['validators', 'mutators'] as const) {
    (t.pipeline?.[list] ?? []).forEach((f, j) => {
      if (!f.image) errors.push(`${prefix}.pipeline.${list}[${j}].image must not be empty`);
      if (f.name?.includes('.')) errors.push(`${prefix}.pipeline.${list}[${j}].name must not contain '.'`);
    });
  }
  errors.push(...validatePipelineFunctions(`${prefix}.pipeline`, t.pipeline, true));
  return errors;
}

/**
 * The Kptfile's own rules for the functions a variant puts in the pipeline (image reference,
 * exec, config path): checked before anything is written, since a malformed function in the
 * Kptfile makes every later command refuse the package. `imageChecked` skips the missing-image
 * case a template already reports in Porch's words.
 */
function validatePipelineFunctions(prefix: string, pipeline: Pipeline | undefined, imageChecked = false): string[] {
  const errors: string[] = [];
  for (const list of ['validators', 'mutators'] as const) {
    (pipeline?.[list] ?? []).forEach((f, j) => {
      for (const issue of validateFunction(f, `${prefix}.${list}[${j}]`, '')) {
        if (imageChecked && issue.code === 'missing-function') continue;
        errors.push(`${issue.field}: ${issue.message}`);
      }
    });
  }
  return errors;
}
