/**
 * Strict decoding of a Kptfile YAML node into the typed model: unknown fields and wrong types
 * are issues naming the field path (kpt decodes with "known fields" too).
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { joinField, type KptfileIssue } from './errors.js';
import { ORIGIN_TYPES, UPDATE_STRATEGIES, type Kptfile } from './types.js';

type Spec =
  | { t: 'string' }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'stringMap' }
  | { t: 'any' }
  | { t: 'list'; of: Spec }
  | { t: 'object'; fields: Record<string, Spec> };

const str: Spec = { t: 'string' };
const strMap: Spec = { t: 'stringMap' };
const obj = (fields: Record<string, Spec>): Spec => ({ t: 'object', fields });
const list = (of: Spec): Spec => ({ t: 'list', of });

const selector = obj({ apiVersion: str, kind: str, name: str, namespace: str, labels: strMap, annotations: strMap });
const fn = obj({
  image: str,
  exec: str,
  configPath: str,
  configMap: strMap,
  name: str,
  selectors: list(selector),
  exclude: list(selector),
});
const git = obj({ repo: str, directory: str, ref: str });
const gitLock = obj({ repo: str, directory: str, ref: str, commit: str });

export const KPTFILE_SPEC: Spec = obj({
  apiVersion: str,
  kind: str,
  metadata: obj({ name: str, namespace: str, labels: strMap, annotations: strMap }),
  upstream: obj({ type: { t: 'enum', values: ORIGIN_TYPES }, git, updateStrategy: { t: 'enum', values: UPDATE_STRATEGIES } }),
  upstreamLock: obj({ type: { t: 'enum', values: ORIGIN_TYPES }, git: gitLock }),
  info: obj({
    site: str,
    emails: list(str),
    license: str,
    licenseFile: str,
    description: str,
    keywords: list(str),
    man: str,
    readinessGates: list(obj({ conditionType: str })),
  }),
  pipeline: obj({ mutators: list(fn), validators: list(fn) }),
  inventory: obj({ namespace: str, name: str, inventoryID: str, labels: strMap, annotations: strMap }),
  status: obj({
    conditions: list(obj({ type: str, status: { t: 'enum', values: ['True', 'False', 'Unknown'] }, reason: str, message: str })),
    // what `kpt fn render` records about its last run: kpt's to write, kept as it is
    renderStatus: { t: 'any' },
  }),
});

function describe(node: unknown): string {
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return `${JSON.stringify(node.value)}`;
  return 'nothing';
}

/** A scalar's text as a string field sees it: `1.10` stays `1.10`, not `1.1`. */
function scalarString(node: Node): string | undefined {
  if (!isScalar(node)) return undefined;
  const v = node.value;
  if (typeof v === 'string') return v;
  if (v === null) return undefined;
  const src = (node as { source?: unknown }).source;
  return typeof src === 'string' ? src : String(v);
}

function isNull(node: unknown): boolean {
  return node == null || (isScalar(node) && node.value === null);
}

function decodeValue(node: Node, spec: Spec, field: string, file: string, issues: KptfileIssue[]): unknown {
  const wrong = (expected: string): undefined => {
    issues.push({ code: 'wrong-type', file, field, message: `expected ${expected}, got ${describe(node)}` });
    return undefined;
  };
  switch (spec.t) {
    case 'any':
      return node.toJSON();
    case 'string': {
      const s = scalarString(node);
      return s === undefined ? wrong('a string') : s;
    }
    case 'enum': {
      const s = scalarString(node);
      if (s === undefined) return wrong(`one of ${spec.values.join(', ')}`);
      if (!spec.values.includes(s)) {
        issues.push({
          code: 'invalid-value',
          file,
          field,
          message: `unknown value ${JSON.stringify(s)} (expected one of ${spec.values.join(', ')})`,
        });
        return undefined;
      }
      return s;
    }
    case 'stringMap': {
      if (!isMap(node)) return wrong('a map of strings');
      const out: Record<string, string> = {};
      for (const pair of node.items) {
        const key = scalarString(pair.key as Node);
        if (key === undefined) {
          issues.push({ code: 'wrong-type', file, field, message: 'map keys must be strings' });
          continue;
        }
        if (isNull(pair.value)) {
          out[key] = '';
          continue;
        }
        const v = scalarString(pair.value as Node);
        if (v === undefined) {
          issues.push({
            code: 'wrong-type',
            file,
            field: joinField(field, key),
            message: `expected a string, got ${describe(pair.value)}`,
          });
          continue;
        }
        out[key] = v;
      }
      return out;
    }
    case 'list': {
      if (!isSeq(node)) return wrong('a list');
      const out: unknown[] = [];
      node.items.forEach((item, i) => {
        const f = joinField(field, i);
        if (isNull(item)) {
          issues.push({ code: 'wrong-type', file, field: f, message: 'list item is empty' });
          return;
        }
        const v = decodeValue(item as Node, spec.of, f, file, issues);
        if (v !== undefined) out.push(v);
      });
      return out;
    }
    case 'object': {
      if (!isMap(node)) return wrong('a map');
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        const key = scalarString(pair.key as Node);
        if (key === undefined) {
          issues.push({ code: 'wrong-type', file, field, message: 'map keys must be strings' });
          continue;
        }
        const f = joinField(field, key);
        const sub = spec.fields[key];
        if (!sub) {
          issues.push({
            code: 'unknown-field',
            file,
            field: f,
            message: `unknown field (expected one of ${Object.keys(spec.fields).join(', ')})`,
          });
          continue;
        }
        if (isNull(pair.value)) continue;
        const v = decodeValue(pair.value as Node, sub, f, file, issues);
        if (v !== undefined) out[key] = v;
      }
      return out;
    }
  }
}

/** Decodes a Kptfile document's root node. Issues are appended to `issues`. */
export function decodeKptfileNode(node: Node | null | undefined, file: string, issues: KptfileIssue[]): Kptfile {
  if (isNull(node)) return {};
  if (!isMap(node)) {
    issues.push({ code: 'not-a-map', file, field: '', message: `a Kptfile must be a YAML map, got ${describe(node)}` });
    return {};
  }
  return (decodeValue(node as Node, KPTFILE_SPEC, '', file, issues) ?? {}) as Kptfile;
}
