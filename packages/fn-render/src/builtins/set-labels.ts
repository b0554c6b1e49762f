/**
 * set-labels (catalog v0.2): adds or replaces labels on every resource (`metadata.labels`) and in
 * the selectors and templates that must carry them (kustomize's commonLabels field specs: a
 * Service's selector, a Deployment's `spec.selector.matchLabels` and pod template, ...). Config:
 * a ConfigMap's `data`, or `SetLabels` with `labels`.
 */
import { BuiltinConfigError, isKind, mapsAt, resultFor, specApplies, stringData, type Builtin, type FieldSpec } from './fields.js';

const workloads = (kind: string, group: string, selectorCreate = true): FieldSpec[] => [
  { group, kind, path: 'spec/selector/matchLabels', create: selectorCreate },
  { group, kind, path: 'spec/template/metadata/labels', create: true },
];
const affinity = (kind: string, group: string): FieldSpec[] =>
  [
    'spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels',
    'spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels',
    'spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels',
    'spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels',
    'spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels',
  ].map((path) => ({ group, kind, path, create: false }));

/** kustomize's commonLabels field specs (metadata.labels everywhere comes first). */
export const LABEL_FIELD_SPECS: readonly FieldSpec[] = [
  { path: 'metadata/labels', create: true },
  { group: '', version: 'v1', kind: 'Service', path: 'spec/selector', create: true },
  { group: '', version: 'v1', kind: 'ReplicationController', path: 'spec/selector', create: true },
  { group: '', version: 'v1', kind: 'ReplicationController', path: 'spec/template/metadata/labels', create: true },
  ...workloads('Deployment', 'apps'),
  ...affinity('Deployment', 'apps'),
  ...workloads('ReplicaSet', 'apps'),
  ...workloads('DaemonSet', 'apps'),
  ...workloads('StatefulSet', 'apps'),
  ...affinity('StatefulSet', 'apps'),
  { group: 'apps', kind: 'StatefulSet', path: 'spec/volumeClaimTemplates[]/metadata/labels', create: true },
  ...workloads('Job', 'batch', false),
  { group: 'batch', kind: 'CronJob', path: 'spec/jobTemplate/spec/selector/matchLabels', create: false },
  { group: 'batch', kind: 'CronJob', path: 'spec/jobTemplate/metadata/labels', create: true },
  { group: 'batch', kind: 'CronJob', path: 'spec/jobTemplate/spec/template/metadata/labels', create: true },
  { group: 'policy', kind: 'PodDisruptionBudget', path: 'spec/selector/matchLabels', create: false },
  { group: 'networking.k8s.io', kind: 'NetworkPolicy', path: 'spec/podSelector/matchLabels', create: false },
  { group: 'networking.k8s.io', kind: 'NetworkPolicy', path: 'spec/ingress/from/podSelector/matchLabels', create: false },
  { group: 'networking.k8s.io', kind: 'NetworkPolicy', path: 'spec/egress/to/podSelector/matchLabels', create: false },
];

export const setLabels: Builtin = ({ items, config }) => {
  let labels: Record<string, string>;
  if (isKind(config, 'v1', 'ConfigMap')) labels = stringData(config);
  else if (isKind(config, undefined, 'SetLabels')) {
    if (config?.['additionalLabelFields'] !== undefined) throw new BuiltinConfigError('`additionalLabelFields` has been deprecated');
    labels = stringData(config, 'labels');
    if (Object.keys(labels).length === 0)
      throw new BuiltinConfigError('failed to configure function: input label list cannot be empty, required valid `labels` field');
  } else if (config === undefined) {
    throw new BuiltinConfigError('failed to configure function: `functionConfig` must be either a `ConfigMap` or `SetLabels`');
  } else {
    throw new BuiltinConfigError(
      `unknown functionConfig Kind=${String(config['kind'] ?? '')} ApiVersion=${String(config['apiVersion'] ?? '')}, expect \`SetLabels\` or \`ConfigMap\``,
    );
  }
  const keys = Object.keys(labels).sort();
  const message = `set labels: ${JSON.stringify(Object.fromEntries(keys.map((k) => [k, labels[k]])))}`;
  const results = [];
  for (const item of items) {
    for (const spec of LABEL_FIELD_SPECS) {
      if (!specApplies(item.doc, spec)) continue;
      for (const map of mapsAt(item.doc, spec.path, spec.create ?? false)) {
        for (const k of keys) if (spec.create || map.has(k)) map.set(k, labels[k]);
      }
    }
    results.push(resultFor(item, message, 'info', 'metadata/labels'));
  }
  return { results };
};
