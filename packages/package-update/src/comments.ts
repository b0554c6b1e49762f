import { KRMIGNORE_FILE, type KrmIgnore, type PackageView, addMergeCommentsIdentified, parseKrmIgnore } from '@kdelta/kptfile-model';
import type { IdentifiedDocument } from '@kdelta/merge-core';
import { KPTFILE, isKrmPath } from './kptfile.js';

/** Every document of the file already has its merge comment and identifier (cheap text check). */
function alreadyMarked(text: string): boolean {
  const kinds = text.match(/^kind:/gm)?.length ?? 0;
  if (kinds === 0) return false;
  const comments = text.match(/^metadata:\s*#\s*kpt-merge:/gm)?.length ?? 0;
  const ids = text.match(/internal\.kpt\.dev\/upstream-identifier:/g)?.length ?? 0;
  return comments === kinds && ids === kinds;
}

/**
 * Adds `# kpt-merge:` comments and upstream-identifier annotations to every resource file of
 * `pkg` and of the packages nested in it, in memory; a file its package's `.krmignore` names is no
 * resource and keeps its bytes. Every file is marked before any is changed: an error leaves the
 * tree as it was. `identified` gets each marked text's documents as the merge identifies them,
 * where the marking's scan told (the merge then reads them from there instead of scanning again).
 */
export function addMergeCommentsToTree(pkg: PackageView, identified?: Map<string, readonly IdentifiedDocument[]>): void {
  const files: { path: string; text: string }[] = [];
  const ignoreOf = (root: string): KrmIgnore | undefined => {
    const text = pkg.text(root ? `${root}/${KRMIGNORE_FILE}` : KRMIGNORE_FILE);
    return text === undefined ? undefined : parseKrmIgnore(text);
  };
  /** `root`: the package `rel` is in, whose `.krmignore` speaks of paths relative to it. */
  const walk = (rel: string, root: string, ignore: KrmIgnore | undefined) => {
    for (const name of pkg.list(rel)) {
      const r = rel ? `${rel}/${name}` : name;
      const type = pkg.typeOf(r);
      if (type === 'dir') {
        const nested = pkg.typeOf(`${r}/${KPTFILE}`) === 'file';
        walk(r, nested ? r : root, nested ? ignoreOf(r) : ignore);
      } else if (type === 'file' && isKrmPath(r) && !ignore?.ignores(root ? r.slice(root.length + 1) : r))
        files.push({ path: r, text: pkg.yamlText(r)! });
    }
  };
  if (pkg.exists()) walk('', '', ignoreOf(''));
  const marked = files.map((f) => {
    if (alreadyMarked(f.text)) return { ...f, next: f.text };
    const { text, documents } = addMergeCommentsIdentified(f.text);
    if (documents && identified) identified.set(text, documents);
    return { ...f, next: text };
  });
  for (const f of marked) if (f.next !== f.text) pkg.write(f.path, f.next);
}
