/**
 * `.krmignore`: gitignore-style patterns (at the package root) for files kpt does not read as
 * resources. Supported: comments, blank lines, `!` negation, `/` anchoring, a trailing `/` for
 * directories only, `*`, `?`, `**`, and `\` escapes.
 */

export const KRMIGNORE_FILE = '.krmignore';

interface Rule {
  negate: boolean;
  dirOnly: boolean;
  regex: RegExp;
}

function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) {
      out += (glob[++i] as string).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (c === '*') {
      if (glob[i + 1] === '*') {
        const slashAfter = glob[i + 2] === '/';
        out += slashAfter ? '(?:.*/)?' : '.*';
        i += slashAfter ? 2 : 1;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return out;
}

export interface KrmIgnore {
  /** Whether a package-relative path (posix) is ignored; `isDir` for directories. */
  ignores(path: string, isDir?: boolean): boolean;
}

export function parseKrmIgnore(text: string): KrmIgnore {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith('/')) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    const anchored = line.startsWith('/') || line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    const body = globToRegex(line);
    rules.push({ negate, dirOnly, regex: new RegExp(`^${anchored ? '' : '(?:.*/)?'}${body}$`) });
  }
  const matches = (path: string, isDir: boolean): boolean => {
    let ignored = false;
    for (const r of rules) {
      if (r.dirOnly && !isDir) continue;
      if (r.regex.test(path)) ignored = !r.negate;
    }
    return ignored;
  };
  return {
    ignores(path: string, isDir = false): boolean {
      // A file inside an ignored directory is ignored too.
      const parts = path.split('/');
      for (let i = 1; i < parts.length; i++) if (matches(parts.slice(0, i).join('/'), true)) return true;
      return matches(path, isDir);
    },
  };
}
