/**
 * set-annotations (catalog v0.1): adds or replaces annotations on every resource
 * (`metadata.annotations`) and on the pod templates of workloads (kustomize's commonAnnotations
 * field specs). Config: a ConfigMap's `data`, or `SetAnnotations` with `annotations`.
 */
import { BuiltinConfigError, isKind, mapsAt, specApplies, stringData, type Builtin, type FieldSpec } from './fields.js';

const template = (group: string, kind: string): FieldSpec => ({ group, kind, path: 'spec/template/metadata/annotations', create: true });

export const ANNOTATION_FIELD_SPECS: readonly FieldSpec[] = [
  { path: 'metadata/annotations', create: true },
  { group: '', version: 'v1', kind: 'ReplicationController', path: 'spec/template/metadata/annotations', create: true },
  template('apps', 'Deployment'),
  template('apps', 'ReplicaSet'),
  template('apps', 'DaemonSet'),
  template('apps', 'StatefulSet'),
  template('batch', 'Job'),
  { group: 'batch', kind: 'CronJob', path: 'spec/jobTemplate/metadata/annotations', create: true },
  { group: 'batch', kind: 'CronJob', path: 'spec/jobTemplate/spec/template/metadata/annotations', create: true },
];

export const setAnnotations: Builtin = ({ items, config }) => {
  let annotations: Record<string, string>;
  if (isKind(config, 'v1', 'ConfigMap')) annotations = stringData(config);
  else if (isKind(config, undefined, 'SetAnnotations')) annotations = stringData(config, 'annotations');
  else
    throw new BuiltinConfigError(
      `unknown functionConfig Kind=${String(config?.['kind'] ?? '')} ApiVersion=${String(config?.['apiVersion'] ?? '')}, expect \`SetAnnotations\` or \`ConfigMap\``,
    );
  if (Object.keys(annotations).length === 0) throw new BuiltinConfigError('input annotation list cannot be empty');
  const keys = Object.keys(annotations).sort();
  for (const item of items) {
    for (const spec of ANNOTATION_FIELD_SPECS) {
      if (!specApplies(item.doc, spec)) continue;
      for (const map of mapsAt(item.doc, spec.path, true)) for (const k of keys) map.set(k, annotations[k]);
    }
  }
  return { results: [] };
};
