import { createHash } from 'node:crypto';

/** Kubernetes object names are at most 63 characters for the names Porch generates. */
export const MAX_VARIANT_NAME_LENGTH = 63;

/** Porch's identifier of a generated variant: `<set>-<downstream repo>-<downstream package>`. */
export function variantIdentifier(setName: string, repo: string, pkg: string): string {
  return `${setName}-${repo}-${pkg}`;
}

/**
 * The name Porch gives a generated PackageVariant: the identifier when it fits in 63 characters,
 * else its first 54 characters, `-`, and the first 8 hex digits of its SHA-1. Same inputs, same name.
 */
export function variantName(identifier: string): string {
  if (identifier.length <= MAX_VARIANT_NAME_LENGTH) return identifier;
  const hash = createHash('sha1').update(identifier).digest('hex').slice(0, 8);
  return `${identifier.slice(0, 54)}-${hash}`;
}
