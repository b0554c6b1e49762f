/**
 * search-replace (catalog v0.2): finds fields by `by-path` (`a.b[1].c`, `*` one key, `[*]` any
 * list element, `**` any depth), `by-value`, `by-value-regex` (the whole value) and
 * `by-file-path` (a glob), all AND'ed; then `put-value` sets them (regex groups as `${1}`) or
 * `put-comment` sets their line comment. A plain `by-path` with `put-value` also creates the field
 * where it is missing. Every match is reported.
 */
import { isMap, isScalar, isSeq, type Node, type Scalar } from 'yaml';
import { BuiltinConfigError, resultFor, setScalarText, stringData, type Builtin } from './fields.js';
import type { KrmResult } from '../results.js';

const MATCHERS = ['by-path', 'by-value', 'by-value-regex', 'by-file-path'];
const PUTS = ['put-value', 'put-comment'];

function tokens(path: string): string[] {
  const out: string[] = [];
  for (const part of path.split('.')) {
    const m = /^([^[]*)((?:\[[^\]]*\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1] !== '') out.push(m[1] as string);
    for (const idx of (m[2] ?? '').match(/\[[^\]]*\]/g) ?? []) out.push(idx);
  }
  return out;
}

function pathMatches(pattern: readonly string[], path: readonly string[]): boolean {
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    let r: boolean;
    if (i === pattern.length) r = j === path.length;
    else {
      const p = pattern[i] as string;
      if (p === '**') r = go(i + 1, j) || (j < path.length && go(i, j + 1));
      else if (j === path.length) r = false;
      else {
        const t = path[j] as string;
        const isIndex = t.startsWith('[');
        const one = p === '*' ? !isIndex : p === '[*]' ? isIndex : p === t;
        r = one && go(i + 1, j + 1);
      }
    }
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export const searchReplace: Builtin = ({ items, config }) => {
  const data = stringData(config);
  if (!MATCHERS.some((m) => data[m] !== undefined && data[m] !== '')) {
    throw new BuiltinConfigError(`at least one of [${MATCHERS.join(', ')}] must be provided`);
  }
  if (PUTS.filter((p) => data[p] !== undefined).length > 1)
    throw new BuiltinConfigError('only one of [put-value, put-comment] can be provided');
  const byPath = data['by-path'] ? tokens(data['by-path']) : undefined;
  const byValue = data['by-value'];
  let byRegex: RegExp | undefined;
  if (data['by-value-regex'] !== undefined) {
    try {
      byRegex = new RegExp(`^(?:${data['by-value-regex']})$`);
    } catch (e) {
      throw new BuiltinConfigError(`by-value-regex is not a valid regular expression: ${(e as Error).message}`);
    }
  }
  const byFile = data['by-file-path'] ? globToRegExp(data['by-file-path']) : undefined;
  const putValue = data['put-value'];
  const putComment = data['put-comment'];
  const fill = (pattern: string, groups: RegExpExecArray | null) =>
    groups ? pattern.replace(/\$\{(\d+)\}/g, (_, n: string) => groups[Number(n)] ?? '') : pattern;

  const results: KrmResult[] = [];
  for (const item of items) {
    if (byFile && !byFile.test(item.path)) continue;
    const onMatch = (node: Scalar, path: string, groups: RegExpExecArray | null) => {
      if (putValue !== undefined) {
        const next = fill(putValue, groups);
        setScalarText(node, next);
        results.push(resultFor(item, `Mutated field value to ${JSON.stringify(next)}`, 'info', path));
      } else if (putComment !== undefined) {
        node.comment = ` ${fill(putComment, groups)}`;
        results.push(
          resultFor(
            item,
            `Added line comment ${JSON.stringify(fill(putComment, groups))} for field with value ${JSON.stringify(String(node.value))}`,
            'info',
            path,
          ),
        );
      } else results.push(resultFor(item, 'Matched field', 'info', path));
    };
    const walk = (node: Node | null | undefined, path: string[]) => {
      if (isMap(node)) {
        for (const pair of node.items) walk(pair.value as Node, [...path, isScalar(pair.key) ? String(pair.key.value) : String(pair.key)]);
      } else if (isSeq(node)) {
        node.items.forEach((el, i) => walk(el as Node, [...path, `[${i}]`]));
      } else if (isScalar(node)) {
        if (byPath && !pathMatches(byPath, path)) return;
        const text = node.value === null ? '' : String(node.value);
        if (byValue !== undefined && text !== byValue) return;
        const groups = byRegex ? byRegex.exec(text) : null;
        if (byRegex && !groups) return;
        onMatch(node, path.join('.').replace(/\.\[/g, '['), groups);
      }
    };
    walk(item.doc.contents as Node, []);
    // a plain path (keys only) with put-value creates the field where it is missing
    const plainPath = byPath?.every((t) => t !== '*' && t !== '**' && !t.startsWith('['));
    if (plainPath && byPath && putValue !== undefined && byValue === undefined && !byRegex && !item.doc.hasIn(byPath)) {
      item.doc.setIn(byPath, putValue);
      const n = item.doc.getIn(byPath, true);
      if (isScalar(n)) setScalarText(n, putValue);
      results.push(resultFor(item, `Mutated field value to ${JSON.stringify(putValue)}`, 'info', byPath.join('.')));
    }
  }
  return { results };
};
