/**
 * Which container images a render may run. A pipeline's `image:` is named by the package's author
 * (an upstream, a pull request under review), and a container runs with the runner's network
 * configuration, CPU and disk: only images from registries the user allows run. The default is
 * kpt's function catalogues.
 */
import { imageWithoutTag, parseImageReference } from '@kdelta/kptfile-model';

/** kpt's function catalogues: where kpt's own documentation and `kpt fn` take functions from. */
export const DEFAULT_ALLOWED_IMAGES: readonly string[] = ['gcr.io/kpt-fn/', 'ghcr.io/kptdev/krm-functions-catalog/'];

/** The pattern that allows every image. */
export const ANY_IMAGE = '*';

/**
 * `undefined` when `pattern` is an allowed-images pattern, else the reason. A pattern is `*`, a
 * prefix ending in `/` (`gcr.io/kpt-fn/`, `registry.example:5000/`), or an image name with or
 * without its tag or digest (`ghcr.io/acme/fn`, `ghcr.io/acme/fn:v1`).
 */
export function imagePatternProblem(pattern: string): string | undefined {
  if (pattern === ANY_IMAGE) return undefined;
  const example = 'e.g. gcr.io/kpt-fn/, ghcr.io/acme/set-team, or * for any image';
  if (pattern.trim() === '') return `an image pattern is empty (${example})`;
  if (pattern.endsWith('/')) {
    // a prefix: what follows it must make an image name, and it holds no tag or digest
    const r = parseImageReference(`${pattern}fn`);
    return 'error' in r || r.tag !== undefined || r.digest !== undefined
      ? `${JSON.stringify(pattern)} is not a registry or repository prefix (${example})`
      : undefined;
  }
  return 'error' in parseImageReference(pattern) ? `${JSON.stringify(pattern)} is not an image name (${example})` : undefined;
}

/**
 * Whether `image` (as it runs: a catalogue short name already made `gcr.io/kpt-fn/<name>`) is
 * allowed by one of `patterns`. A prefix ending in `/` allows what starts with it; a name allows
 * that repository at any tag or digest, and what lies below it (`gcr.io` is `gcr.io/…`, never
 * `gcr.io.example.com/…` nor `gcr.io:8443/…`); a tagged name allows that tag only. An image that is
 * not a valid reference is never allowed: what the container runtime would make of it is its own.
 */
export function imageAllowed(image: string, patterns: readonly string[]): boolean {
  const ref = parseImageReference(image);
  if ('error' in ref) return false;
  return patterns.some((pattern) => {
    if (pattern === ANY_IMAGE) return true;
    if (pattern.endsWith('/')) return image.startsWith(pattern);
    const p = parseImageReference(pattern);
    if ('error' in p) return false;
    if (p.digest !== undefined) return image === pattern;
    // a tag pinned, with or without the digest it has
    if (p.tag !== undefined) return image === pattern || image.startsWith(`${pattern}@`);
    return ref.name === pattern || image.startsWith(`${pattern}/`);
  });
}

/** The pattern a user would add to allow `image`: its repository, at any tag. */
export function allowanceFor(image: string): string {
  return imageWithoutTag(image);
}
