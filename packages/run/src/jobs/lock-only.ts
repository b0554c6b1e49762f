import { parseYamlDocument } from '@kdelta/merge-core';

/**
 * Whether a package's new content differs from its content on the base branch only in where its
 * Kptfile says it comes from (`upstream.git.ref`, `upstreamLock`): the upstream commit moved and
 * nothing of the package did (a release of another package of the same repository, a pull
 * request that touches other packages). A run still proposes the new lock, as kpt records it; a
 * preview reports such a package as not changed by the change under review.
 */
export function changesLockOnly(base: ReadonlyMap<string, string>, next: ReadonlyMap<string, string>): boolean {
  const paths = new Set([...base.keys(), ...next.keys()]);
  let kptfileDiffers = false;
  for (const path of paths) {
    if (base.get(path) === next.get(path)) continue;
    if (path !== 'Kptfile') return false;
    kptfileDiffers = true;
  }
  if (!kptfileDiffers) return false;
  const withoutLock = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    const doc = parseYamlDocument(text);
    if (doc.errors.length > 0) return undefined;
    for (const path of [
      ['upstream', 'git', 'ref'],
      ['upstreamLock', 'git', 'ref'],
      ['upstreamLock', 'git', 'commit'],
    ])
      if (doc.hasIn(path)) doc.deleteIn(path);
    return JSON.stringify(doc.toJS());
  };
  const before = withoutLock(base.get('Kptfile'));
  return before !== undefined && before === withoutLock(next.get('Kptfile'));
}
