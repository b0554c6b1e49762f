// @kdelta/variant-engine: Porch's PackageVariant and PackageVariantSet controllers as a library on files.

// API types, decoding with field paths, validation with Porch's messages.
export * from './api/types.js';
export { decodePackageVariant, decodePackageVariantSet, decodeObject, type Decoded } from './api/decode.js';
export { checkPackageVariant, checkPackageVariantSet, type Checked } from './api/check.js';
export {
  validatePackageVariant,
  validatePackageVariantUpstream,
  validatePackageVariantSet,
  withPackageVariantDefaults,
  type SetValidationOptions,
  joinErrors,
  RESERVED_PACKAGE_CONTEXT_KEYS,
} from './api/validate.js';

// PackageVariantSet: targets, CEL templates, naming, expansion.
export {
  compileExpr,
  evalExpr,
  projectObject,
  type CelResult,
  type CelScope,
  type CelVariables,
  type ObjectProjection,
} from './template/cel.js';
export { unrollTargets, matchesLabelSelector, selectObjects, type DownstreamTarget } from './template/targets.js';
export { renderPackageVariantSpec, overlayMapExprs, type RenderContext } from './template/render.js';
export { variantIdentifier, variantName, MAX_VARIANT_NAME_LENGTH } from './template/naming.js';
export {
  expandPackageVariantSet,
  planVariantSet,
  templateExpressions,
  generatedPackageVariant,
  PACKAGE_VARIANT_SET_LABEL,
  type ExpandOptions,
  type ExpandResult,
  type ExpandFailureReason,
  type VariantSetPlan,
} from './template/expand.js';

// The variant mutations, in Porch's order, over a package's files.
export { applyPackageVariant, type ApplyOptions, type ApplyResult } from './mutations/apply.js';
export { PackageDocuments, VariantMutationError, type PackageFiles, type VariantMutationErrorCode } from './mutations/package-files.js';
export { ensurePackageContext, PACKAGE_CONTEXT_FILE, PACKAGE_CONTEXT_NAME } from './mutations/package-context.js';
export { ensureKRMFunctions, ensureKRMFunctionsInKptfile, generatePVFuncName, isPackageVariantFunc } from './mutations/pipeline.js';
export {
  ensureConfigInjection,
  findInjectionPoints,
  validateInjectionPoints,
  setInjectionPointConditionsAndGates,
  injectionCondition,
  injectionInputs,
  CONFIG_INJECTION_ANNOTATION,
  INJECTED_RESOURCE_ANNOTATION,
  INJECTED_RESOURCE_NAME_ANNOTATION,
  type InjectionPoint,
} from './mutations/injection.js';

// Porch's lifecycle decisions, mapped onto git refs, branches and pull requests.
export {
  findVariantUpstream,
  findPublishedUpstream,
  findSetUpstream,
  parseLockRevision,
  upstreamRefCandidates,
  type UpstreamCandidate,
  type Found,
} from './lifecycle/upstream.js';
export {
  selectDownstreams,
  deleteOrOrphan,
  ownerKey,
  OWNER_ANNOTATION,
  type DownstreamCopy,
  type DownstreamSelection,
  type LifecycleAction,
  type Lifecycle,
} from './lifecycle/ownership.js';

export { planUpgrade, planEdit, variantBranch, type DraftPlan } from './lifecycle/drafts.js';
