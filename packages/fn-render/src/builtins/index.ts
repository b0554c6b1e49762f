/**
 * kdelta's own implementations of the catalog functions people put in pipelines, chosen for an
 * `image:` of the catalog (matched by name, whatever the tag or digest) when no container runtime
 * runs it or when asked for.
 */
import { imageWithoutTag } from '@kdelta/kptfile-model';
import { applyReplacements } from './apply-replacements.js';
import { applySetters } from './apply-setters.js';
import type { Builtin } from './fields.js';
import { searchReplace } from './search-replace.js';
import { setAnnotations } from './set-annotations.js';
import { setImage } from './set-image.js';
import { setLabels } from './set-labels.js';
import { setNamespace } from './set-namespace.js';

export const BUILTINS: Readonly<Record<string, Builtin>> = {
  'set-namespace': setNamespace,
  'set-labels': setLabels,
  'set-annotations': setAnnotations,
  'apply-setters': applySetters,
  'search-replace': searchReplace,
  'set-image': setImage,
  'apply-replacements': applyReplacements,
};

/** Where the catalog's images are published. */
const CATALOG_REGISTRIES = ['gcr.io/kpt-fn/', 'ghcr.io/kptdev/krm-functions-catalog/', 'ghcr.io/kpt-dev/krm-functions-catalog/'];

/** The catalog function an image runs (`gcr.io/kpt-fn/set-namespace:v0.4.1` → `set-namespace`), if kdelta has it. */
export function builtinName(image: string): string | undefined {
  const name = imageWithoutTag(image);
  const registry = CATALOG_REGISTRIES.find((r) => name.startsWith(r));
  if (!registry) return undefined;
  const fn = name.slice(registry.length);
  return Object.hasOwn(BUILTINS, fn) ? fn : undefined;
}

export { BuiltinConfigError, type Builtin, type BuiltinInput, type BuiltinOutput } from './fields.js';
