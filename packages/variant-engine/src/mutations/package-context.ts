import { isMap, isPair, isScalar, type Pair } from 'yaml';
import type { PackageVariant } from '../api/types.js';
import { PACKAGE_CONTEXT_FILE, PACKAGE_CONTEXT_NAME } from '@kdelta/kptfile-model';
import { type PackageDocuments, VariantMutationError, stringAt } from './package-files.js';

export { PACKAGE_CONTEXT_FILE, PACKAGE_CONTEXT_NAME };

/**
 * Porch's `ensurePackageContext`: set every `spec.packageContext.data` key in the `kptfile.kpt.dev`
 * ConfigMap of `package-context.yaml` (existing keys keep their place, new keys are appended in
 * sorted order), then delete every `removeKeys` entry. A no-op without data or removeKeys; otherwise
 * a missing file, ConfigMap or `data` field is an error.
 */
export function ensurePackageContext(pkg: PackageDocuments, pv: PackageVariant, packageName = ''): void {
  const ctx = pv.spec?.packageContext;
  const data = ctx?.data ?? {};
  const removeKeys = ctx?.removeKeys ?? [];
  if (Object.keys(data).length === 0 && removeKeys.length === 0) return;
  const where = packageName ? ` in package '${packageName}'` : '';
  if (!pkg.has(PACKAGE_CONTEXT_FILE)) {
    throw new VariantMutationError(
      'missing-file',
      `${PACKAGE_CONTEXT_FILE}: not found${where}; spec.packageContext needs its "${PACKAGE_CONTEXT_NAME}" ConfigMap`,
      PACKAGE_CONTEXT_FILE,
    );
  }
  const docs = pkg.documents(PACKAGE_CONTEXT_FILE);
  const configMaps = docs.filter((d) => isMap(d.contents) && d.get('kind') === 'ConfigMap');
  if (configMaps.length === 0) {
    throw new VariantMutationError(
      'invalid-package-context',
      `${PACKAGE_CONTEXT_FILE}: does not contain kind "ConfigMap"${where}`,
      PACKAGE_CONTEXT_FILE,
    );
  }
  const cm = configMaps.find((d) => stringAt(d.getIn(['metadata', 'name'], true)) === PACKAGE_CONTEXT_NAME);
  if (!cm) {
    throw new VariantMutationError(
      'invalid-package-context',
      `${PACKAGE_CONTEXT_FILE}: does not contain resource named "${PACKAGE_CONTEXT_NAME}"${where}`,
      PACKAGE_CONTEXT_FILE,
    );
  }
  const dataNode = cm.get('data', true);
  if (!isMap(dataNode)) {
    throw new VariantMutationError(
      'invalid-package-context',
      `${PACKAGE_CONTEXT_FILE}: ConfigMap "${PACKAGE_CONTEXT_NAME}" has no data field`,
      PACKAGE_CONTEXT_FILE,
      '.data',
    );
  }
  const keyOf = (p: Pair) => (isScalar(p.key) ? String(p.key.value) : String(p.key));
  const added: string[] = [];
  for (const key of Object.keys(data)) {
    const pair = dataNode.items.find((p) => isPair(p) && keyOf(p) === key);
    if (pair) {
      if (isScalar(pair.value)) pair.value.value = data[key];
      else pair.value = cm.createNode(data[key]);
    } else {
      added.push(key);
    }
  }
  for (const key of added.sort()) dataNode.set(cm.createNode(key), cm.createNode(data[key]));
  for (const key of removeKeys) {
    const i = dataNode.items.findIndex((p) => keyOf(p) === key);
    if (i >= 0) dataNode.items.splice(i, 1);
  }
}
