/**
 * Kubernetes version order (the order kubectl and the API server use): GA before beta before
 * alpha, higher numbers first; anything else last, alphabetically. `v1 > v1beta2 > v1beta1 >
 * v1alpha1`, `v2 > v1`.
 */
const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Negative when `a` is newer (sorts first), positive when `b` is newer. */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const stage = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  return stage(mb) - stage(ma) || Number(mb[1]) - Number(ma[1]) || Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

/** The entry for `wanted` when there is one, else the newest version's. */
export function pickVersion<T>(versions: readonly (readonly [string, T])[], wanted: string): T | undefined {
  let best: readonly [string, T] | undefined;
  for (const entry of versions) {
    if (entry[0] === wanted) return entry[1];
    if (!best || compareKubeVersions(entry[0], best[0]) < 0) best = entry;
  }
  return best?.[1];
}

/** Splits `apps/v1` into group `apps`, version `v1`; `v1` is the core group ''. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
