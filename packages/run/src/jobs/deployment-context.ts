import { posix } from 'node:path';
import { editPackageContext, isPackageContext, PACKAGE_CONTEXT_FILE, packageContextConfigMap } from '@kdelta/kptfile-model';
import { parseYamlStream } from '@kdelta/merge-core';

/**
 * The package context of a package in a deployment repository (Porch's Repository
 * `spec.deployment: true`), as `kpt pkg get --for-deployment` and Porch, cloning into such a
 * repository, write it: every package (the package and each subpackage, found by its Kptfile)
 * holds `package-context.yaml` with the `kptfile.kpt.dev` ConfigMap whose `data.name` is that
 * package's name: the downstream package's name for the package itself, its Kptfile's
 * `metadata.name` for a subpackage (as kpt names them). Upstream's own context is a blueprint's
 * placeholder (Nephio's say `name: example`, and their pipelines render into that namespace):
 * its `data.name` is replaced; its other keys and comments stay, as Porch adds the `name` key to the
 * ConfigMap that exists.
 */

/** A Kptfile's `metadata.name`, if it has one. */
function kptfileName(text: string): string | undefined {
  const [doc] = parseYamlStream(text);
  const name = doc && doc.errors.length === 0 ? doc.getIn(['metadata', 'name']) : undefined;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/**
 * The package-context files of a package new in a deployment repository, written or renamed:
 * path → text, for the files that change (none when every context already names its package).
 * `files` are the package's, by path relative to it; `packageName` is the downstream package's.
 */
export function deploymentPackageContexts(files: ReadonlyMap<string, string>, packageName: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, text] of files) {
    if (posix.basename(path) !== 'Kptfile') continue;
    const dir = posix.dirname(path);
    const name = dir === '.' ? packageName : kptfileName(text);
    if (name === undefined) continue;
    const contextPath = dir === '.' ? PACKAGE_CONTEXT_FILE : `${dir}/${PACKAGE_CONTEXT_FILE}`;
    const context = files.get(contextPath);
    if (context === undefined) {
      out.set(contextPath, packageContextConfigMap(name));
      continue;
    }
    // a file that is not one package-context ConfigMap is someone's own: left as it is
    const docs = parseYamlStream(context);
    if (docs.length !== 1 || docs[0]!.errors.length > 0) continue;
    const object: unknown = docs[0]!.toJS();
    if (object === null || typeof object !== 'object' || !isPackageContext(object as Record<string, unknown>)) continue;
    const renamed = editPackageContext(context, { set: { name } });
    if (renamed !== context) out.set(contextPath, renamed);
  }
  return out;
}
