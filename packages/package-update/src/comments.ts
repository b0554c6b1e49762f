import { type PackageView, addMergeComments } from '@kdelta/kptfile-model';
import { isKrmPath } from './kptfile.js';

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
 * `pkg` and of the packages nested in it, in memory. Every file is marked before any is changed:
 * an error leaves the tree as it was.
 */
export function addMergeCommentsToTree(pkg: PackageView): void {
  const files: { path: string; text: string }[] = [];
  const walk = (rel: string) => {
    for (const name of pkg.list(rel)) {
      const r = rel ? `${rel}/${name}` : name;
      const type = pkg.typeOf(r);
      if (type === 'dir') walk(r);
      else if (type === 'file' && isKrmPath(r)) files.push({ path: r, text: pkg.yamlText(r)! });
    }
  };
  if (pkg.exists()) walk('');
  const marked = files.map((f) => ({ ...f, next: alreadyMarked(f.text) ? f.text : addMergeComments(f.text) }));
  for (const f of marked) if (f.next !== f.text) pkg.write(f.path, f.next);
}
