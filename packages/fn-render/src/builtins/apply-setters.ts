/**
 * apply-setters (catalog v0.2): fields marked with a `# kpt-set: <pattern>` line comment take the
 * pattern with every `${setter}` replaced by the setter's value from the ConfigMap's `data`. A
 * field whose pattern names a setter without a value is left alone. A list marked
 * `# kpt-set: ${name}` takes the setter's value read as a YAML list.
 */
import { parseYamlDocument } from '@kdelta/kptfile-model';
import { isMap, isScalar, isSeq, type Document, type Node } from 'yaml';
import { BuiltinConfigError, resultFor, setScalarText, stringData, type Builtin } from './fields.js';
import type { KrmResult } from '../results.js';

const MARKER = /^\s*kpt-set:\s*(.+?)\s*$/;
const SETTER = /\$\{([^}]+)\}/g;

function setterPattern(comment: string | null | undefined): string | undefined {
  if (!comment) return undefined;
  for (const line of comment.split('\n')) {
    const m = MARKER.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/** The pattern with its setters filled in, or undefined when one has no value. */
function expand(pattern: string, values: Record<string, string>): string | undefined {
  let missing = false;
  const out = pattern.replace(SETTER, (_, name: string) => {
    const v = values[name];
    if (v === undefined) missing = true;
    return v ?? '';
  });
  return missing ? undefined : out;
}

export const applySetters: Builtin = ({ items, config }) => {
  if (config === undefined)
    throw new BuiltinConfigError('failed to configure function: a ConfigMap functionConfig with the setter values is required');
  const values = stringData(config);
  const results: KrmResult[] = [];
  for (const item of items) {
    const visit = (node: Node | null | undefined, path: string, keyComment?: string | null) => {
      if (isScalar(node)) {
        const pattern = setterPattern(node.comment) ?? setterPattern(keyComment);
        if (pattern === undefined) return;
        const next = expand(pattern, values);
        if (next === undefined || String(node.value ?? '') === next) return;
        setScalarText(node, next);
        results.push(resultFor(item, `set field value to ${JSON.stringify(next)}`, 'info', path));
      } else if (isSeq(node)) {
        const pattern = setterPattern(node.commentBefore) ?? setterPattern(keyComment);
        const whole = pattern === undefined ? undefined : /^\$\{([^}]+)\}$/.exec(pattern);
        if (whole) {
          const v = values[whole[1] as string];
          if (v !== undefined) {
            const parsed = parseYamlDocument(v).contents;
            if (!isSeq(parsed))
              throw new BuiltinConfigError(
                `setter ${JSON.stringify(whole[1])} marks the list ${path} of ${item.path}: its value must be a YAML list`,
              );
            const before = JSON.stringify(node.toJSON());
            node.items = parsed.items;
            if (JSON.stringify(node.toJSON()) !== before)
              results.push(resultFor(item, `set field value to ${JSON.stringify(v.trim())}`, 'info', path));
            return;
          }
        }
        node.items.forEach((el, i) => visit(el as Node, `${path}[${i}]`));
      } else if (isMap(node)) {
        for (const pair of node.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
          visit(pair.value as Node, path === '' ? key : `${path}.${key}`, isScalar(pair.key) ? pair.key.comment : undefined);
        }
      }
    };
    visit((item.doc as Document).contents as Node, '');
  }
  return { results };
};
