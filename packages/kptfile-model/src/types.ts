/**
 * The `kpt.dev/v1` Kptfile as plain data. Field names are the YAML names. A section that is
 * present in the file but empty (`pipeline: {}`) is an empty object, an absent one is
 * `undefined`: kpt keeps that difference when it writes a merged Kptfile.
 */

export const KPTFILE_API_VERSION = 'kpt.dev/v1';
export const KPTFILE_KIND = 'Kptfile';
export const KPTFILE_NAME = 'Kptfile';

/** `upstream.updateStrategy`: how `pkg update` takes upstream changes. */
export const UPDATE_STRATEGIES = ['resource-merge', 'fast-forward', 'force-delete-replace', 'copy-merge'] as const;
export type UpdateStrategy = (typeof UPDATE_STRATEGIES)[number];

/** `upstream.type` / `upstreamLock.type`: only git origins are modelled. */
export const ORIGIN_TYPES = ['git'] as const;
export type OriginType = (typeof ORIGIN_TYPES)[number];

export type StringMap = Record<string, string>;

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  labels?: StringMap;
  annotations?: StringMap;
}

export interface GitSource {
  repo?: string;
  directory?: string;
  ref?: string;
}

export interface GitLock extends GitSource {
  commit?: string;
}

export interface Upstream {
  type?: OriginType;
  git?: GitSource;
  updateStrategy?: UpdateStrategy;
}

export interface UpstreamLock {
  type?: OriginType;
  git?: GitLock;
}

export interface ReadinessGate {
  conditionType: string;
}

export interface PackageInfo {
  site?: string;
  emails?: string[];
  license?: string;
  licenseFile?: string;
  description?: string;
  keywords?: string[];
  man?: string;
  readinessGates?: ReadinessGate[];
}

/** Selects resources a function applies to (`selectors`) or skips (`exclude`). */
export interface Selector {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labels?: StringMap;
  annotations?: StringMap;
}

/** One entry of `pipeline.mutators` / `pipeline.validators`. */
export interface KptFunction {
  image?: string;
  exec?: string;
  configPath?: string;
  configMap?: StringMap;
  name?: string;
  selectors?: Selector[];
  exclude?: Selector[];
}

export interface Pipeline {
  mutators?: KptFunction[];
  validators?: KptFunction[];
}

export interface Inventory {
  namespace?: string;
  name?: string;
  inventoryID?: string;
  labels?: StringMap;
  annotations?: StringMap;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
}

export interface Status {
  conditions?: Condition[];
  /** What `kpt fn render` wrote about its last run; kept as read. */
  renderStatus?: unknown;
}

export interface Kptfile {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  upstream?: Upstream;
  upstreamLock?: UpstreamLock;
  info?: PackageInfo;
  pipeline?: Pipeline;
  inventory?: Inventory;
  status?: Status;
}

/** The two function lists of a pipeline, in the order kpt runs them. */
export const PIPELINE_LISTS = ['mutators', 'validators'] as const;
export type PipelineList = (typeof PIPELINE_LISTS)[number];
