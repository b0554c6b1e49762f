/**
 * The Porch API types kdelta reads, with Porch's JSON field names, so Porch users bring their YAML
 * unchanged: `config.porch.kpt.dev/v1alpha1` PackageVariant and Repository,
 * `config.porch.kpt.dev/v1alpha2` PackageVariantSet.
 */

export const PORCH_GROUP = 'config.porch.kpt.dev';
export const PACKAGE_VARIANT_API_VERSION = 'config.porch.kpt.dev/v1alpha1';
export const PACKAGE_VARIANT_SET_API_VERSION = 'config.porch.kpt.dev/v1alpha2';
export const REPOSITORY_API_VERSION = 'config.porch.kpt.dev/v1alpha1';

export type StringMap = Record<string, string>;

export interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: StringMap;
  annotations?: StringMap;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** Any KRM object (Repository, injection source, selector target, PackageRevision...). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface Upstream {
  repo?: string;
  package?: string;
  /** Porch uses an integer; the design doc a tag such as `v1`. Both are accepted. */
  revision?: number | string;
  workspaceName?: string;
}

export interface Downstream {
  repo?: string;
  package?: string;
}

export type AdoptionPolicy = 'adoptNone' | 'adoptExisting';
export type DeletionPolicy = 'orphan' | 'delete';

export interface PackageContext {
  data?: StringMap;
  removeKeys?: string[];
}

/** A Kptfile pipeline function, as written in the Kptfile (`name`, `image`, `configMap`, ...). */
export interface KptFunction {
  name?: string;
  image?: string;
  exec?: string;
  configPath?: string;
  configMap?: StringMap;
  [field: string]: unknown;
}

export interface Pipeline {
  mutators?: KptFunction[];
  validators?: KptFunction[];
}

export interface InjectionSelector {
  group?: string;
  version?: string;
  kind?: string;
  name: string;
}

export interface PackageVariantSpec {
  upstream?: Upstream;
  downstream?: Downstream;
  adoptionPolicy?: string;
  deletionPolicy?: string;
  labels?: StringMap;
  annotations?: StringMap;
  packageContext?: PackageContext;
  pipeline?: Pipeline;
  injectors?: InjectionSelector[];
}

export interface PackageVariant extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: PackageVariantSpec;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: StringMap;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface ObjectSelector extends LabelSelector {
  apiVersion?: string;
  kind?: string;
  name?: string;
}

export interface RepositoryTarget {
  name?: string;
  packageNames?: string[];
}

export interface MapExpr {
  key?: string;
  value?: string;
  keyExpr?: string;
  valueExpr?: string;
}

export interface DownstreamTemplate {
  repo?: string;
  package?: string;
  repoExpr?: string;
  packageExpr?: string;
}

export interface PackageContextTemplate {
  data?: StringMap;
  removeKeys?: string[];
  dataExprs?: MapExpr[];
  removeKeyExprs?: string[];
}

export interface InjectionSelectorTemplate {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  nameExpr?: string;
}

export interface FunctionTemplate extends KptFunction {
  configMapExprs?: MapExpr[];
}

export interface PipelineTemplate {
  validators?: FunctionTemplate[];
  mutators?: FunctionTemplate[];
}

export interface PackageVariantTemplate {
  downstream?: DownstreamTemplate;
  adoptionPolicy?: string;
  deletionPolicy?: string;
  labels?: StringMap;
  labelExprs?: MapExpr[];
  annotations?: StringMap;
  annotationExprs?: MapExpr[];
  packageContext?: PackageContextTemplate;
  pipeline?: PipelineTemplate;
  injectors?: InjectionSelectorTemplate[];
}

export interface Target {
  repositories?: RepositoryTarget[];
  repositorySelector?: LabelSelector;
  objectSelector?: ObjectSelector;
  /** With a selector: the packages to instantiate in each selected repository (default: the upstream's name). */
  packageNames?: string[];
  template?: PackageVariantTemplate;
}

export interface PackageVariantSetSpec {
  upstream?: Upstream;
  targets?: Target[];
}

export interface PackageVariantSet extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: PackageVariantSetSpec;
}

/** A condition as Porch and the Kptfile write them. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}
