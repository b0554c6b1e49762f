import type { PackageView } from '@kdelta/kptfile-model';
import { decodeObject } from '../api/decode.js';
import type { Condition, KubeObject, PackageVariant } from '../api/types.js';
import { joinErrors, validatePackageVariant } from '../api/validate.js';
import { ensureConfigInjection, injectionCondition, type InjectionPoint } from './injection.js';
import { ensurePackageContext } from './package-context.js';
import { PackageDocuments, VariantMutationError, type PackageFiles, type VariantMutationErrorCode } from './package-files.js';
import { ensureKRMFunctions } from './pipeline.js';

export interface ApplyOptions {
  /** Objects available for config injection (same namespace as the variant). */
  readonly objects?: readonly KubeObject[];
  /** The downstream package's name, for messages. */
  readonly packageName?: string;
}

export type ApplyResult =
  | {
      readonly ok: true;
      /** The files the mutations changed (now written in the package), with their new text. Empty when nothing changed. */
      readonly changed: Map<string, string>;
      /** The variant's conditions (Porch's Stalled and Ready). */
      readonly conditions: Condition[];
      /** The conditions written on the package's Kptfile, one per injection point. */
      readonly packageConditions: Condition[];
      readonly readinessGates: string[];
      /**
       * The package conditions of readiness gates that are not met (a required injection point
       * without a source). The package is written all the same, as Porch creates it; it is not
       * ready to publish (seed 004). Empty when ready.
       */
      readonly unmetGates: Condition[];
    }
  | {
      readonly ok: false;
      readonly errors: string[];
      readonly file?: string | undefined;
      /** The mutation's error code (`missing-file`...); absent for a validation failure. */
      readonly code?: VariantMutationErrorCode | undefined;
      readonly conditions: Condition[];
    };

/**
 * Apply a PackageVariant's mutations to a package, in Porch's order: package context, pipeline,
 * config injection. A package view is edited in place when every mutation succeeds (Porch's files,
 * a map, are never changed); the changed files are returned too. Validation errors and mutation
 * errors are returned as data with Porch's conditions; nothing is partially applied.
 */
export function applyPackageVariant(pkg: PackageView | PackageFiles, pv: PackageVariant, options: ApplyOptions = {}): ApplyResult {
  const invalid = validatePackageVariant(pv);
  if (invalid.length > 0) {
    return {
      ok: false,
      errors: invalid,
      conditions: [
        { type: 'Stalled', status: 'True', reason: 'ValidationError', message: joinErrors(invalid) },
        { type: 'Ready', status: 'False', reason: 'Error', message: 'invalid packagevariant object' },
      ],
    };
  }
  const valid: Condition = { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' };
  const docs = new PackageDocuments(pkg);
  let points: InjectionPoint[];
  try {
    ensurePackageContext(docs, pv, options.packageName ?? pv.spec?.downstream?.package ?? '');
    ensureKRMFunctions(docs, pv);
    points = ensureConfigInjection(
      docs,
      pv,
      (options.objects ?? []).map((o) => decodeObject(o).value),
    ).points;
  } catch (error) {
    if (!(error instanceof VariantMutationError)) throw error;
    return {
      ok: false,
      errors: [error.message],
      file: error.file,
      code: error.code,
      conditions: [valid, { type: 'Ready', status: 'False', reason: 'Error', message: error.message }],
    };
  }
  const packageConditions = points.map(injectionCondition);
  const readinessGates = points.filter((p) => p.required).map((p) => p.conditionType);
  return {
    ok: true,
    changed: docs.writeChanges(),
    conditions: [valid, { type: 'Ready', status: 'True', reason: 'NoErrors', message: 'successfully ensured downstream package variant' }],
    packageConditions,
    readinessGates,
    unmetGates: packageConditions.filter((c) => readinessGates.includes(c.type) && c.status !== 'True'),
  };
}
