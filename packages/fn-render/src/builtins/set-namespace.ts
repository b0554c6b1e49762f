/**
 * set-namespace (catalog v0.4): replaces one namespace by another wherever it is referenced —
 * `metadata.namespace` of namespaced resources (those that have one), the name of the `Namespace`
 * object, a CRD's conversion webhook service, an APIService's service, the subjects named
 * `default` of RoleBindings and ClusterRoleBindings, and `config.kubernetes.io/depends-on`
 * annotations pointing at resources of the package. Resources marked local-config are skipped.
 * The namespace replaced is the package's one Namespace object, or `namespaceMatcher`, or the
 * one namespace all resources share; anything else is an error.
 */
import { isMap, isScalar, isSeq, type Document, type Scalar } from 'yaml';
import { groupOf, identity, isLocalConfig, stringMap, type Item } from '../items.js';
import { BuiltinConfigError, isKind, stringData, type Builtin } from './fields.js';

const DEPENDS_ON = 'config.kubernetes.io/depends-on';
const DEPENDS_ON_NAMESPACED = /^([^/]*)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/;

interface NamespaceRef {
  readonly scalar: Scalar;
  readonly isNamespaceObject: boolean;
}

function namespaceRefs(doc: Document): NamespaceRef[] {
  if (isLocalConfig(doc)) return [];
  const id = identity(doc);
  const scalarAt = (path: string[]): Scalar | undefined => {
    const n = doc.getIn(path, true);
    return isScalar(n) && typeof n.value === 'string' ? n : undefined;
  };
  const out: NamespaceRef[] = [];
  const add = (s: Scalar | undefined, isNamespaceObject = false) => s && out.push({ scalar: s, isNamespaceObject });
  if (id.apiVersion === 'v1' && id.kind === 'Namespace') add(scalarAt(['metadata', 'name']), true);
  else if (id.apiVersion === 'apiextensions.k8s.io/v1' && id.kind === 'CustomResourceDefinition')
    add(scalarAt(['spec', 'conversion', 'webhook', 'clientConfig', 'service', 'namespace']));
  else if (id.apiVersion === 'apiregistration.k8s.io/v1' && id.kind === 'APIService') add(scalarAt(['spec', 'service', 'namespace']));
  else {
    if (id.kind !== 'ClusterRoleBinding') add(scalarAt(['metadata', 'namespace']));
    if (id.kind === 'RoleBinding' || id.kind === 'ClusterRoleBinding') {
      const subjects = doc.get('subjects', true);
      if (isSeq(subjects)) {
        for (const s of subjects.items) {
          if (!isMap(s) || s.get('name') !== 'default') continue;
          const ns = s.get('namespace', true);
          if (isScalar(ns) && typeof ns.value === 'string') add(ns);
        }
      }
    }
  }
  return out.filter((r) => r.scalar.value !== '');
}

export const setNamespace: Builtin = ({ items, config }) => {
  let newNs: string;
  let matcher: string;
  if (isKind(config, 'v1', 'ConfigMap')) {
    const data = stringData(config);
    newNs = data['namespace'] ?? '';
    if (newNs === '') {
      const name = (config?.['metadata'] as { name?: unknown } | undefined)?.name;
      if (name !== 'kptfile.kpt.dev') throw new BuiltinConfigError('`data.namespace` should not be empty');
      newNs = data['name'] ?? '';
      if (newNs === '') throw new BuiltinConfigError('`data.name` should not be empty');
    }
    matcher = data['namespaceMatcher'] ?? '';
  } else if (isKind(config, undefined, 'SetNamespace')) {
    newNs = typeof config?.['namespace'] === 'string' ? config['namespace'] : '';
    if (newNs === '') throw new BuiltinConfigError('`namespace` should not be empty');
    matcher = stringData(config)['namespaceMatcher'] ?? '';
  } else {
    throw new BuiltinConfigError(
      `unknown functionConfig Kind=${String(config?.['kind'] ?? '')} ApiVersion=${String(config?.['apiVersion'] ?? '')}, expect \`SetNamespace\` or \`ConfigMap\``,
    );
  }

  const refs = items.map((item) => ({ item, refs: namespaceRefs(item.doc) }));
  const namespaceObjects = new Map<string, number>();
  const seen = new Set<string>();
  for (const { refs: rs } of refs) {
    for (const r of rs) {
      const v = r.scalar.value as string;
      seen.add(v);
      if (r.isNamespaceObject) namespaceObjects.set(v, (namespaceObjects.get(v) ?? 0) + 1);
    }
  }
  let oldNs: string | undefined;
  if (matcher !== '') {
    if (namespaceObjects.size > 0) {
      throw new BuiltinConfigError(
        'found Namespace objects from the input resources, you cannot use `namespaceMatcher` in FunctionConfig together with Namespace objects',
      );
    }
    oldNs = matcher;
  } else if (namespaceObjects.size > 1) {
    throw new BuiltinConfigError(
      `cannot accept more than one Namespace objects from the input resources, found ${[...namespaceObjects.keys()].sort().join(', ')}`,
    );
  } else if (namespaceObjects.size === 1) {
    const [name, count] = [...namespaceObjects.entries()][0] as [string, number];
    if (count > 1) throw new BuiltinConfigError(`found more than one Namespace objects of the same name ${name}`);
    oldNs = name;
  } else if (seen.size > 1) {
    throw new BuiltinConfigError(
      `all input namespace-scoped resources should be under the same namespace but found different namespaces: ${[...seen].sort().join(',')}`,
    );
  } else oldNs = [...seen][0];

  if (oldNs !== undefined) {
    // depends-on references are updated only for resources declared in the package
    const declared = new Set(refs.filter((r) => r.refs.length > 0).map(({ item }) => dependsOnKey(item)));
    for (const { item, refs: rs } of refs) {
      for (const r of rs) if (r.scalar.value === oldNs) r.scalar.value = newNs;
      if (rs.length === 0) continue;
      const dep = stringMap(item.doc, 'annotations')[DEPENDS_ON];
      const m = dep === undefined ? null : DEPENDS_ON_NAMESPACED.exec(dep);
      if (m && m[2] === oldNs && declared.has(`${m[1]}/${m[3]}/${m[4]}`)) {
        item.doc.setIn(['metadata', 'annotations', DEPENDS_ON], `${m[1]}/namespaces/${newNs}/${m[3]}/${m[4]}`);
      }
    }
  }
  return { results: [{ message: 'namespace updated', severity: 'info' }] };
};

function dependsOnKey(item: Item): string {
  const id = identity(item.doc);
  return `${groupOf(id.apiVersion)}/${id.kind}/${id.name}`;
}
