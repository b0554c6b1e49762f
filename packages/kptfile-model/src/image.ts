/**
 * Container image references (the OCI distribution grammar kpt checks function images with):
 * `[domain[:port]/]path[:tag][@digest]`, lower-case path components.
 */

const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domainName = `${domainComponent}(?:\\.${domainComponent})*`;
const ipv6 = '\\[(?:[a-fA-F0-9:]+)\\]';
const domain = `(?:${domainName}|${ipv6})(?::[0-9]+)?`;
const name = `(?:${domain}/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const reference = new RegExp(`^(${name})(?::(${tag}))?(?:@(${digest}))?$`);

export interface ImageReference {
  /** Everything before the tag and digest, registry port included: `localhost:5000/fn`. */
  readonly name: string;
  readonly tag?: string;
  readonly digest?: string;
}

const MAX_NAME_LENGTH = 255;

/** Parses an image reference, or returns a reason it is not one. */
export function parseImageReference(image: string): ImageReference | { error: string } {
  if (image === '') return { error: 'image reference is empty' };
  const m = reference.exec(image);
  if (!m) {
    return {
      error:
        'not a valid image reference (expected [registry[:port]/]name[:tag][@digest] with a lower-case name, ' +
        'e.g. ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2)',
    };
  }
  const [, n = '', t, d] = m;
  if (n.length > MAX_NAME_LENGTH) return { error: `image name is longer than ${MAX_NAME_LENGTH} characters` };
  return { name: n, ...(t !== undefined ? { tag: t } : {}), ...(d !== undefined ? { digest: d } : {}) };
}

/** `undefined` when the image reference is valid, else the reason. */
export function validateImageReference(image: string): string | undefined {
  const r = parseImageReference(image);
  return 'error' in r ? r.error : undefined;
}

/**
 * The image without its tag and digest. A colon inside the registry part is a port, not a tag:
 * `localhost:5000/fn:v1` → `localhost:5000/fn`. Works on references the grammar rejects too
 * (the merge must still key them), by cutting at the last `:` after the last `/`.
 */
export function imageWithoutTag(image: string): string {
  const at = image.indexOf('@');
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}
